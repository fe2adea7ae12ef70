import Foundation
import Glibc
import SqueezeEngines
import SqueezeSystem
import SqueezeTaskLog
import TestSupport
import Testing

@testable import SqueezeCore

/// `--rsyncable` end to end: chunk boundaries chosen by the content, the same bytes from every
/// path, standard gzip that restores, and small changes that stay small in the output.
@Suite struct RsyncableTests {
  /// Text, random bytes, a run of zeros (cut at the maximum) and text again: about 3 MB.
  static let data =
    TestData.text(2_000_000, seed: 31) + TestData.random(300_000, seed: 32)
    + [UInt8](repeating: 0, count: 300_000) + TestData.text(400_000, seed: 33)

  /// Writes `bytes` to `relative` with a fixed modification time, so outputs written at
  /// different moments carry the same header MTIME.
  @discardableResult
  static func writeSource(_ folder: TemporaryFolder, _ relative: String, _ bytes: [UInt8]) throws
    -> String
  {
    let path = try folder.write(relative, bytes)
    var times = [
      timespec(tv_sec: 1_700_000_000, tv_nsec: 0), timespec(tv_sec: 1_700_000_000, tv_nsec: 0),
    ]
    #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
    return path
  }

  /// Both engines at the default level, and the fast engine's levels 1 and 2, whose chunks
  /// ISA-L's deflate compresses.
  static let engineLevels: [(Engine, Int)] = [(.fast, 6), (.zlib, 6), (.fast, 1), (.fast, 2)]

  @Test(arguments: engineLevels)
  func everyPathWritesTheSameBytesAndGunzipRestoresThem(engine: Engine, level: Int) throws {
    let folder = TemporaryFolder("rsyncable-paths")
    // Chunks of 16 KiB to 128 KiB: about 40 of them, so the parallel path has many.
    let common = [
      "--engine", engine.rawValue, "-\(level)", "--rsyncable", "--block-size", "64K",
    ]
    var outputs: [String: [UInt8]] = [:]
    for (label, extra) in [
      ("j1", ["-j", "1"]), ("j2", ["-j", "2"]), ("j5", ["-j", "5"]),
      ("actor", ["--isolation", "actor"]), ("detached", ["--isolation", "detached"]),
    ] {
      let source = try Self.writeSource(folder, "\(label)/file.txt", Self.data)
      let result = try SqueezeBinary.run(common + extra + [source])
      #expect(result.status == 0, "\(label): \(result.stderrText)")
      outputs[label] = try folder.read("\(label)/file.txt.gz")
    }
    let reference = try #require(outputs["j1"])
    for (label, output) in outputs {
      let same = output == reference
      #expect(same, "\(engine) \(label): \(output.count) bytes, -j 1 wrote \(reference.count)")
    }
    let gunzipped = try SystemGzip.decompress(folder.url("j1/file.txt.gz")) == Self.data
    #expect(gunzipped)
    #expect(try SystemGzip.accepts(folder.url("j1/file.txt.gz")))
    let restored = try SqueezeBinary.run([
      "-dc", "--engine", engine.rawValue, folder.url("j1/file.txt.gz"),
    ])
    let restoredAll = restored.stdout == Self.data
    #expect(restoredAll)

    // -c on the file: the same member; standard input: the same without name and time.
    let source = folder.url("j1/file.txt")
    for jobs in ["1", "2"] {
      let streamed = try SqueezeBinary.run(common + ["-j", jobs, "-c", source])
      let streamedSame = streamed.stdout == reference
      #expect(streamedSame, "\(engine) -c -j \(jobs)")
      let piped = try SqueezeBinary.run(common + ["-j", jobs], input: Self.data)
      let unnamed = try SqueezeBinary.run(common + ["-j", jobs, "-n", "-c", source])
      #expect(piped.status == 0 && !piped.stdout.isEmpty)
      let pipedSame = piped.stdout == unnamed.stdout
      #expect(pipedSame, "\(engine) standard input -j \(jobs)")
    }
    // And it is a layout of its own: without --rsyncable the bytes differ.
    let plain = try SqueezeBinary.run([
      "--engine", engine.rawValue, "-\(level)", "--block-size", "64K", "-c", source,
    ])
    let differs = plain.stdout != reference
    #expect(differs)
  }

  @Test(arguments: [Engine.fast, .zlib], [0, 1, 65_535, 65_536, 200_000])
  func smallAndEdgeSizesRoundTrip(engine: Engine, size: Int) throws {
    let folder = TemporaryFolder("rsyncable-sizes")
    let bytes = TestData.text(size, seed: UInt64(size))
    let source = try folder.write("in/f.txt", bytes)
    let result = try SqueezeBinary.run(
      ["--engine", engine.rawValue, "--rsyncable", "--block-size", "32K", folder.url("in")])
    #expect(result.status == 0, "\(result.stderrText)")
    let restored = try SystemGzip.decompress(source + ".gz") == bytes
    #expect(restored, "\(engine), \(size) bytes")
  }

  /// The length of the common prefix and of the common suffix of two gzip files, the
  /// trailer (CRC-32, ISIZE) left out.
  static func commonEnds(_ a: [UInt8], _ b: [UInt8]) -> (prefix: Int, suffix: Int) {
    var prefix = 0
    while prefix < min(a.count, b.count) && a[prefix] == b[prefix] { prefix += 1 }
    var suffix = 0
    while suffix + 8 < min(a.count, b.count) - prefix
      && a[a.count - 9 - suffix] == b[b.count - 9 - suffix]
    {
      suffix += 1
    }
    return (prefix, suffix)
  }

  /// What rsync relies on: 100 bytes inserted near the start of a 3 MB source change only the
  /// output near them; every chunk after realigns (shifted). Without --rsyncable everything
  /// after the insertion differs.
  @Test(arguments: [(Engine.fast, 6), (.zlib, 6), (.fast, 1)])
  func anInsertionChangesOnlyTheOutputNearIt(engine: Engine, level: Int) throws {
    let at = 1_000_000
    let edited =
      Array(Self.data[..<at]) + Array(repeating: UInt8(ascii: "#"), count: 100)
      + Array(Self.data[at...])
    for rsyncable in [true, false] {
      let arguments =
        ["--engine", engine.rawValue, "-\(level)", "--block-size", "128K", "-n"]
        + (rsyncable ? ["--rsyncable"] : [])
      let before = try SqueezeBinary.run(arguments, input: Self.data).stdout
      let after = try SqueezeBinary.run(arguments, input: edited).stdout
      let (prefix, suffix) = Self.commonEnds(before, after)
      let changed = after.count - prefix - suffix
      if rsyncable {
        // At most about two chunks of 256 KiB of source, compressed (text: about a third).
        #expect(changed < 200_000, "\(engine): \(changed) of \(after.count) bytes changed")
        #expect(prefix > 100_000, "the output before the change is untouched")
      } else {
        #expect(changed > after.count / 2, "\(engine) without --rsyncable: \(changed) changed")
      }
    }
  }

  /// As gzip and pigz: restoring, testing and listing take --rsyncable and ignore it, doing
  /// exactly what they do without it.
  @Test(arguments: [["-d", "-k"], ["-t"], ["-l"], ["-d", "-l"], ["-dc"]])
  func modesThatDoNotCompressIgnoreIt(mode: [String]) throws {
    let folder = TemporaryFolder("rsyncable-ignored")
    let text = TestData.text(20_000, seed: 9)
    try folder.write("x", text)
    #expect(try SqueezeBinary.run([folder.url("x")]).status == 0)
    let gz = folder.url("x.gz")
    let compressed = try folder.read("x.gz")
    let plain = try SqueezeBinary.run(mode + (mode == ["-dc"] ? [] : [gz]), input: compressed)
    try #require(plain.status == 0, "\(plain.stderrText)")
    if mode == ["-d", "-k"] { try FileManager.default.removeItem(atPath: folder.url("x")) }
    let ignored = try SqueezeBinary.run(
      ["--rsyncable"] + mode + (mode == ["-dc"] ? [] : [gz]), input: compressed)
    #expect(ignored.status == 0, "\(ignored.stderrText)")
    #expect(ignored.stdout == plain.stdout, "\(mode)")
    #expect(ignored.stderrText == plain.stderrText, "\(mode)")
    if mode == ["-d", "-k"] { #expect(try folder.read("x") == text) }
    if mode == ["-dc"] { #expect(ignored.stdout == text) }
  }

  static func identity(_ path: String) -> [Int] {
    var status = stat()
    stat(path, &status)
    return [Int(status.st_ino), status.st_ctim.tv_sec, status.st_ctim.tv_nsec]
  }

  /// Re-runs go by the source (header name, MTIME, ISIZE), not by how the output was made:
  /// adding --rsyncable, or another engine or level, does not rewrite up-to-date outputs;
  /// -f does.
  @Test func upToDateOutputsAreLeftAloneUnlessForced() throws {
    let folder = TemporaryFolder("rsyncable-rerun")
    try Self.writeSource(folder, "in/big.txt", Array(Self.data[..<1_500_000]))
    try Self.writeSource(folder, "in/small.txt", TestData.text(3000))
    #expect(try SqueezeBinary.run([folder.url("in")]).status == 0)
    let outputs = ["in/big.txt.gz", "in/small.txt.gz"].map(folder.url)
    let before = outputs.map(Self.identity)
    let plain = try folder.read("in/big.txt.gz")
    for options in [
      ["--rsyncable"], ["--engine", "zlib"], ["--level", "9"], ["--rsyncable", "-1"],
    ] {
      let again = try SqueezeBinary.run(options + ["--json", folder.url("in")])
      #expect(again.status == 0, "\(options): \(again.stderrText)")
      let summary = try #require(
        JSONSerialization.jsonObject(with: Data(again.stdout)) as? [String: Any])
      let files = try #require(summary["files"] as? [String: Any])
      #expect((files["upToDate"] as? NSNumber)?.intValue == 2, "\(options)")
      #expect(outputs.map(Self.identity) == before, "\(options): nothing was rewritten")
    }
    #expect(try SqueezeBinary.run(["-f", "--rsyncable", folder.url("in")]).status == 0)
    let forced = try folder.read("in/big.txt.gz")
    let rewritten = forced != plain
    #expect(rewritten, "-f --rsyncable rewrote the output")
    let expected = try SqueezeBinary.run(["--rsyncable", "-c", folder.url("in/big.txt")])
    let asRsyncable = forced == expected.stdout
    #expect(asRsyncable)
  }

  /// A big file's content-defined chunks compress on every core, the boundary scan's waits
  /// tracked: the task-state log stays consistent (running measured from the threads, no
  /// thread in two running spans) and every continuation is resumed.
  @Test(.tags(.slow), .systemTier, arguments: Engine.allCases)
  func aBigRsyncableFileCompressesChunkParallelWithItsScanTracked(engine: Engine) throws {
    let folder = TemporaryFolder("rsyncable-log")
    let bytes = TestData.text(8 << 20, seed: 43)
    try Self.writeSource(folder, "in/big.txt", bytes)
    let log = folder.url("compress.jsonl")
    let result = try SqueezeBinary.run([
      "--rsyncable", "--engine", engine.rawValue, "-j", "2", "--task-log", log,
      "--sample-interval", "1ms", folder.url("in"),
    ])
    #expect(result.status == 0, "\(result.stderrText)")
    let data = try TaskLogData.parse(Array(try Data(contentsOf: URL(fileURLWithPath: log))))
    let end = try #require(data.end)
    #expect(end.leakedContinuations == 0, "every wait for the scanner was resumed")
    #expect(end.maxRunning >= 2, "\(engine): chunks compressed at once")
    #expect(data.tasks.count == 1)
    #expect(data.tasks.first?.transitions.last?.state == .finished)
    let replay = ConcurrencyStagesTests.Replay(data)
    #expect(replay.withoutThread == 0)
    #expect(replay.sharedThreads.isEmpty, "\(replay.sharedThreads.prefix(3))")
    #expect(replay.sampleMismatches == 0)
    let restored = try SystemGzip.decompress(folder.url("in/big.txt.gz")) == bytes
    #expect(restored)
  }

  /// A big file written with --rsyncable (fast engine, default sizes) restores on every core:
  /// each of its chunks decodes on its own, as the parallel restore requires, and the
  /// restore's task-state log shows chunks running at once.
  @Test func aBigRsyncableFileRestoresChunkParallel() throws {
    let folder = TemporaryFolder("rsyncable-restore")
    let bytes = TestData.text(7 << 20, seed: 41)
    let source = try folder.write("in/big.txt", bytes)
    #expect(try SqueezeBinary.run(["--rsyncable", "-j", "2", folder.url("in")]).status == 0)
    let compressed = source + ".gz"
    let descriptor = open(compressed, O_RDONLY)
    try #require(descriptor >= 0)
    defer { close(descriptor) }
    var status = stat()
    #expect(fstat(descriptor, &status) == 0)
    let (_, headerLength) = try DecompressionJob.readHeaderAndLength(descriptor)
    var finder = SyncMarkerFinder(
      descriptor: descriptor, start: Int64(headerLength), end: Int64(status.st_size))
    let cap = Int64(ParallelCompressor.restoredChunkCap(chunkSize: Engine.fast.defaultChunkSize))
    let buffers = ChunkBufferPool(capacity: Int(cap))
    let inflater = try Engine.fast.makeInflater()
    let input = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 8)
    defer { input.deallocate() }
    var start = Int64(headerLength)
    var restored: [UInt8] = []
    var chunks = 0
    while true {
      let boundary = try finder.nextBoundary(within: start + cap)
      let end: Int64? = if case .marker(let offset) = boundary { offset } else { nil }
      #expect(boundary != .beyondLimit, "chunk \(chunks) is within the restore's cap")
      let outcome = ChunkDecoding.decode(
        descriptor, range: start..<(end ?? Int64(status.st_size)), openEnded: end == nil,
        inflater: inflater, input: input, buffers: buffers, stop: AtomicFlag())
      chunks += 1
      switch outcome {
      case .boundary(let buffer):
        restored += buffer.bytes
        #expect(end != nil)
      case .streamEnd(let buffer, _):
        restored += buffer.bytes
        #expect(end == nil, "the final block ends the last candidate")
      case .rejected(let why):
        Issue.record("chunk \(chunks) was rejected: \(why)")
      }
      guard let end, boundary != .beyondLimit else { break }
      start = end
    }
    let restoredAll = restored == bytes
    #expect(restoredAll, "\(restored.count) bytes restored of \(bytes.count)")
    #expect(chunks >= 5, "7 MiB in chunks of 0.75 MiB on average: \(chunks)")
    let log = folder.url("restore.jsonl")
    let tested = try SqueezeBinary.run(["-t", "-j", "2", "--task-log", log, compressed])
    #expect(tested.status == 0, "\(tested.stderrText)")
    let data = try TaskLogData.parse(Array(try Data(contentsOf: URL(fileURLWithPath: log))))
    #expect(data.statistics.maxRunning >= 2, "chunks restored at once")
  }
}
