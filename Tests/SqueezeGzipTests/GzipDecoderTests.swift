import CZlib
import Foundation
import SqueezeEngines
import TestSupport
import Testing

@testable import SqueezeGzip

/// The error a test's sink would throw: none of these sinks fails.
struct SinkFailure: Error {}

@Suite struct GzipDecoderTests {
  /// A gzip member made by zlib itself (independent of squeeze's writer).
  static func member(_ data: [UInt8], name: String? = nil) -> [UInt8] {
    var header = GzipHeader(
      name: name.map { Array($0.utf8) }, modificationTime: nil, level: .default
    ).encoded
    var bound = compressBound(UInt(data.count)) + 64
    var raw = [UInt8](repeating: 0, count: Int(bound))
    // zlib's compress2 writes a zlib stream: 2-byte header, deflate, 4-byte Adler-32.
    _ = data.withUnsafeBufferPointer { input in
      compress2(&raw, &bound, input.baseAddress, UInt(data.count), 6)
    }
    let deflate = Array(raw[2..<(Int(bound) - 4)])
    var crc = CRC32()
    data.withUnsafeBytes { crc.update($0) }
    header += deflate
    header += GzipTrailer(crc: crc.value, uncompressedSize: Int64(data.count)).encoded
    return header
  }

  /// Decodes `bytes` fed in pieces of `piece` bytes.
  static func decode(
    _ bytes: [UInt8], piece: Int = 7, passingTrailingDataThrough: Bool = false,
    engine: Engine = .zlib
  ) throws -> (
    data: [UInt8], decoder: GzipDecoder
  ) {
    let inflater = try engine.makeInflater()
    let output = UnsafeMutableRawBufferPointer.allocate(byteCount: 1000, alignment: 8)
    defer { output.deallocate() }
    var decoder = GzipDecoder(inflater: inflater, output: output)
    decoder.passesTrailingDataThrough = passingTrailingDataThrough
    var data: [UInt8] = []
    var start = 0
    while start < bytes.count {
      let end = min(bytes.count, start + piece)
      try bytes[start..<end].withUnsafeBytes { chunk in
        try decoder.feed(chunk) { (out: UnsafeRawBufferPointer) throws(SinkFailure) in
          data.append(contentsOf: out)
        }
      }
      start = end
    }
    try decoder.finish()
    return (data, decoder)
  }

  static func formatError(_ bytes: [UInt8], engine: Engine = .zlib) -> GzipFormatError? {
    do {
      _ = try decode(bytes, piece: 4096, engine: engine)
      return nil
    } catch let error as GzipStreamError<SinkFailure> {
      if case .format(let format) = error { return format }
      return nil
    } catch let error as GzipFormatError {
      return error
    } catch {
      return nil
    }
  }

  @Test(arguments: Engine.allCases, [1, 7, 4096])
  func decodesConcatenatedMembersFedInAnyPieces(engine: Engine, piece: Int) throws {
    let first = TestData.text(5000, seed: 1)
    let second = TestData.random(3000, seed: 2)
    let (data, decoder) = try Self.decode(
      Self.member(first, name: "a") + Self.member(second), piece: piece, engine: engine)
    #expect(data == first + second)
    #expect(decoder.members == 2)
    #expect(decoder.firstHeader?.name == Array("a".utf8))
  }

  @Test(arguments: Engine.allCases, [1, 3, 7, 4096])
  func passesTrailingDataThroughLikeGzipDcf(engine: Engine, piece: Int) throws {
    let first = TestData.text(3000, seed: 4)
    let second = TestData.text(2000, seed: 5)
    let tail =
      Array("plain text after the members\n".utf8) + [0, 0x1F, 0x8B] + TestData.random(900)
    let input = Self.member(first) + Self.member(second) + tail
    let (data, decoder) = try Self.decode(
      input, piece: piece, passingTrailingDataThrough: true, engine: engine)
    #expect(data == first + second + tail, "members decoded, the rest copied unchanged")
    #expect(decoder.members == 2)
    // Zeros are copied too, as gzip -dcf does.
    let zeros = try Self.decode(
      Self.member(first) + [0, 0, 0], piece: piece, passingTrailingDataThrough: true,
      engine: engine)
    #expect(zeros.data == first + [0, 0, 0])
    // Without it, the same input is trailing garbage.
    #expect(
      Self.formatError(input, engine: engine)
        == .trailingGarbage(offset: Int64(input.count - tail.count)))
  }

  @Test(arguments: Engine.allCases)
  func acceptsZeroPaddingAfterTheLastMember(engine: Engine) throws {
    let (data, _) = try Self.decode(
      Self.member(Array("abc".utf8)) + [0, 0, 0, 0], engine: engine)
    #expect(data == Array("abc".utf8))
  }

  @Test(arguments: Engine.allCases)
  func reportsEachKindOfDamage(engine: Engine) {
    func formatError(_ bytes: [UInt8]) -> GzipFormatError? {
      Self.formatError(bytes, engine: engine)
    }
    let good = Self.member(TestData.text(20000, seed: 3))
    #expect(formatError([]) == .empty)
    #expect(
      formatError(Array(good.prefix(good.count - 3)))
        == .truncated(offset: Int64(good.count - 3)))
    #expect(formatError(Array(good.prefix(5))) == .truncated(offset: 5))
    var badMagic = good
    badMagic[1] = 0x8C
    #expect(formatError(badMagic) == .badMagic)
    var badFlags = good
    badFlags[3] = 0x80
    #expect(formatError(badFlags) == .reservedFlags(0x80))
    var badCRC = good
    badCRC[good.count - 8] ^= 0xFF
    guard case .crcMismatch = formatError(badCRC) else {
      Issue.record("CRC mismatch not found")
      return
    }
    var badSize = good
    badSize[good.count - 1] ^= 0x01
    guard case .sizeMismatch = formatError(badSize) else {
      Issue.record("ISIZE mismatch not found")
      return
    }
    // Both wrong: both reported, as gzip -t does ("crc error" and "length error").
    var badBoth = good
    badBoth[good.count - 8] ^= 0xFF
    badBoth[good.count - 1] ^= 0x01
    guard
      case .crcAndSizeMismatch(let storedCRC, let computedCRC, let storedSize, let computedSize) =
        formatError(badBoth)
    else {
      Issue.record("both mismatches not found")
      return
    }
    #expect(storedCRC != computedCRC && storedSize != computedSize)
    #expect(
      String(describing: formatError(badBoth)).contains("CRC-32 mismatch")
        && String(describing: formatError(badBoth)).contains("length mismatch"))
    var flipped = good
    flipped[40] ^= 0x55
    switch formatError(flipped) {
    case .corruptDeflateData, .crcMismatch, .sizeMismatch, .crcAndSizeMismatch, .truncated: break
    case let other: Issue.record("a flipped deflate byte gave \(String(describing: other))")
    }
    #expect(
      formatError(good + Array("junk".utf8)) == .trailingGarbage(offset: Int64(good.count)))
    #expect(formatError(good + [0, 0, 7]) == .trailingGarbage(offset: Int64(good.count + 2)))
  }

  @Test func readsAHeaderOfAnyLengthTheFormatAllows() throws {
    // FNAME and FCOMMENT are unbounded in RFC 1952: a 2 MiB name and comment are read (the
    // name is only counted: no file name is that long).
    var bytes: [UInt8] = [0x1F, 0x8B, 8, 0x18, 0, 0, 0, 0, 0, 3]
    bytes += [UInt8](repeating: 0x41, count: 2 << 20) + [0]
    bytes += [UInt8](repeating: 0x42, count: 2 << 20) + [0]
    let data = Array("after a long header\n".utf8)
    let member = Self.member(data)
    bytes += member[10...]
    let (decoded, decoder) = try Self.decode(bytes, piece: 65_536)
    #expect(decoded == data)
    #expect(decoder.firstHeader?.nameLength == 2 << 20)
    #expect(decoder.firstHeader?.name == nil)
    #expect(decoder.overheadBytes == Int64(bytes.count - (member.count - 10 - 8)))
  }

  @Test(arguments: Engine.allCases)
  func aDecompressionBombStreamsInBoundedChunks(engine: Engine) throws {
    // 16 MiB of zeros compresses to ~16 KiB; decoding it never holds more than a chunk.
    let zeros = [UInt8](repeating: 0, count: 16 << 20)
    let bomb = Self.member(zeros)
    #expect(bomb.count < 200_000)
    let inflater = try engine.makeInflater()
    let output = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 8)
    defer { output.deallocate() }
    var decoder = GzipDecoder(inflater: inflater, output: output)
    var largest = 0
    var total = 0
    try bomb.withUnsafeBytes { raw in
      try decoder.feed(raw) { (chunk: UnsafeRawBufferPointer) throws(SinkFailure) in
        largest = max(largest, chunk.count)
        total += chunk.count
      }
    }
    try decoder.finish()
    #expect(total == zeros.count)
    #expect(largest <= 1 << 16)
  }
}
