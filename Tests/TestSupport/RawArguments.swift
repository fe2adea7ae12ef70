import Foundation
import Glibc

extension Shell {
  /// Runs `executable` with arguments given as bytes, which need not be UTF-8 (Foundation's
  /// `Process` takes text), and waits for it, collecting its output while it runs.
  ///
  /// An argument is a C string to the kernel (`execve(2)`): one holding a NUL byte reaches
  /// the program cut at it, as from any shell. Standard input is `/dev/null`.
  ///
  /// - Parameter currentDirectory: the child's working folder (through `env -C`, which
  ///   replaces itself with the program, so its status and signal are the program's).
  /// - Throws: ``SpawnFailure`` when the process cannot be started.
  public static func run(
    _ executable: String, rawArguments: [[UInt8]], currentDirectory: String? = nil
  ) throws -> Result {
    if let currentDirectory {
      return try run(
        "/usr/bin/env",
        rawArguments: [Array("-C".utf8), Array(currentDirectory.utf8), Array(executable.utf8)]
          + rawArguments)
    }
    var outputPipe: [Int32] = [-1, -1]
    var errorPipe: [Int32] = [-1, -1]
    guard pipe(&outputPipe) == 0 else { throw SpawnFailure(step: "pipe", code: errno) }
    guard pipe(&errorPipe) == 0 else {
      close(outputPipe[0])
      close(outputPipe[1])
      throw SpawnFailure(step: "pipe", code: errno)
    }
    // Close-on-exec (glibc's Swift module has no pipe2), so that processes other tests start
    // later do not inherit the ends and keep the pipes open; the child's copies on 1 and 2
    // are made by dup2, which clears the flag.
    for descriptor in outputPipe + errorPipe { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_adddup2(&actions, outputPipe[1], 1)
    posix_spawn_file_actions_adddup2(&actions, errorPipe[1], 2)
    let strings = ([Array(executable.utf8)] + rawArguments).map { bytes in
      let cut = bytes.prefix { $0 != 0 }
      let string = UnsafeMutablePointer<CChar>.allocate(capacity: cut.count + 1)
      for (offset, byte) in cut.enumerated() { string[offset] = CChar(bitPattern: byte) }
      string[cut.count] = 0
      return string
    }
    defer { for string in strings { string.deallocate() } }
    var argv: [UnsafeMutablePointer<CChar>?] = strings + [nil]
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, executable, &actions, nil, &argv, environ)
    close(outputPipe[1])
    close(errorPipe[1])
    guard spawned == 0 else {
      close(outputPipe[0])
      close(errorPipe[0])
      throw SpawnFailure(step: "posix_spawn", code: spawned)
    }
    let output = FileHandle(fileDescriptor: outputPipe[0], closeOnDealloc: true)
    let error = FileHandle(fileDescriptor: errorPipe[0], closeOnDealloc: true)
    let collected = Collected()
    let group = DispatchGroup()
    for (handle, isError) in [(output, false), (error, true)] {
      group.enter()
      DispatchQueue.global().async {
        collected.store(Array(handle.readDataToEndOfFile()), isError: isError)
        group.leave()
      }
    }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    group.wait()
    let (out, err) = collected.values
    // wait(2)'s status: the signal in the low 7 bits, or the exit code in the next byte.
    let signal = status & 0x7F
    if signal != 0 {
      return Result(status: 128 + signal, signal: signal, stdout: out, stderr: err)
    }
    return Result(status: (status >> 8) & 0xFF, signal: nil, stdout: out, stderr: err)
  }

  /// A process that could not be started.
  public struct SpawnFailure: Error, CustomStringConvertible {
    /// The call that failed.
    public var step: String
    /// Its error number.
    public var code: Int32
    /// `posix_spawn: errno 2`.
    public var description: String { "\(step): errno \(code)" }
  }
}

extension SqueezeBinary {
  /// Runs squeeze with `arguments` as bytes (see ``Shell/run(_:rawArguments:currentDirectory:)``).
  @discardableResult
  public static func run(rawArguments arguments: [[UInt8]], currentDirectory: String? = nil)
    throws -> Shell.Result
  {
    try Shell.run(path, rawArguments: arguments, currentDirectory: currentDirectory)
  }
}
