import Foundation
import Glibc
import TestSupport
import Testing

@testable import SqueezeCore

/// The content-defined chunk boundaries of `--rsyncable`: the rule, its parameters, and the
/// readers that apply it (``ChunkBoundaryFinder``, ``SequentialChunkReader``,
/// ``BoundaryScan``).
@Suite struct ChunkBoundaryFinderTests {
  /// Small parameters, so a megabyte of data has hundreds of chunks: 1 KiB minimum, a hit
  /// every 2 KiB on average, 8 KiB maximum.
  static let small = RsyncableChunking(minimumChunkSize: 1024, maskBits: 11, maximumChunkSize: 8192)

  /// The chunk ends `finder` gives for `data` fed in pieces of `pieceSizes` (cycled).
  static func ends(_ data: [UInt8], _ chunking: Chunking, pieceSizes: [Int] = [1 << 30]) -> [Int] {
    var finder = ChunkBoundaryFinder(chunking)
    var ends: [Int] = []
    var position = 0
    var piece = 0
    data.withUnsafeBytes { raw in
      while position < raw.count {
        let size = min(pieceSizes[piece % pieceSizes.count], raw.count - position)
        piece += 1
        var offset = 0
        while offset < size {
          let slice = UnsafeRawBufferPointer(rebasing: raw[(position + offset)..<(position + size)])
          guard let cut = finder.cut(in: slice) else { break }
          offset += cut
          ends.append(position + offset)
        }
        position += size
      }
    }
    if ends.last != data.count { ends.append(data.count) }
    return ends
  }

  /// The rule as the documentation states it, computed independently: one gear hash rolled
  /// over the whole data (never reset), and for each chunk start `b` the first `p` in
  /// `b + minimum ... b + maximum` whose hash (of the 64 bytes before `p`) has its top bits
  /// zero, else `b + maximum`, capped at the end.
  static func referenceEnds(_ data: [UInt8], _ rule: RsyncableChunking) -> [Int] {
    var hashes = [UInt64](repeating: 0, count: data.count + 1)
    var state: UInt64 = 0
    for (index, byte) in data.enumerated() {
      state = (state &<< 1) &+ ChunkBoundaryFinder.gear[Int(byte)]
      hashes[index + 1] = state
    }
    let shift = UInt64(64 - rule.maskBits)
    var ends: [Int] = []
    var start = 0
    while start < data.count {
      var end = min(start + rule.maximumChunkSize, data.count)
      var position = start + rule.minimumChunkSize
      while position < end {
        if hashes[position] >> shift == 0 {
          end = position
          break
        }
        position += 1
      }
      ends.append(end)
      start = end
    }
    return ends.isEmpty ? [0] : ends
  }

  /// Random bytes whose first hit (of the whole-data hash) is at `position`: cut from a
  /// longer run, so the 64 bytes before the hit are there.
  static func dataWithHit(at position: Int, _ rule: RsyncableChunking, count: Int = 100_000)
    -> [UInt8]
  {
    let random = TestData.random(count + 1_000_000, seed: 77)
    let shift = UInt64(64 - rule.maskBits)
    var state: UInt64 = 0
    for (index, byte) in random.enumerated() {
      state = (state &<< 1) &+ ChunkBoundaryFinder.gear[Int(byte)]
      if index + 1 >= position + 64 && state >> shift == 0 {
        return Array(random[(index + 1 - position)...].prefix(count))
      }
    }
    return []
  }

  @Test func aHitExactlyAtTheMinimumEndsTheChunkThereAndOneByteBeforeItDoesNot() throws {
    let rule = Self.small
    let atMinimum = Self.dataWithHit(at: rule.minimumChunkSize, rule)
    let before = Self.dataWithHit(at: rule.minimumChunkSize - 1, rule)
    try #require(!atMinimum.isEmpty && !before.isEmpty)
    for pieces in [[1 << 30], [1], [rule.minimumChunkSize - 64], [rule.minimumChunkSize - 1]] {
      #expect(
        Self.ends(atMinimum, .contentDefined(rule), pieceSizes: pieces).first
          == rule.minimumChunkSize, "\(pieces)")
      let ends = Self.ends(before, .contentDefined(rule), pieceSizes: pieces)
      #expect(ends.first != rule.minimumChunkSize - 1, "\(pieces)")
      #expect(ends == Self.referenceEnds(before, rule))
    }
  }

  @Test func theFinderFollowsTheDocumentedRule() {
    let data = TestData.text(1 << 20, seed: 5)
    let ends = Self.ends(data, .contentDefined(Self.small))
    #expect(ends == Self.referenceEnds(data, Self.small))
    #expect(ends.count > 200, "a hit every ~2 KiB past a 1 KiB minimum: \(ends.count) chunks")
  }

  @Test(arguments: [[1], [7, 1, 4096, 3], [65_536], [1023, 1025]])
  func whereThePiecesAreCutNeverMovesABoundary(pieceSizes: [Int]) {
    let data = TestData.text(200_000, seed: 9) + TestData.random(100_000, seed: 3)
    #expect(
      Self.ends(data, .contentDefined(Self.small), pieceSizes: pieceSizes)
        == Self.ends(data, .contentDefined(Self.small)))
  }

  @Test func everyChunkButTheLastIsBetweenTheMinimumAndTheMaximum() {
    // Text, random data, and a long run of zeros (no hit: cut at the maximum).
    let data =
      TestData.text(300_000, seed: 1) + TestData.random(200_000, seed: 2)
      + [UInt8](repeating: 0, count: 100_000) + TestData.text(50_000, seed: 4)
    let ends = Self.ends(data, .contentDefined(Self.small))
    var start = 0
    for (index, end) in ends.enumerated() {
      let length = end - start
      #expect(length <= Self.small.maximumChunkSize)
      if index < ends.count - 1 { #expect(length >= Self.small.minimumChunkSize) }
      start = end
    }
    // The run of zeros (500,000 ..< 600,000) is cut at the maximum.
    let inZeros = zip([0] + ends, ends).filter { $0.0 >= 500_000 && $0.1 <= 600_000 }
    #expect(inZeros.count >= 10)
    #expect(inZeros.allSatisfy { $0.1 - $0.0 == Self.small.maximumChunkSize })
  }

  @Test func anInsertionMovesOnlyTheBoundariesNearIt() {
    let data = TestData.text(600_000, seed: 21)
    let inserted = Array(repeating: UInt8(ascii: "x"), count: 100)
    let at = 250_000
    let edited = Array(data[..<at]) + inserted + Array(data[at...])
    let before = Self.ends(data, .contentDefined(Self.small))
    let after = Self.ends(edited, .contentDefined(Self.small))
    // Every boundary before the insertion stays; past it they realign, shifted by 100.
    #expect(before.filter { $0 <= at } == after.filter { $0 <= at })
    let shiftedBefore = Set(before.filter { $0 > at }.map { $0 + 100 })
    let afterPast = after.filter { $0 > at }
    let moved = afterPast.filter { !shiftedBefore.contains($0) }
    #expect(moved.count <= 2, "boundaries that moved: \(moved)")
    #expect(afterPast.count > 100)
    // Fixed-size chunks, by contrast, all shift.
    let fixedBefore = Set(Self.ends(data, .fixed(size: 4096)).map { $0 + 100 })
    let fixedAfter = Self.ends(edited, .fixed(size: 4096)).filter { $0 > at }
    #expect(fixedAfter.filter { fixedBefore.contains($0) }.count < 3)
  }

  @Test func fixedChunksEndEverySizeBytes() {
    let data = TestData.random(10_000)
    #expect(Self.ends(data, .fixed(size: 4096), pieceSizes: [1000]) == [4096, 8192, 10_000])
    #expect(Self.ends(Array(data[..<8192]), .fixed(size: 4096)) == [4096, 8192])
  }

  @Test func theParametersFollowTheTargetSize() {
    let fast = RsyncableChunking(targetChunkSize: 1 << 20)
    #expect(fast.minimumChunkSize == 256 << 10)
    #expect(fast.maskBits == 19)
    #expect(fast.maximumChunkSize == 2 << 20)
    let zlib = RsyncableChunking(targetChunkSize: 128 << 10)
    #expect(zlib.minimumChunkSize == 32 << 10)
    #expect(zlib.maskBits == 16)
    #expect(zlib.maximumChunkSize == 256 << 10)
    // Not a power of two: hits every 2^15 (the largest power of two ≤ 50 KiB).
    let odd = RsyncableChunking(targetChunkSize: 100 << 10)
    #expect(odd.minimumChunkSize == 25 << 10 && odd.maskBits == 15)
    #expect(odd.maximumChunkSize == 200 << 10)
    // The restore decodes chunks of up to 4 x max(size, 1 MiB) ahead: every rsyncable chunk.
    for size in [32 << 10, 1 << 20, 64 << 20] {
      #expect(
        RsyncableChunking(targetChunkSize: size).maximumChunkSize
          <= ParallelCompressor.restoredChunkCap(chunkSize: size))
    }
  }

  /// The table is part of the output format: boundaries, and so rsync's savings across
  /// versions, depend on it.
  @Test func theGearTableIsPinnedAndNoRunOfOneByteHits() {
    let gear = ChunkBoundaryFinder.gear
    #expect(gear.count == 256)
    #expect(gear[0] == 0x8678_2cc4_2ed2_bc6f)
    #expect(gear[255] == 0x83b8_565b_9972_24e7)
    // A run of one byte settles at -gear[byte]; the smallest mask (--block-size 32K) has
    // 14 bits, so no run hits at any size.
    #expect(RsyncableChunking(targetChunkSize: 32 << 10).maskBits == 14)
    for byte in 0..<256 { #expect((0 &- gear[byte]) >> 50 != 0, "byte \(byte)") }
    let zeros = [UInt8](repeating: 0, count: 40_000)
    #expect(
      Self.ends(zeros, .contentDefined(Self.small)) == stride(from: 8192, to: 40_000, by: 8192).map
      { $0 } + [40_000])
  }
}

/// The readers that apply the rule to files and streams.
@Suite struct ChunkReaderTests {
  static func withFile<R>(_ data: [UInt8], _ body: (Int32) throws -> R) throws -> R {
    let folder = TemporaryFolder("reader")
    let path = try folder.write("data", data)
    let descriptor = open(path, O_RDONLY)
    try #require(descriptor >= 0)
    defer { close(descriptor) }
    return try body(descriptor)
  }

  /// Every chunk a ``SequentialChunkReader`` hands out.
  static func readAll(
    _ descriptor: Int32, _ chunking: Chunking, historyRoom: Int, knownSize: Int64?
  ) throws -> [(data: [UInt8], dictionary: [UInt8], isLast: Bool)] {
    let buffer = UnsafeMutableRawBufferPointer.allocate(
      byteCount: SequentialChunkReader.bufferSize(chunking: chunking, historyRoom: historyRoom),
      alignment: 8)
    defer { buffer.deallocate() }
    var reader = SequentialChunkReader(
      descriptor: descriptor, chunking: chunking, buffer: buffer, historyRoom: historyRoom,
      knownSize: knownSize)
    var chunks: [(data: [UInt8], dictionary: [UInt8], isLast: Bool)] = []
    while let chunk = try reader.next() {
      chunks.append((Array(chunk.data), Array(chunk.dictionary), chunk.isLast))
    }
    return chunks
  }

  @Test(arguments: [0, 32 << 10])
  func theSequentialReaderCutsWhereTheFinderDoesWithTheBytesBeforeAsDictionary(historyRoom: Int)
    throws
  {
    let data = TestData.text(300_000, seed: 8) + TestData.random(50_000)
    let rule = Chunking.contentDefined(ChunkBoundaryFinderTests.small)
    let expected = ChunkBoundaryFinderTests.ends(data, rule)
    for knownSize in [nil, Int64(data.count)] {
      let chunks = try Self.withFile(data) {
        try Self.readAll($0, rule, historyRoom: historyRoom, knownSize: knownSize)
      }
      var start = 0
      #expect(chunks.count == expected.count)
      for (chunk, end) in zip(chunks, expected) {
        let sameData = chunk.data == Array(data[start..<end])
        let sameDictionary = chunk.dictionary == Array(data[max(0, start - historyRoom)..<start])
        #expect(sameData && sameDictionary, "the chunk at \(start)")
        #expect(chunk.isLast == (end == data.count))
        start = end
      }
    }
  }

  @Test func emptyInputIsOneEmptyLastChunkAndFixedChunksEndOnTheSize() throws {
    let empty = try Self.withFile([]) {
      try Self.readAll(
        $0, .contentDefined(ChunkBoundaryFinderTests.small), historyRoom: 0, knownSize: nil)
    }
    #expect(empty.count == 1 && empty[0].data.isEmpty && empty[0].isLast)
    // Exactly two chunks: the second learns it is the last from the read past it.
    let data = TestData.random(8192)
    let fixed = try Self.withFile(data) {
      try Self.readAll($0, .fixed(size: 4096), historyRoom: 32 << 10, knownSize: nil)
    }
    #expect(fixed.map(\.data.count) == [4096, 4096])
    #expect(fixed.map(\.isLast) == [false, true])
    let dictionary = fixed[1].dictionary == Array(data[..<4096])
    #expect(dictionary)
  }

  @Test func aSmallFileIsReadWithOneRead() throws {
    let data = TestData.text(5000)
    let calls = try Self.withFile(data) { descriptor -> Int in
      let rule = Chunking(chunkSize: 1 << 20, rsyncable: true)
      let buffer = UnsafeMutableRawBufferPointer.allocate(
        byteCount: SequentialChunkReader.bufferSize(chunking: rule, historyRoom: 0), alignment: 8)
      defer { buffer.deallocate() }
      var reader = SequentialChunkReader(
        descriptor: descriptor, chunking: rule, buffer: buffer, historyRoom: 0,
        knownSize: Int64(data.count))
      let chunk = try reader.next()
      #expect(chunk?.isLast == true && chunk?.data.count == data.count)
      return reader.readCalls
    }
    #expect(calls == 1)
  }

  /// Every boundary a ``BoundaryScan`` of `data` finds.
  static func scanAll(_ data: [UInt8], _ rule: RsyncableChunking) async throws -> [Int] {
    let folder = TemporaryFolder("scan-all")
    let path = try folder.write("data", data)
    let descriptor = open(path, O_RDONLY)
    try #require(descriptor >= 0)
    defer { close(descriptor) }
    let scan = try BoundaryScan(descriptor: descriptor, length: Int64(data.count), chunking: rule)
    defer { scan.cancel() }
    var found: [Int] = []
    while found.last != data.count {
      guard case .success(let end) = await scan.next() else { break }
      found.append(Int(end))
    }
    return found
  }

  @Test func theBoundaryScanCutsAtTheMinimumExactlyAsTheFinderDoes() async throws {
    let rule = ChunkBoundaryFinderTests.small
    for position in [rule.minimumChunkSize, rule.minimumChunkSize - 1] {
      let data = ChunkBoundaryFinderTests.dataWithHit(at: position, rule)
      let found = try await Self.scanAll(data, rule)
      #expect(found == ChunkBoundaryFinderTests.ends(data, .contentDefined(rule)), "\(position)")
    }
  }

  @Test func theBoundaryScanFindsTheSameBoundariesAheadOfItsConsumer() async throws {
    // Hundreds of chunks: the scan fills its lead and waits for the consumer many times.
    let data = TestData.text(1 << 20, seed: 12)
    let expected = ChunkBoundaryFinderTests.ends(
      data, .contentDefined(ChunkBoundaryFinderTests.small))
    #expect(expected.count > 4 * BoundaryScan.lead)
    let folder = TemporaryFolder("scan")
    let path = try folder.write("data", data)
    let descriptor = open(path, O_RDONLY)
    try #require(descriptor >= 0)
    defer { close(descriptor) }
    let scan = try BoundaryScan(
      descriptor: descriptor, length: Int64(data.count), chunking: ChunkBoundaryFinderTests.small)
    var found: [Int] = []
    while found.last != data.count {
      if found.count % 50 == 0 { try await Task.sleep(for: .milliseconds(5)) }
      switch await scan.next() {
      case .success(let end): found.append(Int(end))
      case .failure(let failure): Issue.record("\(failure)")
      }
      if found.count > expected.count { break }
    }
    scan.cancel()
    #expect(found == expected)
  }

  @Test func aCancelledScanStopsAndClosesItsDescriptor() async throws {
    let data = TestData.text(1 << 20, seed: 13)
    let folder = TemporaryFolder("scan-cancel")
    let path = try folder.write("data", data)
    /// Descriptors of this process open on the file (other tests open and close their own
    /// meanwhile).
    func openDescriptors() -> Int {
      let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
      return names.filter {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0))
          == path
      }.count
    }
    let descriptor = open(path, O_RDONLY)
    try #require(descriptor >= 0)
    defer { close(descriptor) }
    let before = openDescriptors()
    let scan = try BoundaryScan(
      descriptor: descriptor, length: Int64(data.count), chunking: ChunkBoundaryFinderTests.small)
    guard case .success = await scan.next() else {
      Issue.record("no first boundary")
      return
    }
    // The scanner is now waiting with its lead full (or still scanning); cancel ends it.
    scan.cancel()
    guard case .failure(.interrupted) = await scan.next() else {
      Issue.record("a cancelled scan hands out no more boundaries")
      return
    }
    var waited = 0
    while openDescriptors() > before && waited < 200 {
      try await Task.sleep(for: .milliseconds(10))
      waited += 1
    }
    #expect(openDescriptors() == before, "the scanner's duplicate descriptor is closed")
  }

  @Test func aTrackedConsumerIsSuspendedWhileTheScanIsBehindAndRunsOnceServed() async throws {
    // About 16 chunks taken as fast as they come: the consumer asks before the scanner has
    // found the first one (and usually others), and each wait is a suspension on a
    // continuation that the scanner resumes. Few chunks, as each resumption waits for a
    // thread of the cooperative pool, which the suite's other tests keep busy.
    let data = TestData.text(512 << 10, seed: 15)
    let rule = RsyncableChunking(
      minimumChunkSize: 16 << 10, maskBits: 14, maximumChunkSize: 64 << 10)
    let folder = TemporaryFolder("scan-tracked")
    let path = try folder.write("data", data)
    let descriptor = open(path, O_RDONLY)
    try #require(descriptor >= 0)
    defer { close(descriptor) }
    let logPath = folder.url("scan.jsonl")
    let log = try TaskLog(path: RawPath(logPath), startTime: MonotonicClock.now())
    // A log writes nothing before its start event.
    log.start(
      version: "t", isolation: .nonisolated, jobs: 2, level: .default, engine: .zlib, cpus: 2,
      files: 1, bytes: Int64(data.count), chunkSize: 64 << 10)
    let tracker = TaskTracker(log: log)
    let task = tracker.create(id: 1, file: "data")
    task.run()
    let scan = try BoundaryScan(descriptor: descriptor, length: Int64(data.count), chunking: rule)
    var last: Int64 = 0
    var notRunning = 0
    while last < Int64(data.count) {
      guard case .success(let end) = await scan.next(for: task) else {
        Issue.record("the scan failed")
        break
      }
      if task.state != .running { notRunning += 1 }
      last = end
    }
    scan.cancel()
    #expect(notRunning == 0, "the consumer runs again whenever next(for:) returns")
    #expect(tracker.counters.continuationWaits.load(ordering: .relaxed) == 0)
    let counts = tracker.counters.snapshot()
    #expect(counts.suspended == 0 && counts.enqueued == 0 && counts.running == 1)
    task.finish()
    log.flush()
    let lines = try String(contentsOfFile: logPath, encoding: .utf8).split(separator: "\n")
    func count(_ fragment: String) -> Int { lines.filter { $0.contains(fragment) }.count }
    let waits = count(#""state":"suspended","reason":"continuation""#)
    #expect(waits > 0, "the consumer waited for the scanner at least once")
    // Born enqueued and run once, then each wait: suspended, enqueued (resumed), running.
    #expect(count(#""state":"enqueued""#) == waits + 1)
    #expect(count(#""state":"running""#) == waits + 1)
    #expect(count(#""state":"suspended""#) == waits)
  }

  @Test func aFileThatShrankFailsTheScan() async throws {
    let data = TestData.text(300_000, seed: 14)
    let folder = TemporaryFolder("scan-shrink")
    let path = try folder.write("data", data)
    let descriptor = open(path, O_RDONLY)
    try #require(descriptor >= 0)
    defer { close(descriptor) }
    #expect(truncate(path, 100_000) == 0)
    let scan = try BoundaryScan(
      descriptor: descriptor, length: Int64(data.count), chunking: ChunkBoundaryFinderTests.small)
    defer { scan.cancel() }
    var result: Result<Int64, FileFailure> = .success(0)
    repeat {
      result = await scan.next()
    } while (try? result.get()).map { $0 < Int64(data.count) } ?? false
    #expect(result == .failure(.changedWhileReading("it shrank while being read")))
  }
}
