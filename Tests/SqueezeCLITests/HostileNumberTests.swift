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
      range: "from 100us to 60s"
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

/// gzip headers and trailers whose numbers are at the ends of their fields (RFC 1952 section 2.3:
/// MTIME and ISIZE are 32 bits, XLEN 16), through every mode that reads them.
@Suite(.tags(.system), .systemTier) struct HostileGzipNumberTests {
  /// Writes the members of the test into `folder` with Python's zlib (an independent
  /// writer): each named for what is extreme in it.
  static func writeMembers(in folder: String) throws {
    let script = """
      import struct, sys, zlib
      def member(data, mtime=0, isize=None, flags=0, extra=b'', name=None):
          deflate = zlib.compressobj(6, zlib.DEFLATED, -15)
          body = deflate.compress(data) + deflate.flush()
          header = b'\\x1f\\x8b\\x08' + bytes([flags]) + struct.pack('<I', mtime) + b'\\x00\\x03'
          if flags & 4: header += struct.pack('<H', len(extra)) + extra
          if flags & 8: header += name + b'\\x00'
          size = len(data) & 0xffffffff if isize is None else isize
          return header + body + struct.pack('<II', zlib.crc32(data), size)
      def write(name, data): open(sys.argv[1] + '/' + name, 'wb').write(data)
      write('last-mtime.gz', member(b'last\\n', mtime=0xffffffff, flags=8, name=b'named'))
      write('sign-bit-mtime.gz', member(b'sign\\n', mtime=0x80000000))
      write('largest-isize.gz', member(b'six b\\n', isize=0xffffffff))
      write('largest-xlen.gz', member(b'extra\\n', flags=4, extra=b'\\xff' * 0xffff))
      write('many-members.gz', member(b'a') + member(b'') * 5000 + member(b'b', mtime=0xffffffff))
      """
    let result = try Shell.run("/usr/bin/python3", ["-c", script, folder])
    try #require(result.status == 0, "\(result.stderrText)")
  }

  @Test(arguments: [["-t"], ["-l"], ["-l", "-N"], ["-l", "--json"], ["-d"], ["-d", "-N"]])
  func extremeHeaderAndTrailerNumbersAreReadOrRefusedNeverATrap(mode: [String]) throws {
    let folder = TemporaryFolder("gzip-numbers")
    try folder.makeFolder("in")
    try Self.writeMembers(in: folder.url("in"))
    let arguments =
      mode.contains("-d")
      ? mode + ["-o", folder.url("out"), folder.url("in/")] : mode + [folder.url("in")]
    let result = try SqueezeBinary.run(arguments)
    #expect(result.signal == nil, "\(mode): ended by signal \(result.signal ?? 0)")
    // The ISIZE that does not match is the one failure every mode reports.
    #expect(result.status == 1, "\(mode): \(result.stderrText)")
    #expect(
      result.stderrText.contains(
        "largest-isize.gz: length mismatch: ISIZE says 4294967295, data gives 6 (mod 2^32)"),
      "\(mode): \(result.stderrText)")
    if mode == ["-l"] {
      #expect(result.stdoutText.contains("/many-members\n"), "\(result.stdoutText)")
      #expect(result.stdoutText.contains("/last-mtime\n"))
    }
    if mode == ["-d", "-N"] {
      // The header's name and MTIME, the last second a gzip header can name (2106).
      var info = stat()
      try #require(stat(folder.url("out/named"), &info) == 0, "\(result.stderrText)")
      #expect(info.st_mtim.tv_sec == Int(UInt32.max))
      #expect(try folder.read("out/named") == Array("last\n".utf8))
      #expect(try folder.read("out/many-members") == Array("ab".utf8))
    }
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
      while !Self.hasGrownTemporary(mirror.url("out"), pid: pid) && Self.isRunning(pid) {
        usleep(10_000)
      }
      kill(pid, SIGINT)
    }
    #expect(result.signal == SIGINT, "\(result.status): \(result.stderrText)")
    #expect(result.status == 130)
    #expect(TemporaryFolder.files(in: mirror.path).isEmpty, "the temporary is removed")
  }

  /// Modification (and access) times at the ends of what tmpfs holds, in nanoseconds since
  /// the epoch, by file name.
  static let extremeTimes: [(name: String, nanoseconds: Int128)] = [
    ("latest", Int128(Int64.max) * 1_000_000_000),
    ("earliest", Int128(Int64.min) * 1_000_000_000),
    ("just-before-1970", -1),
    ("past-gzip-mtime", Int128(1) << 32 * 1_000_000_000),
    ("last-gzip-mtime", Int128(UInt32.max) * 1_000_000_000 + 999_999_999),
    ("epoch", 0),
  ]

  /// Sets both times of `path` (`utimensat(2)`, nanoseconds since the epoch).
  static func setTimes(_ path: String, nanoseconds: Int128) throws {
    let (seconds, fraction) = nanoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
    // Toward negative infinity: -1 ns is second -1 plus 999,999,999 ns.
    let spec =
      fraction < 0
      ? timespec(tv_sec: Int(seconds) - 1, tv_nsec: Int(fraction) + 1_000_000_000)
      : timespec(tv_sec: Int(seconds), tv_nsec: Int(fraction))
    let times = [spec, spec]
    try #require(utimensat(AT_FDCWD, path, times, 0) == 0, "utimensat \(path): errno \(errno)")
  }

  /// The modification time of `path` in nanoseconds since the epoch.
  static func modificationTime(_ path: String) throws -> Int128 {
    var info = stat()
    try #require(stat(path, &info) == 0, "stat \(path): errno \(errno)")
    return Int128(info.st_mtim.tv_sec) * 1_000_000_000 + Int128(info.st_mtim.tv_nsec)
  }

  /// Files whose times are at the ends of an `Int64` of seconds, and a nanosecond before
  /// 1970, are compressed, listed, selected by age and restored with their exact times.
  @Test(.enabled(if: tmpfs != nil, "needs a tmpfs at /dev/shm, which keeps any Int64 time"))
  func filesWithExtremeTimesRoundTripWithTheirTimes() throws {
    let folder = TemporaryFolder("times", base: Self.tmpfs)
    var kept: [String: Int128] = [:]
    for (name, nanoseconds) in Self.extremeTimes {
      let path = try folder.write("in/\(name)", text: "\(name)\n")
      try Self.setTimes(path, nanoseconds: nanoseconds)
      // tmpfs drops the nanoseconds of its latest time: compare with what it kept.
      kept[name] = try Self.modificationTime(path)
    }
    let compressed = try SqueezeBinary.run([folder.url("in")])
    #expect(compressed.signal == nil && compressed.status == 0, "\(compressed.stderrText)")
    for (name, _) in Self.extremeTimes {
      let output = folder.url("in/\(name).gz")
      #expect(try SystemGzip.decompress(output) == Array("\(name)\n".utf8))
      #expect(try Self.modificationTime(output) == kept[name], "\(name).gz keeps the time")
    }
    for list in [["-l"], ["-l", "-N"], ["-l", "--json"], ["-t"]] {
      let listed = try SqueezeBinary.run(list + [folder.url("in")])
      #expect(listed.signal == nil && listed.status == 0, "\(list): \(listed.stderrText)")
    }
    for restore in [["-d"], ["-d", "-N"]] {
      let back = folder.url("back\(restore.count)")
      let restored = try SqueezeBinary.run(restore + ["-o", back, folder.url("in/")])
      #expect(restored.signal == nil && restored.status == 0, "\(restore): \(restored.stderrText)")
      for (name, _) in Self.extremeTimes {
        let path = back + "/" + name
        #expect(try Array(Data(contentsOf: URL(fileURLWithPath: path))) == Array("\(name)\n".utf8))
        // With -N the header's MTIME (whole seconds, 1970 to 2106) wins where it has one.
        let expected =
          restore.contains("-N") && name == "last-gzip-mtime"
          ? Int128(UInt32.max) * 1_000_000_000 : kept[name]
        #expect(try Self.modificationTime(path) == expected, "\(restore) \(name)")
      }
    }
    // Only the file of 292 billion years ago is older than a million days.
    let old = TemporaryFolder("times-old", base: Self.tmpfs)
    for (name, nanoseconds) in Self.extremeTimes {
      try Self.setTimes(try old.write(name, text: name), nanoseconds: nanoseconds)
    }
    let selected = try SqueezeBinary.run(["--older-than", "1000000d", old.path])
    #expect(selected.signal == nil && selected.status == 0, "\(selected.stderrText)")
    #expect(TemporaryFolder.files(in: old.path).filter { $0.hasSuffix(".gz") } == ["earliest.gz"])
  }

  /// A temporary another host left (its writer cannot be checked) is removed once it is a
  /// day old: with its time at the start of an Int64 of seconds it is, and with its time at
  /// the end it is not yet.
  @Test(.enabled(if: tmpfs != nil, "needs a tmpfs at /dev/shm, which keeps any Int64 time"))
  func foreignTemporariesWithExtremeTimesAreJudgedByAge() throws {
    let folder = TemporaryFolder("stale", base: Self.tmpfs)
    try folder.write("in/a.txt", text: "alpha")
    let abandoned = try folder.write("in/.squeeze-0-0-0-1-1-1.tmp", text: "x")
    try Self.setTimes(abandoned, nanoseconds: Int128(Int64.min) * 1_000_000_000)
    let future = try folder.write("in/.squeeze-0-0-0-1-1-2.tmp", text: "x")
    try Self.setTimes(future, nanoseconds: Int128(Int64.max) * 1_000_000_000)
    let result = try SqueezeBinary.run([folder.url("in")])
    #expect(result.signal == nil, "ended by signal \(result.signal ?? 0)")
    #expect(result.status == 0, "\(result.stderrText)")
    #expect(!FileManager.default.fileExists(atPath: abandoned), "a day old and more: removed")
    #expect(FileManager.default.fileExists(atPath: future), "written later than now: kept")
    #expect(try SystemGzip.decompress(folder.url("in/a.txt.gz")) == Array("alpha".utf8))
  }

  /// True when a squeeze temporary of at least one byte is in `folder`.
  static func hasGrownTemporary(_ folder: String, pid: Int32) -> Bool {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
    let named = names.contains { name in
      var info = stat()
      return name.hasPrefix(".squeeze-") && stat(folder + "/" + name, &info) == 0
        && info.st_size > 0
    }
    // An unnamed output (O_TMPFILE) is seen through the descriptor /proc shows for it.
    let unnamed = SqueezeBinary.unnamedOutputDescriptors(of: pid, under: folder).contains {
      var info = stat()
      return stat($0, &info) == 0 && info.st_size > 0
    }
    return named || unnamed
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
