import Foundation
import Glibc
import TestSupport
import Testing

/// Numbers from outside at the ends of their types, through the built binary: options past
/// what an `Int64` holds, and never a signal (Swift's overflow trap is SIGILL, status 132).
@Suite struct HostileNumberTests {
  @Test func olderThanPastAnInt64IsAUsageErrorNotATrap() throws {
    let folder = TemporaryFolder("older")
    try folder.write("a.txt", text: "alpha")
    let result = try SqueezeBinary.run(["--older-than", "999999999999999d", folder.url("a.txt")])
    #expect(result.signal == nil, "ended by signal \(result.signal ?? 0)")
    #expect(result.status == 64)
    #expect(
      result.stderrText.hasPrefix(
        "Error: The value '999999999999999d' is invalid for '--older-than <duration>': expected a duration from 1ns to 1000000d, such as 90s, 30m, 12h or 7d\n"
      ), "\(result.stderrText)")
    #expect(result.stderrText.contains("See 'squeeze --help' for more information."))
    #expect(!FileManager.default.fileExists(atPath: folder.url("a.txt.gz")))
  }

  @Test(arguments: [
    (
      arguments: ["--older-than", "999999999999999d"], option: "--older-than <duration>",
      range: "from 1ns to 1000000d"
    ),
    (
      arguments: ["--older-than=1e400d"], option: "--older-than <duration>",
      range: "from 1ns to 1000000d"
    ),
    (
      arguments: ["--sample-interval", "999999999999999d"], option: "--sample-interval <duration>",
      range: "from 100us to 1m"
    ),
    (
      arguments: ["--block-size", "99999999999999999999G"], option: "--block-size <size>",
      range: "from 32K to 64M"
    ),
    (
      arguments: ["--block-size", "8589934592G"], option: "--block-size <size>",
      range: "from 32K to 64M"
    ),
    (arguments: ["--jobs", "99999999999999999999"], option: "--jobs <n>", range: "from 1 to 4096"),
    (
      arguments: ["-p", "-9223372036854775809"], option: "--processes <n>", range: "from 1 to 4096"
    ),
    (arguments: ["--level", "99999999999999999999"], option: "--level <n>", range: "from 1 to 12"),
    (arguments: ["-99999999999999999999"], option: "-99999999999999999999", range: "from 1 to 12"),
    (
      arguments: ["--shard", "99999999999999999999/1"], option: "--shard <k>/<n>",
      range: "1 <= k <= n"
    ),
  ])
  func everyNumericOptionPastItsRangeIsStatus64NamingTheOption(
    arguments: [String], option: String, range: String
  ) throws {
    let folder = TemporaryFolder("range")
    try folder.write("a.txt", text: "alpha")
    let result = try SqueezeBinary.run(arguments + [folder.url("a.txt")])
    #expect(result.signal == nil, "\(arguments): ended by signal \(result.signal ?? 0)")
    #expect(result.status == 64, "\(arguments): \(result.stderrText)")
    #expect(
      result.stderrText.hasPrefix("Error: The value '"), "\(arguments): \(result.stderrText)")
    #expect(result.stderrText.contains("' is invalid for '\(option)': expected "))
    #expect(result.stderrText.contains(range), "the range is named: \(result.stderrText)")
  }
}

/// Sizes and times at the ends of an `Int64`, made for real on tmpfs, which keeps a sparse
/// file of 2^63 - 1 bytes and any time an `Int64` of seconds holds.
@Suite struct HostileFileSystemNumberTests {
  /// `/dev/shm` when it is a writable tmpfs, or nil.
  static let tmpfs: String? = {
    guard let type = try? Shell.run("/usr/bin/stat", ["-f", "-c", "%T", "/dev/shm"]),
      type.stdoutText == "tmpfs\n", access("/dev/shm", W_OK) == 0
    else { return nil }
    return "/dev/shm"
  }()

  /// Makes `path` a sparse file of `Int64.max` bytes (`truncate -s 9223372036854775807`).
  static func makeLargest(_ path: String) throws {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    try #require(descriptor >= 0, "cannot create \(path): errno \(errno)")
    defer { close(descriptor) }
    try #require(ftruncate(descriptor, .max) == 0, "ftruncate: errno \(errno)")
  }

  @Test(
    .enabled(if: tmpfs != nil, "needs a tmpfs at /dev/shm for sparse files of 2^63 - 1 bytes"),
    arguments: [["-t"], ["-d"], ["-l"], ["-l", "--json"], ["-t", "-v", "--json"]])
  func twoGzipFilesOfTheLargestSizeAreErrorsNotATrap(mode: [String]) throws {
    let folder = TemporaryFolder("sparse", base: Self.tmpfs)
    try Self.makeLargest(folder.url("a.gz"))
    try Self.makeLargest(folder.url("b.gz"))
    // Their sizes add up past Int64.max before a byte is read.
    let result = try SqueezeBinary.run(mode + [folder.url("a.gz"), folder.url("b.gz")])
    #expect(result.signal == nil, "\(mode): ended by signal \(result.signal ?? 0)")
    #expect(result.status == 1, "\(mode): \(result.stderrText)")
    #expect(result.stderrText.contains("a.gz: not in gzip format"), "\(result.stderrText)")
    #expect(result.stderrText.contains("b.gz: not in gzip format"), "\(result.stderrText)")
  }

  @Test(.enabled(if: tmpfs != nil, "needs a tmpfs at /dev/shm for sparse files of 2^63 - 1 bytes"))
  func aDryRunOverFilesOfTheLargestSizeTotalsThem() throws {
    let folder = TemporaryFolder("sparse-plan", base: Self.tmpfs)
    try folder.makeFolder("in")
    try Self.makeLargest(folder.url("in/a"))
    try Self.makeLargest(folder.url("in/b"))
    let result = try SqueezeBinary.run(["--dry-run", "-v", folder.url("in")])
    #expect(result.signal == nil, "ended by signal \(result.signal ?? 0)")
    #expect(result.status == 0, "\(result.stderrText)")
    #expect(result.stderrText.contains("2 would be compressed"), "\(result.stderrText)")
  }

  /// A mirror wraps a `.gz` file in stored blocks, with a read buffer sized from the file:
  /// the copy starts (its temporary grows) and stops cleanly on SIGINT.
  @Test(.enabled(if: tmpfs != nil, "needs a tmpfs at /dev/shm for sparse files of 2^63 - 1 bytes"))
  func aMirroredGzipFileOfTheLargestSizeIsCopiedUntilStopped() throws {
    let source = TemporaryFolder("sparse-source", base: Self.tmpfs)
    try source.makeFolder("in")
    try Self.makeLargest(source.url("in/huge.gz"))
    // The mirror on the ordinary disk: the copy is stopped long before it fills anything.
    let mirror = TemporaryFolder("sparse-mirror")
    let result = try SqueezeBinary.run(["-o", mirror.url("out"), source.url("in/")]) { pid in
      // Wait until the copy has written something, or the process has ended.
      while !Self.hasGrownTemporary(mirror.url("out")) && Self.isRunning(pid) {
        usleep(10_000)
      }
      kill(pid, SIGINT)
    }
    #expect(result.signal == SIGINT, "\(result.status): \(result.stderrText)")
    #expect(result.status == 130)
    #expect(TemporaryFolder.files(in: mirror.path).isEmpty, "the temporary is removed")
  }

  /// True when a squeeze temporary of at least one byte is in `folder`.
  static func hasGrownTemporary(_ folder: String) -> Bool {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
    return names.contains { name in
      var info = stat()
      return name.hasPrefix(".squeeze-") && stat(folder + "/" + name, &info) == 0
        && info.st_size > 0
    }
  }

  /// True while `pid` runs (a process that ended but was not waited for is a zombie, which
  /// `kill(pid, 0)` still finds).
  static func isRunning(_ pid: Int32) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
      let close = stat.lastIndex(of: ")")
    else { return false }
    return !stat[close...].hasPrefix(") Z")
  }
}
