import Foundation
import Glibc

/// Runs programs for tests and collects their output *while* they run (a child that writes
/// more than a pipe holds, 64 KiB, would otherwise block forever).
public enum Shell {
  /// What a finished process did.
  public struct Result: Sendable {
    /// The exit status, or 128 + the signal number when a signal ended it (as a shell shows).
    public var status: Int32
    /// The signal that ended it, if one did.
    public var signal: Int32?
    /// Everything written to stdout.
    public var stdout: [UInt8]
    /// Everything written to stderr.
    public var stderr: [UInt8]
    /// stdout as text (invalid UTF-8 repaired).
    public var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    /// stderr as text (invalid UTF-8 repaired).
    public var stderrText: String { String(decoding: stderr, as: UTF8.self) }
  }

  /// Runs `executable` with `arguments`, feeding `input` on stdin, and waits for it.
  ///
  /// - Parameters:
  ///   - environment: replaces the environment when given.
  ///   - currentDirectory: the child's working folder.
  ///   - onStart: called with the child's pid right after it started (to signal it).
  @discardableResult
  public static func run(
    _ executable: String, _ arguments: [String], input: [UInt8]? = nil,
    environment: [String: String]? = nil, currentDirectory: String? = nil,
    onStart: (@Sendable (Int32) -> Void)? = nil
  ) throws -> Result {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let environment { process.environment = environment }
    if let currentDirectory { process.currentDirectoryURL = URL(fileURLWithPath: currentDirectory) }
    let stdout = Pipe()
    let stderr = Pipe()
    let stdin = Pipe()
    process.standardOutput = stdout
    process.standardError = stderr
    process.standardInput = input == nil ? FileHandle.nullDevice : stdin
    try process.run()
    onStart?(process.processIdentifier)
    let collected = Collected()
    let group = DispatchGroup()
    for (handle, isError) in [
      (stdout.fileHandleForReading, false), (stderr.fileHandleForReading, true),
    ] {
      group.enter()
      DispatchQueue.global().async {
        let data = handle.readDataToEndOfFile()
        collected.store(Array(data), isError: isError)
        group.leave()
      }
    }
    if let input {
      group.enter()
      DispatchQueue.global().async {
        let handle = stdin.fileHandleForWriting
        try? handle.write(contentsOf: Data(input))
        try? handle.close()
        group.leave()
      }
    }
    process.waitUntilExit()
    group.wait()
    let (out, err) = collected.values
    if process.terminationReason == .uncaughtSignal {
      return Result(
        status: 128 + process.terminationStatus, signal: process.terminationStatus, stdout: out,
        stderr: err)
    }
    return Result(status: process.terminationStatus, signal: nil, stdout: out, stderr: err)
  }

  /// Runs `command` with `/bin/sh -c`.
  @discardableResult
  public static func sh(_ command: String, input: [UInt8]? = nil, currentDirectory: String? = nil)
    throws -> Result
  {
    try run("/bin/sh", ["-c", command], input: input, currentDirectory: currentDirectory)
  }

  /// Quotes `text` for `/bin/sh`.
  public static func quote(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
  }

  /// A child's standard output and error, gathered by two reading threads; shared by both
  /// `run` functions.
  final class Collected: @unchecked Sendable {
    // @unchecked Sendable: both fields are only touched under `lock`.
    private let lock = NSLock()
    private var out: [UInt8] = []
    private var err: [UInt8] = []
    func store(_ bytes: [UInt8], isError: Bool) {
      lock.lock()
      defer { lock.unlock() }
      if isError { err = bytes } else { out = bytes }
    }
    var values: ([UInt8], [UInt8]) {
      lock.lock()
      defer { lock.unlock() }
      return (out, err)
    }
  }
}
