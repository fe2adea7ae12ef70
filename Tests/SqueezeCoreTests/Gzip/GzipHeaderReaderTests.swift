import SqueezeEngines
import Testing

@testable import SqueezeCore

/// The streaming header reader: the same header whatever the pieces, every length RFC 1952
/// allows, only bounded parts kept.
@Suite struct GzipHeaderReaderTests {
  /// A header with FEXTRA, FNAME, FCOMMENT and (when `crc`) FHCRC.
  static func header(
    extra: [UInt8], name: [UInt8], comment: [UInt8], crc: Bool = true
  ) -> [UInt8] {
    var bytes: [UInt8] = [0x1F, 0x8B, 8, 0x1C | (crc ? 0x02 : 0), 1, 2, 3, 4, 0, 3]
    bytes += [UInt8(extra.count & 0xFF), UInt8(extra.count >> 8)] + extra
    bytes += name + [0] + comment + [0]
    if crc {
      var sum = CRC32()
      bytes.withUnsafeBytes { sum.update($0) }
      bytes += [UInt8(sum.value & 0xFF), UInt8(sum.value >> 8 & 0xFF)]
    }
    return bytes
  }

  /// Feeds `bytes` (followed by `after`) in pieces of `piece` bytes.
  static func read(_ bytes: [UInt8], piece: Int, after: [UInt8] = []) -> (
    GzipHeader.ParseResult, consumedOfLast: Int, pieces: Int
  ) {
    var reader = GzipHeaderReader()
    let all = bytes + after
    var start = 0
    var pieces = 0
    while start < all.count {
      let end = min(all.count, start + piece)
      pieces += 1
      let (result, consumed) = all[start..<end].withUnsafeBytes { reader.read($0) }
      if result != .needMoreData { return (result, consumed, pieces) }
      #expect(consumed == end - start, "a piece the header goes on through is taken whole")
      start = end
    }
    return (.needMoreData, 0, pieces)
  }

  @Test(arguments: [1, 3, 7, 4096, 1 << 20])
  func theHeaderIsTheSameWhateverThePieces(piece: Int) {
    let extra = [UInt8](repeating: 7, count: 65_535)
    let comment = [UInt8](repeating: UInt8(ascii: "c"), count: 70_000)
    let bytes = Self.header(extra: extra, name: Array("a.txt".utf8), comment: comment)
    let (result, consumed, _) = Self.read(bytes, piece: piece, after: [0xAA, 0xBB])
    guard case .header(let header, let length) = result else {
      Issue.record("not read: \(result)")
      return
    }
    #expect(length == bytes.count)
    #expect(consumed == (bytes.count - 1) % piece + 1, "the bytes after the header are left")
    #expect(header.extra == extra, "FEXTRA, at most 65,535 bytes, is kept whole")
    #expect(header.name == Array("a.txt".utf8) && header.nameLength == 5)
    #expect(header.comment == nil, "a comment over 1 KiB is read past, not kept")
    #expect(header.modificationTime == 0x0403_0201)
    #expect(header.hasHeaderCRC)
  }

  @Test func aNameLongerThanAFileNameCanBeIsCountedNotKept() {
    let long = [UInt8](repeating: UInt8(ascii: "n"), count: 3_000_000)
    for name in [long, Array(long.prefix(256)), Array(long.prefix(255))] {
      let bytes = Self.header(extra: [], name: name, comment: Array("short".utf8))
      guard case .header(let header, let length) = Self.read(bytes, piece: 65_536).0 else {
        Issue.record("a \(name.count)-byte name was not read")
        continue
      }
      #expect(length == bytes.count)
      #expect(header.nameLength == name.count)
      #expect(header.name == (name.count <= 255 ? name : nil))
      #expect(header.comment == Array("short".utf8))
    }
  }

  @Test func theHeaderCRCCoversEveryByteOfALongHeader() {
    var bytes = Self.header(
      extra: [1, 2], name: Array("x".utf8), comment: [UInt8](repeating: 0x41, count: 200_000))
    bytes[5000] ^= 0x01
    #expect(Self.read(bytes, piece: 4096).0 == .invalid(.badHeaderCRC))
  }

  @Test func aFaultInTheFixedPartStopsThereKeepingTheBytesTaken() {
    var reader = GzipHeaderReader()
    let bytes: [UInt8] = [0x1F, 0x8B, 7, 0, 9, 9]
    let (result, consumed) = bytes.withUnsafeBytes { reader.read($0) }
    #expect(result == .invalid(.unknownMethod(7)))
    #expect(consumed == 3)
    #expect(reader.fixedBytes == [0x1F, 0x8B, 7])
  }
}
