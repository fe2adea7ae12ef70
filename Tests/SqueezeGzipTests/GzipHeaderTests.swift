import SqueezeEngines
import SqueezeSystem
import Testing

@testable import SqueezeGzip

@Suite struct GzipHeaderTests {
  @Test func encodesTheFixedFieldsAndTheName() {
    let header = GzipHeader(
      name: Array("a.txt".utf8), modificationTime: Timestamp(seconds: 0x1234_5678, nanoseconds: 9),
      level: .best)
    let bytes = header.encoded
    #expect(Array(bytes.prefix(4)) == [0x1F, 0x8B, 8, 0x08])
    #expect(Array(bytes[4..<8]) == [0x78, 0x56, 0x34, 0x12])
    #expect(bytes[8] == 2)  // XFL: slowest
    #expect(bytes[9] == 3)  // OS: Unix
    #expect(Array(bytes[10...]) == Array("a.txt".utf8) + [0])
  }

  @Test(arguments: [
    (seconds: Int64(-5), stored: UInt32(0)),
    (seconds: Int64(0), stored: UInt32(0)),
    (seconds: Int64(1), stored: UInt32(1)),
    (seconds: Int64(UInt32.max), stored: UInt32.max),
    (seconds: Int64(UInt32.max) + 1, stored: UInt32(0)),
  ])
  func storesTimesOutsideThe32BitRangeAsZero(seconds: Int64, stored: UInt32) {
    let header = GzipHeader(
      name: nil, modificationTime: Timestamp(seconds: seconds, nanoseconds: 0), level: .default)
    #expect(header.modificationTime == stored)
  }

  @Test func parsesWhatItEncodes() {
    let header = GzipHeader(
      name: [0xFF, 0x41, 0x20], modificationTime: Timestamp(seconds: 1_700_000_000, nanoseconds: 0),
      level: .fastest)
    let bytes = header.encoded
    let parsed = bytes.withUnsafeBytes { GzipHeader.parse($0) }
    #expect(parsed == .header(header, length: bytes.count))
  }

  @Test func parsesEveryOptionalField() {
    var bytes: [UInt8] = [0x1F, 0x8B, 8, 0x1F, 1, 0, 0, 0, 0, 3]
    bytes += [3, 0, 7, 8, 9]  // FEXTRA, 3 bytes
    bytes += Array("n".utf8) + [0]
    bytes += Array("comment".utf8) + [0]
    var crc = CRC32()
    bytes.withUnsafeBytes { crc.update($0) }
    bytes += [UInt8(crc.value & 0xFF), UInt8(crc.value >> 8 & 0xFF)]
    let parsed = bytes.withUnsafeBytes { GzipHeader.parse($0) }
    guard case .header(let header, let length) = parsed else {
      Issue.record("not parsed: \(parsed)")
      return
    }
    #expect(length == bytes.count)
    #expect(header.extra == [7, 8, 9])
    #expect(header.name == Array("n".utf8))
    #expect(header.comment == Array("comment".utf8))
    #expect(header.isText)
    #expect(header.hasHeaderCRC)
  }

  @Test(arguments: [
    (bytes: [UInt8]([0x1F, 0x8C]), expected: GzipHeader.ParseResult.invalid(.badMagic)),
    (bytes: [0x1F, 0x8B, 7], expected: .invalid(.unknownMethod(7))),
    (bytes: [0x1F, 0x8B, 8, 0x20], expected: .invalid(.reservedFlags(0x20))),
    (bytes: [0x1F, 0x8B, 8, 0], expected: .needMoreData),
    (bytes: [0x1F, 0x8B, 8, 0x08, 0, 0, 0, 0, 0, 3, 0x41], expected: .needMoreData),
  ])
  func rejectsOrWaitsOnBadOrShortHeaders(bytes: [UInt8], expected: GzipHeader.ParseResult) {
    #expect(bytes.withUnsafeBytes { GzipHeader.parse($0) } == expected)
  }

  @Test func trailerIsLittleEndianCRCAndSizeModulo2To32() {
    let trailer = GzipTrailer(crc: 0xAABB_CCDD, uncompressedSize: (1 << 32) + 5)
    #expect(trailer.encoded == [0xDD, 0xCC, 0xBB, 0xAA, 5, 0, 0, 0])
    #expect(trailer.encoded.withUnsafeBytes { GzipTrailer($0) } == trailer)
  }

  @Test(arguments: [
    (
      name: "with a name",
      header: GzipHeader(
        name: Array("a.txt".utf8),
        modificationTime: Timestamp(seconds: 0x1234_5678, nanoseconds: 0),
        level: .best)
    ),
    (name: "without", header: GzipHeader(name: nil, modificationTime: nil, level: .fastest)),
    (
      name: "every field",
      header: GzipHeader(
        modificationTime: 7, name: [0xFF, 0x41], comment: Array("c".utf8), extra: [1, 2, 3],
        extraFlags: 0, operatingSystem: 3, isText: true, hasHeaderCRC: false)
    ),
  ])
  func aHeaderWrittenIntoABufferIsItsEncodedBytes(name: String, header: GzipHeader) {
    var buffer = [UInt8](repeating: 0xEE, count: 64)
    let written = buffer.withUnsafeMutableBytes { header.write(into: $0) }
    #expect(written == header.encoded.count, "\(name)")
    #expect(written == header.encodedLength, "\(name)")
    #expect(Array(buffer.prefix(written ?? 0)) == header.encoded, "\(name)")
    #expect(buffer[(written ?? 0)...].allSatisfy { $0 == 0xEE }, "nothing written past it")
  }

  @Test func aHeaderIsNotWrittenIntoATooShortBuffer() {
    let header = GzipHeader(
      name: Array("name.txt".utf8), modificationTime: nil, level: .default)
    var buffer = [UInt8](repeating: 0xEE, count: header.encodedLength - 1)
    #expect(buffer.withUnsafeMutableBytes { header.write(into: $0) } == nil)
    #expect(buffer.allSatisfy { $0 == 0xEE })
  }

  @Test func aTrailerWrittenIntoABufferIsItsEncodedBytes() {
    let trailer = GzipTrailer(crc: 0xAABB_CCDD, uncompressedSize: (1 << 32) + 5)
    var buffer = [UInt8](repeating: 0, count: 9)
    #expect(buffer.withUnsafeMutableBytes { trailer.write(into: $0) } == 8)
    #expect(Array(buffer.prefix(8)) == trailer.encoded)
    var short = [UInt8](repeating: 0, count: 7)
    #expect(short.withUnsafeMutableBytes { trailer.write(into: $0) } == nil)
  }

  @Test func crcCombineEqualsTheCRCOfTheConcatenation() {
    let first = Array("hello, ".utf8)
    let second = Array("world".utf8)
    var a = CRC32()
    first.withUnsafeBytes { a.update($0) }
    var b = CRC32()
    second.withUnsafeBytes { b.update($0) }
    var whole = CRC32()
    (first + second).withUnsafeBytes { whole.update($0) }
    #expect(CRC32.combine(a.value, b.value, secondLength: Int64(second.count)) == whole.value)
    #expect(whole.value == 0xFFAB_723A)  // zlib.crc32(b"hello, world")
  }
}
