import CLibdeflate
import CZlib
import Foundation
import TestSupport
import Testing

@testable import SqueezeEngines

/// Compresses `data` in chunks of `chunkSize` with `engine` at `level` into one raw deflate
/// stream, as squeeze lays a file out.
func deflateInChunks(_ data: [UInt8], engine: Engine, level: Int = 6, chunkSize: Int) throws
  -> [UInt8]
{
  let deflater = try engine.makeDeflater(level: level)
  var stream: [UInt8] = []
  var start = 0
  repeat {
    let end = min(data.count, start + chunkSize)
    let dictionaryStart = max(0, start - engine.chunkDictionarySize)
    var output = [UInt8](repeating: 0, count: deflater.bound(chunkLength: end - start))
    let produced = try data.withUnsafeBytes { raw in
      try output.withUnsafeMutableBytes { out in
        try deflater.deflate(
          chunk: UnsafeRawBufferPointer(rebasing: raw[start..<end]),
          dictionary: UnsafeRawBufferPointer(rebasing: raw[dictionaryStart..<start]),
          isLast: end == data.count, into: out)
      }
    }
    stream += output[..<produced]
    start = end
  } while start < data.count
  return stream
}

/// Inflates a complete raw deflate stream with zlib (the reference reader).
func zlibInflate(_ stream: [UInt8]) throws -> [UInt8] {
  var z = z_stream()
  guard squeeze_inflateInit2(&z, -15) == Z_OK else {
    throw EngineError(library: .zlib, code: -1, detail: "init")
  }
  defer { inflateEnd(&z) }
  var result: [UInt8] = []
  var input = stream
  var buffer = [UInt8](repeating: 0, count: 1 << 16)
  let code: Int32 = input.withUnsafeMutableBufferPointer { inputPointer in
    z.next_in = inputPointer.baseAddress
    z.avail_in = UInt32(inputPointer.count)
    while true {
      let step: Int32 = buffer.withUnsafeMutableBufferPointer { out in
        z.next_out = out.baseAddress
        z.avail_out = UInt32(out.count)
        return inflate(&z, Z_NO_FLUSH)
      }
      result += buffer[..<(buffer.count - Int(z.avail_out))]
      if step != Z_OK { return step }
    }
  }
  guard code == Z_STREAM_END, z.avail_in == 0 else {
    throw EngineError(
      library: .zlib, code: code, detail: "inflate ended with \(code), \(z.avail_in) left")
  }
  return result
}

/// `data` compressed as one chunk in one call by `deflater` (no dictionary).
func deflateOnce(_ data: some ContiguousBytes, with deflater: any ChunkDeflater, isLast: Bool)
  throws -> [UInt8]
{
  try data.withUnsafeBytes { raw in
    var output = [UInt8](repeating: 0, count: deflater.bound(chunkLength: raw.count))
    let produced = try output.withUnsafeMutableBytes { out in
      try deflater.deflate(
        chunk: raw, dictionary: UnsafeRawBufferPointer(start: nil, count: 0), isLast: isLast,
        into: out)
    }
    return Array(output[..<produced])
  }
}

/// `data` as libdeflate writes it at `level` in one `libdeflate_deflate_compress` call: a
/// complete raw deflate stream.
func libdeflateCompress(_ data: some ContiguousBytes, level: Int) throws -> [UInt8] {
  let compressor = try #require(libdeflate_alloc_compressor(Int32(level)))
  defer { libdeflate_free_compressor(compressor) }
  return try data.withUnsafeBytes { raw in
    var output = [UInt8](
      repeating: 0, count: libdeflate_deflate_compress_bound(compressor, raw.count))
    let produced = output.withUnsafeMutableBytes { out in
      libdeflate_deflate_compress(
        compressor, raw.baseAddress, raw.count, out.baseAddress, out.count)
    }
    try #require(produced > 0)
    return Array(output[..<produced])
  }
}

/// Inflates `stream` with `inflater`, fed in pieces of `piece` bytes, into a buffer of
/// `outputSize` bytes at a time; also returns the bytes left unused after the stream ended.
func inflate(
  _ stream: [UInt8], with inflater: any RawInflater, piece: Int, outputSize: Int = 4096
) throws -> (data: [UInt8], unused: Int, finished: Bool) {
  var data: [UInt8] = []
  var offset = 0
  var finished = false
  let output = UnsafeMutableRawBufferPointer.allocate(byteCount: outputSize, alignment: 16)
  defer { output.deallocate() }
  try stream.withUnsafeBytes { raw in
    while offset < raw.count && !finished {
      let end = min(raw.count, offset + piece)
      while true {
        let step = try inflater.inflate(
          input: UnsafeRawBufferPointer(rebasing: raw[offset..<end]), output: output)
        data += UnsafeRawBufferPointer(rebasing: output[..<step.produced])
        offset += step.consumed
        finished = step.finished
        if finished || (offset == end && step.produced < outputSize) { break }
        if step.consumed == 0 && step.produced == 0 { break }
      }
    }
  }
  // Bytes the inflater read past the end in earlier calls count as unused too.
  return (data, stream.count - offset + inflater.takeBytesPastTheEnd().count, finished)
}

@Suite struct EngineTests {
  @Test(
    "chunks of both engines join into one deflate stream zlib reads",
    arguments: [Engine.fast, .zlib], [0, 1, 65_535, 65_536, 65_537, 300_000, 1_000_000])
  func chunksJoinIntoOneStream(engine: Engine, size: Int) throws {
    for data in [TestData.text(size), TestData.random(size)] {
      let stream = try deflateInChunks(data, engine: engine, chunkSize: 65_536)
      #expect(try zlibInflate(stream) == data)
    }
  }

  @Test("every chunk but the last ends with the sync marker", arguments: [Engine.fast, .zlib])
  func chunksEndWithTheSyncMarker(engine: Engine) throws {
    let data = TestData.text(200_000)
    let output = try deflateOnce(data, with: try engine.makeDeflater(level: 6), isLast: false)
    #expect(Array(output.suffix(4)) == SyncMarker.bytes)
  }

  /// `data` as libdeflate's level 1 writes it in one call, then reopened unless `isLast`:
  /// one stream for the whole chunk.
  func oneStream(_ data: ArraySlice<UInt8>, isLast: Bool) throws -> [UInt8] {
    var output = try libdeflateCompress(data, level: 1)
    if isLast { return output }
    let produced = output.count
    output += [UInt8](repeating: 0, count: LibdeflateDeflater.reopeningRoom)
    let location = try output[..<produced].withUnsafeBytes { try FinalBlockLocator().locate($0) }
    let length = output.withUnsafeMutableBytes {
      LibdeflateDeflater.reopen($0, location: location)
    }
    return Array(output[..<length])
  }

  @Test(
    "at libdeflate's level 1 (squeeze -3) a chunk of 128 KiB or more that is not the last is two streams, one per half"
  )
  func longChunksAreCompressedInHalves() throws {
    // Halves of 125,000 bytes: too short to be halved again.
    let data = TestData.text(250_000, seed: 5)[...]
    let middle = 125_000
    for deflater in [try LibdeflateDeflater(level: 1), try Engine.fast.makeDeflater(level: 3)] {
      let whole = try deflateOnce(data, with: deflater, isLast: false)
      let halves =
        try oneStream(data[..<middle], isLast: false)
        + oneStream(data[middle...], isLast: false)
      // Compared as Booleans: a failure then prints no megabytes of bytes.
      let isHalves = whole == halves
      #expect(isHalves)
      // It restores as part of a file: an empty last chunk ends the stream.
      let stream = whole + (try deflateOnce([], with: deflater, isLast: true))
      let restored = try inflate(stream, with: try Engine.zlib.makeInflater(), piece: 1 << 20)
      let restoresTheData = restored.finished && restored.data == Array(data)
      #expect(restoresTheData)
      // A byte under 128 KiB, and the last chunk at any length: one stream.
      let short = data[..<(128 << 10 - 1)]
      let shortIsOneStream =
        try deflateOnce(short, with: deflater, isLast: false) == oneStream(short, isLast: false)
      #expect(shortIsOneStream)
      let lastIsOneStream =
        try deflateOnce(data, with: deflater, isLast: true) == oneStream(data, isLast: true)
      #expect(lastIsOneStream)
    }
    // At libdeflate's other levels a long chunk is one stream: its first half compressed
    // alone is not where it starts.
    let six = try LibdeflateDeflater(level: 6)
    let wholeAtSix = try deflateOnce(data, with: six, isLast: false)
    let firstHalfAtSix = try deflateOnce(data[..<middle], with: six, isLast: false)
    #expect(!wholeAtSix.starts(with: firstHalfAtSix))
  }

  @Test("the locator finds libdeflate's final block at every level", arguments: 1...12)
  func locatorFindsTheFinalBlock(level: Int) throws {
    let locator = FinalBlockLocator()
    for (index, data) in [
      TestData.text(150_000, seed: UInt64(level) + 42), TestData.random(70_000), [], [7],
      Array(repeating: 0, count: 100_000),
    ].enumerated() {
      let compressor = try LibdeflateDeflater(level: level)
      var output = [UInt8](repeating: 0, count: compressor.bound(chunkLength: data.count))
      let produced = try data.withUnsafeBytes { raw in
        try output.withUnsafeMutableBytes { out in
          try compressor.deflate(
            chunk: raw, dictionary: UnsafeRawBufferPointer(start: nil, count: 0), isLast: true,
            into: out)
        }
      }
      let location = try output[..<produced].withUnsafeBytes { try locator.locate($0) }
      #expect((location.endBit + 7) / 8 == produced, "input \(index)")
      // BFINAL is set at the header, and clearing it makes zlib want more input.
      #expect(output[location.headerBit / 8] >> UInt8(location.headerBit % 8) & 1 == 1)
    }
  }

  @Test("the locator rejects what is not a complete deflate stream")
  func locatorRejectsBrokenStreams() throws {
    let locator = FinalBlockLocator()
    let stream = try deflateInChunks(TestData.text(100_000), engine: .fast, chunkSize: 200_000)
    // Truncated, and cut to nothing.
    #expect(throws: EngineError.self) {
      try stream[..<(stream.count / 2)].withUnsafeBytes { _ = try locator.locate($0) }
    }
    #expect(throws: EngineError.self) {
      try [UInt8]([0xff]).withUnsafeBytes { _ = try locator.locate($0) }
    }
    // A reserved block type.
    #expect(throws: EngineError.self) {
      try [UInt8]([0x07, 0, 0]).withUnsafeBytes { _ = try locator.locate($0) }
    }
  }

  @Test(
    "both inflaters decode a stream fed in any pieces and give back what follows it",
    arguments: [Engine.fast, .zlib], [1, 3, 7, 4096, 1 << 20])
  func inflatersStreamAndStopAtTheEnd(engine: Engine, piece: Int) throws {
    let data = TestData.text(300_000)
    let trailer: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8]
    let stream = try deflateInChunks(data, engine: .fast, chunkSize: 100_000) + trailer
    let result = try inflate(stream, with: try engine.makeInflater(), piece: piece)
    #expect(result.finished)
    #expect(result.data == data)
    #expect(result.unused == trailer.count)
  }

  @Test(
    "a chunk fed alone ends on a byte-aligned block boundary", arguments: [Engine.fast, .zlib])
  func aChunkEndsOnABlockBoundary(engine: Engine) throws {
    let data = TestData.text(250_000)
    let deflater = try Engine.fast.makeDeflater(level: 6)
    var output = [UInt8](repeating: 0, count: deflater.bound(chunkLength: data.count))
    let produced = try data.withUnsafeBytes { raw in
      try output.withUnsafeMutableBytes { out in
        try deflater.deflate(
          chunk: raw, dictionary: UnsafeRawBufferPointer(start: nil, count: 0), isLast: false,
          into: out)
      }
    }
    let inflater = try engine.makeInflater()
    let result = try inflate(Array(output[..<produced]), with: inflater, piece: 1 << 20)
    #expect(result.data == data)
    #expect(!result.finished)
    #expect(inflater.endsOnByteAlignedBlockBoundary)
    // Cut one byte short, it is not.
    let short = try engine.makeInflater()
    _ = try inflate(Array(output[..<(produced - 1)]), with: short, piece: 1 << 20)
    #expect(!short.endsOnByteAlignedBlockBoundary)
  }

  @Test(
    "a chunk that needs the previous chunk's window fails alone and decodes with it",
    arguments: [Engine.fast, .zlib])
  func dictionaryResumesAStream(engine: Engine) throws {
    let data = TestData.text(200_000)
    // zlib-engine chunks refer back into the previous chunk.
    let first = try deflateInChunks(Array(data[..<100_000]), engine: .zlib, chunkSize: 100_000)
    let whole = try deflateInChunks(data, engine: .zlib, chunkSize: 100_000)
    var firstChunkLength = 0
    // The first chunk is everything up to and including its sync marker.
    for index in 3..<whole.count where Array(whole[(index - 3)...index]) == SyncMarker.bytes {
      firstChunkLength = index + 1
      break
    }
    _ = first
    let second = Array(whole[firstChunkLength...])
    #expect(throws: InflateError.self) {
      _ = try inflate(second, with: try engine.makeInflater(), piece: 1 << 20)
    }
    let resumed = try engine.makeInflater()
    try data[(100_000 - 32_768)..<100_000].withUnsafeBytes { try resumed.setDictionary($0) }
    let result = try inflate(second, with: resumed, piece: 1 << 20)
    #expect(result.finished)
    #expect(result.data == Array(data[100_000...]))
  }

  @Test("levels outside the engine's range are refused")
  func levelsAreCheckedAgainstTheEngine() {
    #expect(Engine.fast.levels == 1...12)
    #expect(Engine.zlib.levels == 1...9)
    #expect(throws: EngineError.self) { _ = try Engine.zlib.makeDeflater(level: 10) }
    #expect(throws: EngineError.self) { _ = try Engine.fast.makeDeflater(level: 13) }
  }

  @Test("CRC-32 matches zlib's and combines")
  func crcMatchesZlib() {
    let data = TestData.random(100_003)
    var crc = CRC32()
    data.withUnsafeBytes { crc.update($0) }
    let reference = data.withUnsafeBufferPointer { UInt32(crc32_z(0, $0.baseAddress, $0.count)) }
    #expect(crc.value == reference)
    var first = CRC32()
    var second = CRC32()
    data[..<40_000].withUnsafeBytes { first.update($0) }
    data[40_000...].withUnsafeBytes { second.update($0) }
    #expect(CRC32.combine(first.value, second.value, secondLength: 60_003) == reference)
  }
}

@Suite struct IncompressibleDataTests {
  @Test(
    "stored blocks decode to the data, with and without the sync marker",
    arguments: [0, 1, 65_535, 65_536, 200_000])
  func storedBlocksRoundTrip(length: Int) throws {
    let data = TestData.random(length, seed: UInt64(length) + 5)
    for isLast in [true, false] {
      var output = [UInt8](repeating: 0, count: StoredBlocks.size(ofLength: length, isLast: isLast))
      let written = try #require(
        data.withUnsafeBytes { raw in
          output.withUnsafeMutableBytes { StoredBlocks.write(raw, isLast: isLast, into: $0) }
        })
      #expect(written == output.count)
      if isLast {
        #expect(try zlibInflate(output) == data)
      } else {
        #expect(Array(output.suffix(4)) == SyncMarker.bytes)
        // A non-final chunk followed by an empty final block is a complete stream.
        #expect(try zlibInflate(output + [0x03, 0x00]) == data)
      }
    }
    // Too small a buffer is refused, never overrun.
    var small = [UInt8](
      repeating: 0, count: max(0, StoredBlocks.size(ofLength: length, isLast: true) - 1))
    #expect(
      data.withUnsafeBytes { raw in
        small.withUnsafeMutableBytes { StoredBlocks.write(raw, isLast: true, into: $0) }
      } == nil)
  }

  @Test func theProbeStoresRandomDataAndDeflatesText() throws {
    let probe = try IncompressibleProbe()
    let random = TestData.random(1 << 20, seed: 9)
    let text = TestData.text(1 << 20, seed: 9)
    // Random bytes whose runs repeat within the window deflate well: never stored.
    let repeated = Array((0..<64).map { _ in TestData.random(16 << 10, seed: 3) }.joined())
    #expect(random.withUnsafeBytes { probe.isIncompressible($0) })
    #expect(!text.withUnsafeBytes { probe.isIncompressible($0) })
    #expect(!repeated.withUnsafeBytes { probe.isIncompressible($0) })
    // Short chunks are not probed.
    #expect(!random[..<(60 << 10)].withUnsafeBytes { probe.isIncompressible($0) })
  }

  @Test func theFastEngineStoresIncompressibleChunksAndZlibDoesNot() throws {
    let random = TestData.random(3 << 20, seed: 19)
    let fast = try deflateInChunks(random, engine: .fast, chunkSize: 1 << 20)
    let zlib = try deflateInChunks(random, engine: .zlib, chunkSize: 1 << 20)
    #expect(try zlibInflate(fast) == random)
    #expect(fast.count == 3 * StoredBlocks.size(ofLength: 1 << 20, isLast: false) - 5)
    #expect(fast[0] == 0, "a stored, non-final block starts the stream")
    #expect(try zlibInflate(zlib) == random)
  }
}
