import Foundation
import SqueezeEngines
import SqueezeGzip
import Testing

@testable import TestSupport

/// Stored deflate blocks (RFC 1951 section 3.2.4), written without zlib: the framing byte for byte,
/// and members the system's gzip reads back.
@Suite struct StoredBlocksTests {
  static func encode(_ input: [UInt8], isLast: Bool) -> [UInt8] {
    var output = [UInt8](
      repeating: 0xAA, count: StoredBlocks.size(ofLength: input.count, isLast: isLast))
    let written = input.withUnsafeBytes { source in
      output.withUnsafeMutableBytes { StoredBlocks.write(source, isLast: isLast, into: $0) }
    }
    #expect(written == output.count, "size(ofLength:isLast:) is exact")
    return output
  }

  @Test func anEmptyLastBlockIsTheEmptyDeflateStream() {
    #expect(Self.encode([], isLast: true) == [0x01, 0x00, 0x00, 0xFF, 0xFF])
    #expect(Self.encode([], isLast: false) == [0x00, 0x00, 0x00, 0xFF, 0xFF])
  }

  @Test func blocksHoldAtMost65535BytesWithLengthAndItsComplement() {
    let input = TestData.random(65_536)
    let output = Self.encode(input, isLast: true)
    #expect(output.count == 65_536 + 10)
    #expect(Array(output[0..<5]) == [0x00, 0xFF, 0xFF, 0x00, 0x00])
    #expect(Array(output[5..<(5 + 65_535)]) == Array(input[..<65_535]))
    let second = 5 + 65_535
    #expect(Array(output[second..<(second + 5)]) == [0x01, 0x01, 0x00, 0xFE, 0xFF])
    #expect(output.last == input.last)
  }

  @Test(arguments: [0, 1, 65_535, 65_536, 200_000])
  func aMemberOfStoredBlocksIsReadByTheSystemGzip(length: Int) throws {
    let folder = TemporaryFolder("stored")
    let input = TestData.random(length, seed: UInt64(length) + 1)
    // Two runs of blocks, the first not final: how a stored chunk sits between others.
    let cut = length / 3
    var member = GzipHeader(name: Array("x".utf8), modificationTime: nil, level: .default).encoded
    member += Self.encode(Array(input[..<cut]), isLast: false)
    member += Self.encode(Array(input[cut...]), isLast: true)
    var crc = CRC32()
    input.withUnsafeBytes { crc.update($0) }
    member += GzipTrailer(crc: crc.value, uncompressedSize: Int64(length)).encoded
    let path = try folder.write("x.gz", member)
    #expect(try SystemGzip.decompress(path) == input)
    #expect(Double(member.count) <= Double(length) * 1.0001 + 40)
  }
}
