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
        feed(input, to: handle.fileDescriptor)
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

  /// Writes `bytes` to the pipe `descriptor` until they are all written or the reader has
  /// gone (`EPIPE`), on the calling thread with `SIGPIPE` blocked.
  ///
  /// A child that exits before it has read all its input (a usage error, `squeeze -dc` of a
  /// damaged stream) closes the pipe's read end; the next write then raises `SIGPIPE`, whose
  /// default action ends the whole test runner (status 141, every later test lost). The signal
  /// is blocked on this thread only, so the disposition children inherit stays the default;
  /// a `SIGPIPE` left pending by the failed write is taken with `sigtimedwait` before the mask
  /// is restored, so it is never delivered.
  static func feed(_ bytes: [UInt8], to descriptor: Int32) {
    var pipeSignal = sigset_t()
    sigemptyset(&pipeSignal)
    sigaddset(&pipeSignal, SIGPIPE)
    var previous = sigset_t()
    pthread_sigmask(SIG_BLOCK, &pipeSignal, &previous)
    var offset = 0
    bytes.withUnsafeBytes { raw in
      while offset < raw.count {
        let written = Glibc.write(descriptor, raw.baseAddress! + offset, raw.count - offset)
        if written > 0 {
          offset += written
        } else if written < 0 && errno == EINTR {
          continue
        } else {
          break
        }
      }
    }
    var pending = sigset_t()
    sigpending(&pending)
    if sigismember(&pending, SIGPIPE) == 1 {
      var noWait = timespec(tv_sec: 0, tv_nsec: 0)
      _ = sigtimedwait(&pipeSignal, nil, &noWait)
    }
    pthread_sigmask(SIG_SETMASK, &previous, nil)
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
