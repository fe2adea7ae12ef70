import Foundation
import Glibc
import TestSupport
import Testing

@testable import SqueezeEngines

/// ISA-L's compressor behind the fast engine's levels 1 and 2: its chunks join into one
/// deflate stream that zlib and ISA-L read, every chunk but the last ends with the sync
/// marker on a block boundary, the level map sends each chunk to the library it names, data
/// that does not compress is stored, and the bytes do not depend on where in memory ISA-L's
/// stream lies.
@Suite struct ISALDeflateTests {
  /// The levels the map gives ISA-L a part of.
  static let isalLevels = [1, 2]

  @Test(
    "ISA-L's chunks join into one deflate stream both inflaters read",
    arguments: isalLevels,
    [0, 1, 1023, 1024, 2047, 2048, 65_535, 65_536, 65_537, 300_000, 1_000_000])
  func chunksJoinIntoOneStream(level: Int, size: Int) throws {
    for data in [TestData.text(size, seed: UInt64(size)), TestData.random(size)] {
      let stream = try deflateInChunks(data, engine: .fast, level: level, chunkSize: 65_536)
      #expect(try zlibInflate(stream) == data)
      let isal = try inflate(stream, with: try Engine.fast.makeInflater(), piece: 1 << 20)
      #expect(isal.finished)
      #expect(isal.data == data)
    }
  }

  @Test(
    "the level map gives ISA-L level 1 from 1 KiB and, with AVX-512, level 2 from 2 KiB; libdeflate the rest (its level 1 at -3, and at -2 without AVX-512)",
    arguments: [true, false])
  func theLevelMapIsTheDocumentedOne(avx512: Bool) {
    func library(_ level: Int, _ length: Int) -> EngineError.Library {
      FastLevels.library(forLevel: level, chunkLength: length, avx512: avx512)
    }
    #expect(library(1, 1023) == .libdeflate)
    #expect(library(1, 1024) == .isal)
    #expect(library(1, 1 << 20) == .isal)
    #expect(FastLevels.isal(forLevel: 1, avx512: avx512)?.isalLevel == 1)
    #expect(FastLevels.libdeflateLevel(forLevel: 1, avx512: avx512) == 1)
    if avx512 {
      #expect(library(2, 2047) == .libdeflate)
      #expect(library(2, 2048) == .isal)
      #expect(FastLevels.isal(forLevel: 2, avx512: avx512)?.isalLevel == 3)
      #expect(FastLevels.libdeflateLevel(forLevel: 2, avx512: avx512) == 2)
    } else {
      #expect(library(2, 1 << 20) == .libdeflate)
      #expect(FastLevels.isal(forLevel: 2, avx512: avx512) == nil)
      #expect(FastLevels.libdeflateLevel(forLevel: 2, avx512: avx512) == 1)
    }
    for level in 3...12 {
      #expect(FastLevels.isal(forLevel: level, avx512: avx512) == nil, "level \(level)")
      #expect(library(level, 1 << 20) == .libdeflate)
    }
    // libdeflate's own level: 1 at squeeze level 3 (under gzip -3, at two thirds of the CPU
    // of its level 3), the squeeze level from 4 on.
    #expect(FastLevels.libdeflateLevel(forLevel: 3, avx512: avx512) == 1)
    for level in 4...12 {
      #expect(FastLevels.libdeflateLevel(forLevel: level, avx512: avx512) == level)
    }
  }

  @Test("the map's CPU test agrees with /proc/cpuinfo's flags for ISA-L's AVX-512 code")
  func theCPUTestAgreesWithTheKernel() throws {
    let text = try String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
    let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("flags") })
    let flags = Set(line.split(separator: " ").map(String.init))
    let listed = ["avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"].allSatisfy(
      flags.contains)
    #expect(FastLevels.isalUsesAVX512 == listed)
  }

  /// The engine's compressor writes what the library the map names writes on its own: the
  /// map is what runs, not only what is documented.
  @Test(
    "each chunk is compressed by the library the level map names",
    arguments: [1, 2, 3, 6], [100, 1023, 1024, 2047, 2048, 70_000, 1 << 20])
  func chunksGoWhereTheMapSays(level: Int, size: Int) throws {
    let data = TestData.text(size, seed: 7)
    let engine = try Engine.fast.makeDeflater(level: level)
    for isLast in [true, false] {
      let written = try deflateOnce(data, with: engine, isLast: isLast)
      let expected: [UInt8]
      switch FastLevels.library(forLevel: level, chunkLength: size) {
      case .isal:
        let isalLevel = try #require(FastLevels.isal(forLevel: level)?.isalLevel)
        expected = try deflateOnce(data, with: ISALDeflater(level: isalLevel), isLast: isLast)
      default:
        expected = try deflateOnce(
          data, with: LibdeflateDeflater(level: FastLevels.libdeflateLevel(forLevel: level)),
          isLast: isLast)
      }
      #expect(written == expected, "level \(level), \(size) bytes, isLast \(isLast)")
    }
  }

  @Test(
    "every ISA-L chunk but the last ends with the sync marker on a block boundary",
    arguments: [1, 2, 3], [Engine.fast, .zlib])
  func chunksEndWithTheSyncMarker(isalLevel: Int, reader: Engine) throws {
    let data = TestData.text(250_000, seed: 3)
    let chunk = try deflateOnce(data, with: ISALDeflater(level: isalLevel), isLast: false)
    #expect(Array(chunk.suffix(4)) == SyncMarker.bytes)
    let inflater = try reader.makeInflater()
    let result = try inflate(chunk, with: inflater, piece: 1 << 20)
    #expect(result.data == data)
    #expect(!result.finished)
    #expect(inflater.endsOnByteAlignedBlockBoundary)
    // The last chunk ends the stream instead.
    let last = try deflateOnce(data, with: ISALDeflater(level: isalLevel), isLast: true)
    #expect(try zlibInflate(last) == data)
  }

  @Test("ISA-L's chunks are independent: each decodes alone, with no window")
  func chunksAreIndependent() throws {
    let data = TestData.text(400_000, seed: 8)
    let deflater = try ISALDeflater(level: 1)
    for start in stride(from: 0, to: data.count, by: 100_000) {
      let piece = Array(data[start..<(start + 100_000)])
      let chunk = try deflateOnce(piece, with: deflater, isLast: false)
      let result = try inflate(chunk, with: try Engine.fast.makeInflater(), piece: 1 << 20)
      #expect(result.data == piece, "chunk at \(start)")
    }
  }

  @Test(
    "random data is stored: never more than 0.1 % larger", arguments: isalLevels,
    [1_000, 50_000, 3 << 20])
  func randomDataIsStored(level: Int, size: Int) throws {
    let random = TestData.random(size, seed: UInt64(size))
    let stream = try deflateInChunks(random, engine: .fast, level: level, chunkSize: 1 << 20)
    #expect(try zlibInflate(stream) == random)
    // Each chunk stored: 5 bytes per 65,535, and a sync marker after all but the last.
    let stored = stride(from: 0, to: size, by: 1 << 20).map { start in
      StoredBlocks.size(ofLength: min(1 << 20, size - start), isLast: start + (1 << 20) >= size)
    }.reduce(0, +)
    #expect(stream.count <= stored, "\(stream.count) bytes, stored \(stored)")
    if size >= 1 << 20 {
      #expect(Double(stream.count) < Double(size) * 1.001)
    }
  }

  /// ISA-L's levels 1 and 2, in one call, file a stream's third byte under a hash slot taken
  /// from the stream's address instead of the data (``ISALDeflater`` has the details). Here
  /// the stream is placed at two addresses: one where that slot is the third byte's own, so
  /// a later match back to it is found, and one where it is not, so it is missed. The chunks
  /// below start `ab` and then a string that recurs a little later, so one call writes
  /// different bytes at the two addresses; the compressor must write the same at both, and
  /// the same as with a stream it allocates itself.
  ///
  /// The hash tables' entries are ISA-L's `IGZIP_LVL1_HASH_SIZE` and `IGZIP_LVL2_HASH_SIZE`
  /// (igzip_lib.h).
  @Test(
    "ISA-L levels 1 and 2 write the same bytes wherever their stream lies in memory",
    arguments: [(isalLevel: 1, hashTableEntries: 8 << 10), (2, 32 << 10)])
  func outputDoesNotDependOnTheStreamsAddress(isalLevel: Int, hashTableEntries: Int) throws {
    let recurring = Array("the third byte's string, which recurs later".utf8)
    let chunks = (1...8).map { seed in
      Array("ab".utf8) + recurring + TestData.random(1_000, seed: UInt64(seed)) + recurring
        + TestData.text(2_000, seed: UInt64(seed))
    }
    // The slot ISA-L's loop hashes a position's four bytes into (the SSE4.2 `crc32`
    // instruction, masked to the hash table), and the one the stream's address gives.
    let mask = UInt32(hashTableEntries - 1)
    let third = recurring.prefix(4).reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    let rightSlot = Self.crc32c(third) & mask
    func slot(_ address: UInt) -> UInt32 {
      Self.crc32c(UInt32(truncatingIfNeeded: address >> 16)) & mask
    }
    // 16 GiB of address space, reserved with no memory behind it, holds a 64 KiB-aligned
    // address of either kind (one in 32,768 is right at level 2).
    let span = 1 << 34
    let region = try #require(
      mmap(nil, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0))
    try #require(region != MAP_FAILED)
    defer { munmap(region, span) }
    let start = (UInt(bitPattern: region) + 0xffff) & ~0xffff
    let end = UInt(bitPattern: region) + UInt(span) - UInt(ISALDeflater.streamByteCount)
    let candidates = stride(from: start, to: end, by: 1 << 16)
    let right = try #require(candidates.first { slot($0) == rightSlot })
    let wrong = try #require(candidates.first { slot($0) != rightSlot })
    for address in [right, wrong] {
      let page = try #require(UnsafeMutableRawPointer(bitPattern: address))
      try #require(mprotect(page, ISALDeflater.streamByteCount, PROT_READ | PROT_WRITE) == 0)
    }
    // The compressors end before the region is unmapped.
    do {
      let atRight = try ISALDeflater(
        level: isalLevel, streamAddress: UnsafeMutableRawPointer(bitPattern: right))
      let atWrong = try ISALDeflater(
        level: isalLevel, streamAddress: UnsafeMutableRawPointer(bitPattern: wrong))
      let allocated = try ISALDeflater(level: isalLevel)
      for (index, chunk) in chunks.enumerated() {
        for isLast in [false, true] {
          let expected = try deflateOnce(chunk, with: allocated, isLast: isLast)
          #expect(
            try deflateOnce(chunk, with: atRight, isLast: isLast) == expected,
            "chunk \(index), isLast \(isLast): the stream at the right slot's address")
          #expect(
            try deflateOnce(chunk, with: atWrong, isLast: isLast) == expected,
            "chunk \(index), isLast \(isLast): the stream at another address")
          let restored = try inflate(expected, with: try Engine.zlib.makeInflater(), piece: 1 << 20)
          #expect(restored.data == chunk)
        }
      }
    }
  }

  /// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78) of a little-endian 32-bit word,
  /// from 0 and with no final inversion: what the SSE4.2 `crc32` instruction computes, ISA-L's
  /// hash at levels 1 and 2.
  static func crc32c(_ word: UInt32) -> UInt32 {
    var crc: UInt32 = 0
    for byte in 0..<4 {
      crc ^= (word >> UInt32(8 * byte)) & 0xff
      for _ in 0..<8 { crc = (crc >> 1) ^ (crc & 1 == 0 ? 0 : 0x82F6_3B78) }
    }
    return crc
  }

  @Test(
    "ISA-L levels 1 and 2 store chunks too short for their two calls; level 3 compresses them",
    arguments: [1, 2, 3], [18, 100, 289])
  func shortChunksAreStoredAtLevelsOneAndTwo(isalLevel: Int, size: Int) throws {
    let data = TestData.text(size, seed: 9)
    for isLast in [false, true] {
      let written = try deflateOnce(data, with: ISALDeflater(level: isalLevel), isLast: isLast)
      let restored = try inflate(written, with: try Engine.zlib.makeInflater(), piece: 1 << 20)
      #expect(restored.data == data)
      let stored = StoredBlocks.size(ofLength: size, isLast: isLast)
      if isalLevel <= 2 {
        #expect(written.count == stored, "level \(isalLevel), \(size) bytes")
      } else {
        #expect(written.count < stored, "level \(isalLevel), \(size) bytes")
      }
    }
  }

  @Test("ISA-L levels outside 1 to 3 are refused")
  func isalLevelsAreChecked() {
    #expect(throws: EngineError.self) { _ = try ISALDeflater(level: 0) }
    #expect(throws: EngineError.self) { _ = try ISALDeflater(level: 4) }
  }

  @Test("output that does not fit is an error, never an overrun")
  func tooSmallAnOutputIsRefused() throws {
    let data = TestData.random(100_000, seed: 4)
    let deflater = try ISALDeflater(level: 1)
    var output = [UInt8](repeating: 0, count: 50_000)
    #expect(throws: EngineError.self) {
      try data.withUnsafeBytes { raw in
        try output.withUnsafeMutableBytes { out in
          _ = try deflater.deflate(
            chunk: UnsafeRawBufferPointer(rebasing: raw[..<60_000]),
            dictionary: UnsafeRawBufferPointer(start: nil, count: 0), isLast: true, into: out)
        }
      }
    }
    // The compressor is still usable afterwards.
    let text = TestData.text(100_000, seed: 5)
    #expect(try zlibInflate(deflateOnce(text, with: deflater, isLast: true)) == text)
  }
}
