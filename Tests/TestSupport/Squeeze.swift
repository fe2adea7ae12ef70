import Foundation
import Glibc

/// The built `squeeze` executable, for end-to-end tests.
public enum SqueezeBinary {
  /// The path of `squeeze` in the build folder: beside the test bundle.
  public static var path: String {
    if let override = ProcessInfo.processInfo.environment["SQUEEZE_BINARY"] { return override }
    let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    var folder = runner.deletingLastPathComponent()
    // The runner may sit inside an .xctest bundle folder.
    while !FileManager.default.fileExists(atPath: folder.appendingPathComponent("squeeze").path)
      && folder.path != "/"
    {
      folder = folder.deletingLastPathComponent()
    }
    return folder.appendingPathComponent("squeeze").path
  }

  /// Runs squeeze with `arguments`.
  @discardableResult
  public static func run(
    _ arguments: [String], input: [UInt8]? = nil, currentDirectory: String? = nil,
    onStart: (@Sendable (Int32) -> Void)? = nil
  ) throws -> Shell.Result {
    try Shell.run(
      path, arguments, input: input, currentDirectory: currentDirectory, onStart: onStart)
  }

  /// Two runs of squeeze with the same `arguments` at once (a cron job overlapping the last
  /// one): the other is started first, then this one runs to its end.
  ///
  /// - Returns: this run's result, and the other's exit status and standard error.
  public static func runTwiceAtOnce(_ arguments: [String]) throws -> (
    mine: Shell.Result, otherStatus: Int32, otherErrors: String
  ) {
    let other = Process()
    other.executableURL = URL(fileURLWithPath: path)
    other.arguments = arguments
    let otherErrors = Pipe()
    other.standardError = otherErrors
    try other.run()
    let mine = try run(arguments)
    let theirs = otherErrors.fileHandleForReading.readDataToEndOfFile()
    other.waitUntilExit()
    return (mine, other.terminationStatus, String(decoding: theirs, as: UTF8.self))
  }

  /// The unnamed outputs (`O_TMPFILE`) process `pid`, or a child of it (squeeze started
  /// by `timeout` or a shell), has open in folders under `folder`: `/proc/PID/fd` shows each
  /// as `FOLDER/#INODE (deleted)`. Empty when the processes are gone.
  public static func unnamedOutputs(of pid: Int32, under folder: String) -> [String] {
    let children =
      (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8))
      .map {
        $0.split(separator: " ").compactMap {
          Int32($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
      } ?? []
    return ([pid] + children).flatMap { openUnnamedOutputs(of: $0, under: folder) }
  }

  private static func openUnnamedOutputs(of pid: Int32, under folder: String) -> [String] {
    unnamedOutputDescriptors(of: pid, under: folder).compactMap {
      try? FileManager.default.destinationOfSymbolicLink(atPath: $0)
    }
  }

  /// The `/proc/PID/fd/N` paths of the unnamed outputs process `pid` itself has open in
  /// folders under `folder` (`stat` of one gives the output's size so far).
  public static func unnamedOutputDescriptors(of pid: Int32, under folder: String) -> [String] {
    let real = URL(fileURLWithPath: folder).resolvingSymlinksInPath().path
    let descriptors = "/proc/\(pid)/fd"
    let names = (try? FileManager.default.contentsOfDirectory(atPath: descriptors)) ?? []
    return names.map { descriptors + "/" + $0 }.filter { link in
      guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: link)
      else { return false }
      return target.hasPrefix(real + "/") && target.hasSuffix(" (deleted)")
        && target.split(separator: "/").last?.hasPrefix("#") == true
    }
  }

  /// A copy of the binary in a folder every user can read and run, for runs as `nobody`.
  public static func publicCopy(in folder: TemporaryFolder) throws -> String {
    let copy = folder.url("bin/squeeze")
    try FileManager.default.createDirectory(
      atPath: folder.url("bin"), withIntermediateDirectories: true)
    try? FileManager.default.removeItem(atPath: copy)
    try FileManager.default.copyItem(atPath: path, toPath: copy)
    chmod(folder.url("bin"), 0o755)
    chmod(copy, 0o755)
    return copy
  }

  /// Runs `binary` as the unprivileged user `nobody` (`setpriv`), so permission checks are
  /// real even when the tests run as root.
  ///
  /// A fresh copy (``publicCopy(in:)``) can be refused with `ETXTBSY` for a moment: a child
  /// that another test forked while the copy was being written inherits its writable
  /// descriptor until it calls `exec`, and the kernel refuses to execute a file open for
  /// writing anywhere. `setpriv` then exits 126 before squeeze starts; that refusal is retried
  /// (up to 2 s), any other result is returned as it is.
  @discardableResult
  public static func runAsNobody(_ binary: String, _ arguments: [String]) throws -> Shell.Result {
    var attempt = 0
    while true {
      let result = try Shell.run(
        "/usr/bin/setpriv",
        ["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--", binary] + arguments)
      attempt += 1
      guard result.status == 126, result.stderrText.contains("Text file busy"), attempt < 40
      else { return result }
      usleep(50_000)
    }
  }
}

/// Gzip helpers from the system's own tools, the independent judges of squeeze's output.
public enum SystemGzip {
  /// Decompresses `path` with the system's `gzip -dc` and returns the bytes.
  public static func decompress(_ path: String) throws -> [UInt8] {
    let result = try Shell.run("/bin/gzip", ["-dc", path])
    guard result.status == 0 else {
      throw GzipFailure(message: "gzip -dc \(path): \(result.stderrText)")
    }
    return result.stdout
  }

  /// True when `gzip -t` accepts `path`.
  public static func accepts(_ path: String) throws -> Bool {
    try Shell.run("/bin/gzip", ["-t", path]).status == 0
  }

  /// The system's gzip refused a file.
  public struct GzipFailure: Error, CustomStringConvertible {
    /// The command and what gzip printed.
    public var message: String

    /// A failure with `message`.
    public init(message: String) {
      self.message = message
    }
    /// Same as ``message``.
    public var description: String { message }
  }
}
