import Foundation
import Glibc
import TestSupport
import Testing

/// Both engines (`--engine fast`, the default, and `--engine zlib`) write standard gzip that
/// every reader restores, the zlib engine writes exactly the bytes squeeze always wrote, and
/// a big file the fast engine wrote restores on every core.
@Suite(.tags(.system), .systemTier) struct EngineTests {
  static let engines = ["fast", "zlib"]

  /// An engine at a level, with or without `--rsyncable`: what a round trip compresses with.
  struct Setting: Sendable, CustomTestStringConvertible {
    var engine: String
    var level: Int = 6
    var rsyncable = false

    /// The options that select it.
    var arguments: [String] {
      ["--engine", engine, "-\(level)"] + (rsyncable ? ["--rsyncable"] : [])
    }
    var testDescription: String { arguments.joined(separator: " ") }
  }

  /// Both engines at the default level, the fast engine at the levels ISA-L's deflate
  /// serves (1 and 2) and at level 3 (libdeflate's level 1, whose long chunks are compressed
  /// in halves), with and without `--rsyncable`.
  static let settings = [
    Setting(engine: "fast"), Setting(engine: "zlib"), Setting(engine: "fast", level: 1),
    Setting(engine: "fast", level: 1, rsyncable: true), Setting(engine: "fast", level: 2),
    Setting(engine: "fast", level: 2, rsyncable: true), Setting(engine: "fast", level: 3),
    Setting(engine: "fast", level: 3, rsyncable: true),
  ]

  /// Files just under and at the lengths where the fast engine's levels 1 and 2 hand chunks
  /// from libdeflate to ISA-L (1 KiB and 2 KiB).
  static let isalThresholdFiles: [(name: String, bytes: [UInt8])] = [
    ("text-1023", TestData.text(1023, seed: 61)), ("text-1024", TestData.text(1024, seed: 62)),
    ("text-2047", TestData.text(2047, seed: 63)), ("text-2048", TestData.text(2048, seed: 64)),
  ]

  /// The files of the round trips: empty, one byte, 3 MiB of random data, sizes around the
  /// engine's chunk size (one less, equal, one more, twice) and 10 MiB of text.
  static func fixture(chunkSize: Int) -> [(name: String, bytes: [UInt8])] {
    [
      ("empty", []), ("one-byte", [0x41]), ("random-3MiB", TestData.random(3 << 20, seed: 3)),
      ("text-chunk-minus-1", TestData.text(chunkSize - 1, seed: 11)),
      ("text-chunk", TestData.text(chunkSize, seed: 12)),
      ("text-chunk-plus-1", TestData.text(chunkSize + 1, seed: 13)),
      ("text-two-chunks", TestData.text(2 * chunkSize, seed: 14)),
      ("text-10MiB", TestData.text(10 << 20, seed: 15)),
    ]
  }

  /// The readers that must restore every output byte for byte: commands reading the `.gz`
  /// named by `$1` and writing the data to standard output.
  static let readers: [(name: String, command: String)] = [
    ("gzip -d", "gzip -dc \"$1\""),
    ("pigz -d", "pigz -dc \"$1\""),
    ("zcat", "zcat \"$1\""),
    (
      "python gzip",
      "python3 -c 'import gzip,sys; sys.stdout.buffer.write(gzip.open(sys.argv[1]).read())' \"$1\""
    ),
    ("libdeflate-gunzip", "libdeflate-gunzip -c \"$1\""),
    ("igzip -d", "igzip -dc \"$1\""),
    ("rapidgzip", "\"$RAPIDGZIP\" -d -c \"$1\""),
  ]

  /// rapidgzip, installed by `scripts/install-dependencies` in a virtual environment under
  /// `.build` (pip's packages stay out of the system's Python).
  static var rapidgzip: String {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent(".build/venv/bin/rapidgzip").path
  }

  @Test(arguments: settings)
  func everyReaderRestoresEveryFile(setting: Setting) throws {
    let folder = TemporaryFolder("readers-\(setting.engine)")
    let chunkSize = setting.engine == "fast" ? 1 << 20 : 128 << 10
    let files = Self.fixture(chunkSize: chunkSize) + Self.isalThresholdFiles
    for file in files { try folder.write("in/\(file.name)", file.bytes) }
    let result = try SqueezeBinary.run(setting.arguments + [folder.url("in")])
    #expect(result.status == 0, "\(result.stderrText)")
    for file in files {
      let gz = folder.url("in/\(file.name).gz")
      for reader in Self.readers {
        let run = try Shell.run(
          "/bin/sh",
          ["-c", "RAPIDGZIP=\(Shell.quote(Self.rapidgzip)); " + reader.command, "sh", gz])
        #expect(run.status == 0, "\(reader.name) on \(file.name): \(run.stderrText)")
        #expect(run.stdout == file.bytes, "\(reader.name) restores \(file.name)")
      }
      #expect(try SystemGzip.accepts(gz), "gzip -t accepts \(file.name)")
      let listed = try Shell.run("/bin/gzip", ["-l", gz])
      let row = listed.stdoutText.split(separator: "\n").dropFirst().first ?? ""
      let columns = row.split(separator: " ")
      #expect(columns.count >= 2 && columns[1] == "\(file.bytes.count)", "gzip -l: \(row)")
      // One standard member: the file is a single member whose size gzip -l can tell.
      #expect(try Self.memberCount(gz) == 1, "\(file.name) is one gzip member")
    }
  }

  /// The number of gzip members in `path`, counted by Python's zlib (which stops at the end
  /// of each member and says what is left).
  static func memberCount(_ path: String) throws -> Int {
    let script = """
      import sys, zlib
      data = open(sys.argv[1], 'rb').read()
      count = 0
      while data:
          d = zlib.decompressobj(31)
          d.decompress(data)
          if not d.eof: sys.exit('truncated member')
          data = d.unused_data
          count += 1
      print(count)
      """
    let run = try Shell.run("/usr/bin/env", ["python3", "-c", script, path])
    return Int(run.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
  }

  /// The zlib engine's bytes are those main 0499d34 wrote (SHA-256 of each output of the
  /// fixture, names and times fixed): pigz's layout, byte-stable.
  @Test func theZlibEngineWritesTheBytesSqueezeAlwaysWrote() throws {
    let folder = TemporaryFolder("pinned")
    try Self.writeFixedFixture(in: folder)
    let result = try SqueezeBinary.run(["--engine", "zlib", folder.url("in")])
    #expect(result.status == 0, "\(result.stderrText)")
    #expect(try Self.digests(in: folder) == Self.pinnedZlibDigests)
  }

  /// The fixture of ``theZlibEngineWritesTheBytesSqueezeAlwaysWrote()``, with every file's
  /// modification time set to 2023-11-14 22:13:20 UTC (the header's MTIME).
  static func writeFixedFixture(in folder: TemporaryFolder) throws {
    for file in fixture(chunkSize: 128 << 10) {
      let path = try folder.write("in/\(file.name)", file.bytes)
      var times = [
        timespec(tv_sec: 1_700_000_000, tv_nsec: 0), timespec(tv_sec: 1_700_000_000, tv_nsec: 0),
      ]
      #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
    }
  }

  /// `name.gz` → SHA-256 of every output in the fixture.
  static func digests(in folder: TemporaryFolder) throws -> [String: String] {
    var result: [String: String] = [:]
    for file in fixture(chunkSize: 128 << 10) {
      let run = try Shell.run("/usr/bin/sha256sum", [folder.url("in/\(file.name).gz")])
      result[file.name + ".gz"] = String(run.stdoutText.prefix(64))
    }
    return result
  }

  /// Recorded with the binary of main 0499d34 (before engines existed) on the same fixture.
  static let pinnedZlibDigests: [String: String] = [
    "empty.gz": "84b41d8de34d0c0d7e58848942267034413e82a26f50e11b6a75b5c8db1d9ca6",
    "one-byte.gz": "c975b41f02777c51907469453bff382132d9ec0f8074955558b5526c735b108c",
    "random-3MiB.gz": "407828c9a98f149b2d480e3355091305768dbb242b60e6f2a8e8406d5a9ebfc2",
    "text-10MiB.gz": "0e922562f039502cf2e40e53ae119344a135559179f8724a04e22bf5f4ed7219",
    "text-chunk-minus-1.gz": "0cf1572fd9d956270d9e9e39dd5d7272cfd3de339bd9c182a7a0a98592cab87e",
    "text-chunk-plus-1.gz": "e398eef10dcb8951b21d1bc96eb63a5f8dd2a0a0d3449bf175976b4cbbdcbc82",
    "text-chunk.gz": "267cbf0b5d7329e7e65deb1b32cf7da43fe9b717142d56685747fa1a0d4fe939",
    "text-two-chunks.gz": "dae951005f0d0d11d9239f08dd02b9f8a09b1d238d93e383df8a549dc6824d3f",
  ]

  @Test func libdeflateIsLinkedStatically() throws {
    let run = try Shell.run("/usr/bin/ldd", [SqueezeBinary.path])
    #expect(run.status == 0)
    #expect(!run.stdoutText.contains("libdeflate"), "\(run.stdoutText)")
    #expect(run.stdoutText.contains("libisal"), "ISA-L is Debian's shared library")
  }

  @Test(arguments: settings)
  func randomDataGrowsByLessThanATenthOfAPercent(setting: Setting) throws {
    let folder = TemporaryFolder("random-\(setting.engine)")
    let bytes = TestData.random(8 << 20, seed: 21)
    try folder.write("in/noise.bin", bytes)
    #expect(try SqueezeBinary.run(setting.arguments + [folder.url("in")]).status == 0)
    let size = try folder.read("in/noise.bin.gz").count
    #expect(Double(size) < Double(bytes.count) * 1.001, "\(size) bytes from \(bytes.count)")
  }

  /// A big file the fast engine wrote restores (`-d`) and tests (`-t`) on every core: the
  /// task-state log's counters show more than one chunk decoding at once, for libdeflate's
  /// chunks (level 6) as for ISA-L's (level 1). A gzip-made file of the same data restores
  /// too (serially: it has no chunks).
  @Test(arguments: [6, 1])
  func aBigFastFileRestoresOnEveryCore(level: Int) throws {
    let folder = TemporaryFolder("parallel-restore")
    let bytes = TestData.text(24 << 20, seed: 31)
    try folder.write("in/big.txt", bytes)
    #expect(
      try SqueezeBinary.run(["-\(level)", "-o", folder.url("gz"), folder.url("in/big.txt")])
        .status == 0)
    try folder.write(
      "gzip/big.txt.gz", try Shell.run("/bin/gzip", ["-6", "-c"], input: bytes).stdout)
    for mode in ["-d", "-t"] {
      let log = folder.url("restore\(mode).jsonl")
      let output = mode == "-d" ? ["-o", folder.url("out\(mode)")] : []
      let result = try SqueezeBinary.run(
        [mode, "-j", "2", "--task-log", log] + output + [folder.url("gz/big.txt.gz")])
      #expect(result.status == 0, "\(mode): \(result.stderrText)")
      let text = try String(contentsOfFile: log, encoding: .utf8)
      let end = try #require(text.split(separator: "\n").last { $0.contains("\"event\":\"end\"") })
      let json = try #require(
        JSONSerialization.jsonObject(with: Data(end.utf8)) as? [String: Any])
      #expect((json["maxRunning"] as? NSNumber)?.intValue ?? 0 >= 2, "\(mode): \(end)")
    }
    #expect(try folder.read("out-d/big.txt") == bytes)
    let gzipMade = try SqueezeBinary.run(["-d", "-o", folder.url("restored"), folder.url("gzip/")])
    #expect(gzipMade.status == 0, "\(gzipMade.stderrText)")
    #expect(try folder.read("restored/big.txt") == bytes)
  }

  /// A bomb laid out like fast-engine chunks (a sync marker after every 1 GiB of zeros,
  /// about every MiB of compressed data): each chunk decodes far past the cap on chunks
  /// decoded ahead, so the restore streams it serially with bounded memory.
  @Test func aBombWithSyncMarkersStaysInBoundedMemory() throws {
    let folder = TemporaryFolder("marker-bomb")
    let script = """
      import sys, zlib, struct
      zeros = bytes(1 << 20)
      c = zlib.compressobj(9, zlib.DEFLATED, -15)
      out = open(sys.argv[1], 'wb')
      out.write(b'\\x1f\\x8b\\x08\\x00\\x00\\x00\\x00\\x00\\x02\\x03')
      crc = 0
      for chunk in range(2):
          for _ in range(1024):
              out.write(c.compress(zeros))
              crc = zlib.crc32(zeros, crc)
          out.write(c.flush(zlib.Z_FULL_FLUSH))
      out.write(c.flush())
      out.write(struct.pack('<II', crc, (2 << 30) & 0xffffffff))
      """
    let made = try Shell.run("/usr/bin/env", ["python3", "-c", script, folder.url("bomb.gz")])
    #expect(made.status == 0, "\(made.stderrText)")
    let tested = try Shell.sh(
      "/usr/bin/time -f '%M' \(Shell.quote(SqueezeBinary.path)) -t -j 2 \(Shell.quote(folder.url("bomb.gz")))"
    )
    #expect(tested.status == 0, "\(tested.stderrText)")
    let peak = Int(tested.stderrText.split(separator: "\n").last ?? "") ?? 0
    // 1.5 times the 34,000 KB this run peaked at here (debug build); one chunk decoded whole
    // would be 1 GiB.
    #expect(peak > 0 && peak < 51_000, "bounded memory: \(peak) KB")
  }

  /// Every isolation stage and every width writes the same bytes, with each engine, and at
  /// the levels where ISA-L compresses.
  @Test(arguments: settings.filter { !$0.rsyncable })
  func outputsAreIdenticalAcrossStagesAndJobs(setting: Setting) throws {
    let folder = TemporaryFolder("stages-\(setting.engine)")
    for index in 0..<12 {
      try folder.write(
        "in/small-\(index).txt", TestData.text(700 + index * 900, seed: UInt64(index)))
    }
    try folder.write("in/big.txt", TestData.text(3 << 20, seed: 41))
    // Incompressible chunks the fast engine stores, between compressible ones.
    try folder.write(
      "in/mixed.bin",
      TestData.random(1 << 20, seed: 42) + TestData.text(1 << 20, seed: 43)
        + TestData.random(1 << 20, seed: 44))
    var reference: [String: [UInt8]]? = nil
    for (isolation, jobs) in [
      ("main-actor", "1"), ("actor", "2"), ("nonisolated", "1"), ("nonisolated", "2"),
      ("nonisolated", "5"), ("detached", "2"),
    ] {
      let out = folder.url("out-\(isolation)-\(jobs)")
      let result = try SqueezeBinary.run(
        setting.arguments + [
          "--isolation", isolation, "-j", jobs, "--block-size", "256K", "-o", out,
          folder.url("in/"),
        ])
      #expect(result.status == 0, "\(isolation) -j \(jobs): \(result.stderrText)")
      let outputs = try ConcurrencyStagesTests.outputs(in: out)
      if let reference {
        #expect(outputs == reference, "\(isolation) -j \(jobs) writes the reference bytes")
      } else {
        reference = outputs
        #expect(outputs.count == 14)
      }
    }
  }

  /// Files whose sync markers do not start independent chunks restore correctly all the
  /// same: pigz's and the zlib engine's (chunks share a dictionary), two fast-engine files
  /// joined (markers of a second member), and random data laced with the marker's bytes
  /// (stored blocks whose data looks like markers).
  @Test func misleadingMarkersNeverChangeWhatIsRestored() throws {
    let folder = TemporaryFolder("misleading")
    let text = TestData.text(9 << 20, seed: 51)
    var laced: [UInt8] = []
    for index in 0..<40 {
      laced += TestData.random(100_000, seed: UInt64(index))
      laced += [0, 0, 0xff, 0xff] + TestData.text(3000, seed: UInt64(index))
    }
    try folder.write("src/text.txt", text)
    try folder.write("src/laced.bin", laced)
    #expect(try SqueezeBinary.run(["-o", folder.url("fast"), folder.url("src/")]).status == 0)
    #expect(
      try SqueezeBinary.run(["--engine", "zlib", "-o", folder.url("zlib"), folder.url("src/")])
        .status == 0)
    #expect(
      try SqueezeBinary.run(["--block-size", "64K", "-o", folder.url("small"), folder.url("src/")])
        .status == 0)
    try folder.write(
      "gz/pigz.txt.gz", try Shell.run("/usr/bin/pigz", ["-6", "-c"], input: text).stdout)
    try folder.write("gz/zlib.txt.gz", try folder.read("zlib/text.txt.gz"))
    try folder.write(
      "gz/joined.txt.gz", try folder.read("fast/text.txt.gz") + folder.read("fast/laced.bin.gz"))
    try folder.write("gz/laced.bin.gz", try folder.read("small/laced.bin.gz"))
    let expected: [String: [UInt8]] = [
      "pigz.txt": text, "zlib.txt": text, "joined.txt": text + laced, "laced.bin": laced,
    ]
    for engine in Self.engines {
      let out = folder.url("out-\(engine)")
      let result = try SqueezeBinary.run([
        "--engine", engine, "-d", "-j", "2", "-o", out, folder.url("gz/"),
      ])
      #expect(result.status == 0, "\(engine): \(result.stderrText)")
      for (name, bytes) in expected {
        #expect(try folder.read("out-\(engine)/\(name)") == bytes, "\(engine) restores \(name)")
      }
      let tested = try SqueezeBinary.run(["--engine", engine, "-t", "-j", "2", folder.url("gz/")])
      #expect(tested.status == 0, "\(engine) -t: \(tested.stderrText)")
    }
  }

  /// Corrupt input fails with both engines the same way: the same files fail, with the same
  /// fault and wording up to the colon (the detail after it is the engine's).
  @Test func corruptInputFailsAlikeWithBothEngines() throws {
    let folder = TemporaryFolder("corrupt-engines")
    let data = TestData.text(300_000, seed: 5)
    let good = try Shell.run("/bin/gzip", ["-c"], input: data).stdout
    try DamagedGzip.writeCopies(of: good, in: folder, under: "gz")
    for (index, position) in [good.count / 3, good.count / 2, 40, 200].enumerated() {
      var flipped = good
      flipped[position] ^= 0x10
      try folder.write("gz/flipped-\(index).gz", flipped)
    }
    try folder.write("gz/notgzip.gz", Array("plain text".utf8))
    // And every input the gzip reader's fuzzer saved (Tests/Fuzz/regressions/decoder).
    let regressions = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("Fuzz/regressions/decoder")
    for name in try FileManager.default.contentsOfDirectory(atPath: regressions.path) {
      try folder.write(
        "gz/fuzz-\(name.prefix(14)).gz",
        Array(try Data(contentsOf: regressions.appendingPathComponent(name))))
    }
    var faults: [String: [String: String]] = [:]
    for engine in Self.engines {
      for mode in ["-t", "-d"] {
        let result = try SqueezeBinary.run(["--engine", engine, mode, folder.url("gz")])
        #expect(result.status == 1)
        var byFile: [String: String] = [:]
        for line in result.stderrText.split(separator: "\n") {
          guard let range = line.range(of: ".gz: ") else { continue }
          let file = String(line[..<range.lowerBound].split(separator: "/").last ?? "")
          let message = line[range.upperBound...]
          byFile[file] = String(message.prefix { $0 != ":" })
        }
        faults["\(engine) \(mode)"] = byFile
      }
    }
    #expect((faults["fast -t"]?.count ?? 0) >= 12, "every bad file fails: \(faults)")
    #expect(faults["fast -t"] == faults["zlib -t"], "\(faults)")
    #expect(faults["fast -d"] == faults["zlib -d"], "\(faults)")
    #expect(TemporaryFolder.files(in: folder.url("gz")).allSatisfy { $0.hasSuffix(".gz") })
  }
}
