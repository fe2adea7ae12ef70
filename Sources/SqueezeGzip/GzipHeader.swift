import SqueezeEngines
import SqueezeSystem

/// The header of one gzip member (RFC 1952 section 2.3): what squeeze writes and what it reads back.
///
/// squeeze writes the 10 fixed bytes (ID1 ID2 CM FLG MTIME XFL OS) and, unless `-n`, the
/// original file name (FNAME); it writes no FEXTRA, FCOMMENT or FHCRC, so outputs are the
/// size gzip's would be. The parser accepts every field RFC 1952 defines.
package struct GzipHeader: Sendable, Equatable {
  /// MTIME: the original file's modification time in seconds since the epoch; 0 means none
  /// (RFC 1952 section 2.3.1). Times outside 1 ... 2^32-1 are stored as 0, as gzip does.
  package var modificationTime: UInt32
  /// FNAME: the original file name without the folder, as raw bytes (no NUL); nil when
  /// absent, or when longer than ``longestKeptName`` (``nameLength`` then says how long).
  package var name: [UInt8]?
  /// FNAME's length in bytes (without its zero byte), whether or not ``name`` kept it; 0
  /// when absent.
  package var nameLength: Int
  /// FCOMMENT, as raw bytes; nil when absent or longer than ``longestKeptComment`` (read
  /// past, not kept). squeeze never writes one.
  var comment: [UInt8]?
  /// FEXTRA's payload; squeeze never writes one.
  package var extra: [UInt8]?
  /// XFL: 2 = slowest compression (level 9 and above), 4 = fastest (level 1), otherwise 0.
  var extraFlags: UInt8
  /// OS: 3 = Unix (RFC 1952 section 2.3.1).
  var operatingSystem: UInt8
  /// FTEXT: the writer guessed the data is text (squeeze never sets it).
  var isText: Bool
  /// Whether FHCRC (a CRC-16 of the header) was present and checked.
  var hasHeaderCRC: Bool

  /// A header as squeeze writes it.
  ///
  /// - Parameters:
  ///   - name: the file's base name, or nil for `-n`.
  ///   - modificationTime: the file's modification time, or nil for `-n`.
  ///   - level: the compression level (sets XFL).
  package init(name: [UInt8]?, modificationTime: Timestamp?, level: CompressionLevel) {
    self.name = name
    nameLength = name?.count ?? 0
    if let seconds = modificationTime?.seconds, seconds > 0, seconds <= Int64(UInt32.max) {
      self.modificationTime = UInt32(seconds)
    } else {
      self.modificationTime = 0
    }
    comment = nil
    extra = nil
    extraFlags = level.extraFlags
    operatingSystem = 3
    isText = false
    hasHeaderCRC = false
  }

  /// A header with every field given (``nameLength`` is the name's when not given).
  package init(
    modificationTime: UInt32, name: [UInt8]?, nameLength: Int? = nil, comment: [UInt8]?,
    extra: [UInt8]?, extraFlags: UInt8, operatingSystem: UInt8, isText: Bool,
    hasHeaderCRC: Bool
  ) {
    self.modificationTime = modificationTime
    self.name = name
    self.nameLength = nameLength ?? name?.count ?? 0
    self.comment = comment
    self.extra = extra
    self.extraFlags = extraFlags
    self.operatingSystem = operatingSystem
    self.isText = isText
    self.hasHeaderCRC = hasHeaderCRC
  }

  /// The longest FNAME kept: 255 bytes, the longest file name Linux allows (`NAME_MAX`), so
  /// every name that could name a file is kept and `-N` can say exactly why a longer one is
  /// not used. Longer names are read past and only their length kept.
  package static let longestKeptName = 255
  /// The longest FCOMMENT kept (squeeze shows none; longer ones are read past): 1 KiB.
  package static let longestKeptComment = 1024

  /// ID1 ID2 (RFC 1952 section 2.3.1).
  package static let magic: (UInt8, UInt8) = (0x1F, 0x8B)
  /// CM = 8: deflate.
  static let deflateMethod: UInt8 = 8

  /// FLG bits (RFC 1952 section 2.3.1).
  package enum Flag {
    /// FTEXT: the data is probably text.
    package static let text: UInt8 = 0x01
    static let headerCRC: UInt8 = 0x02
    /// FEXTRA: an extra field follows the fixed header.
    package static let extra: UInt8 = 0x04
    /// FNAME: a zero-terminated original file name follows.
    package static let name: UInt8 = 0x08
    static let comment: UInt8 = 0x10
    /// Bits 5–7 are reserved and must be zero.
    static let reserved: UInt8 = 0xE0
  }

  /// The header's bytes, appended to `output`.
  package func encode(into output: inout [UInt8]) {
    var flags: UInt8 = 0
    if isText { flags |= Flag.text }
    if extra != nil { flags |= Flag.extra }
    if name != nil { flags |= Flag.name }
    if comment != nil { flags |= Flag.comment }
    output.append(GzipHeader.magic.0)
    output.append(GzipHeader.magic.1)
    output.append(GzipHeader.deflateMethod)
    output.append(flags)
    appendLittleEndian(modificationTime, to: &output)
    output.append(extraFlags)
    output.append(operatingSystem)
    if let extra {
      output.append(UInt8(extra.count & 0xFF))
      output.append(UInt8(extra.count >> 8))
      output.append(contentsOf: extra)
    }
    if let name {
      output.append(contentsOf: name)
      output.append(0)
    }
    if let comment {
      output.append(contentsOf: comment)
      output.append(0)
    }
  }

  /// The header's bytes.
  package var encoded: [UInt8] {
    var output: [UInt8] = []
    // One allocation: 10 fixed bytes, then the optional fields (RFC 1952 section 2.3).
    output.reserveCapacity(encodedLength)
    encode(into: &output)
    return output
  }

  /// The header's length in bytes, what ``encode(into:)`` appends: 10 fixed bytes, then
  /// FEXTRA with its 2-byte length, FNAME and FCOMMENT with their zero bytes (RFC 1952
  /// section 2.3).
  package var encodedLength: Int {
    10 + (extra.map { $0.count + 2 } ?? 0) + (name.map { $0.count + 1 } ?? 0)
      + (comment.map { $0.count + 1 } ?? 0)
  }

  /// Writes the header's bytes (those of ``encoded``) at the start of `output`, with no
  /// array in between: how a small file's output buffer starts.
  ///
  /// - Returns: the bytes written (``encodedLength``), or nil when `output` is shorter.
  package func write(into output: UnsafeMutableRawBufferPointer) -> Int? {
    guard output.count >= encodedLength else { return nil }
    var flags: UInt8 = 0
    if isText { flags |= Flag.text }
    if extra != nil { flags |= Flag.extra }
    if name != nil { flags |= Flag.name }
    if comment != nil { flags |= Flag.comment }
    output[0] = GzipHeader.magic.0
    output[1] = GzipHeader.magic.1
    output[2] = GzipHeader.deflateMethod
    output[3] = flags
    output.storeBytes(of: modificationTime.littleEndian, toByteOffset: 4, as: UInt32.self)
    output[8] = extraFlags
    output[9] = operatingSystem
    var used = 10
    func put(_ bytes: [UInt8], lengthFirst: Bool, zeroAfter: Bool) {
      if lengthFirst {
        output[used] = UInt8(truncatingIfNeeded: bytes.count)
        output[used + 1] = UInt8(truncatingIfNeeded: bytes.count >> 8)
        used += 2
      }
      UnsafeMutableRawBufferPointer(rebasing: output[used..<(used + bytes.count)])
        .copyBytes(from: bytes)
      used += bytes.count
      if zeroAfter {
        output[used] = 0
        used += 1
      }
    }
    if let extra { put(extra, lengthFirst: true, zeroAfter: false) }
    if let name { put(name, lengthFirst: false, zeroAfter: true) }
    if let comment { put(comment, lengthFirst: false, zeroAfter: true) }
    return used
  }

  /// What parsing the start of a buffer as a gzip header found.
  package enum ParseResult: Equatable, Sendable {
    /// A complete header of `length` bytes.
    case header(GzipHeader, length: Int)
    /// The buffer ends inside the header; `length` bytes do not suffice.
    case needMoreData
    /// Not a valid gzip header; the reason says which field is wrong.
    case invalid(GzipFormatError)
  }

  /// Parses a header at the start of `bytes` (RFC 1952 section 2.3), checking the magic number,
  /// the method, the reserved flag bits and, when FHCRC is set, the header's CRC-16
  /// (``GzipHeaderReader``, which reads headers that arrive in pieces).
  package static func parse(_ bytes: UnsafeRawBufferPointer) -> ParseResult {
    var reader = GzipHeaderReader()
    return reader.read(bytes).result
  }
}

/// The 8-byte member trailer (RFC 1952 section 2.3.1): CRC32 and ISIZE, little-endian.
package struct GzipTrailer: Sendable, Equatable {
  /// CRC-32 of the uncompressed data.
  package var crc: UInt32
  /// ISIZE: the uncompressed size modulo 2^32.
  package var size: UInt32

  /// The trailer of `uncompressedSize` bytes whose CRC-32 is `crc` (ISIZE is the size
  /// modulo 2^32).
  package init(crc: UInt32, uncompressedSize: Int64) {
    self.crc = crc
    self.size = UInt32(truncatingIfNeeded: uncompressedSize)
  }

  /// The trailer with CRC32 `crc` and ISIZE `size`, as read from a member.
  package init(crc: UInt32, size: UInt32) {
    self.crc = crc
    self.size = size
  }

  /// The trailer's 8 bytes.
  package var encoded: [UInt8] {
    var output: [UInt8] = []
    output.reserveCapacity(8)
    appendLittleEndian(crc, to: &output)
    appendLittleEndian(size, to: &output)
    return output
  }

  /// Writes the trailer's 8 bytes (those of ``encoded``) at the start of `output`, with no
  /// array in between.
  ///
  /// - Returns: 8, or nil when `output` is shorter.
  package func write(into output: UnsafeMutableRawBufferPointer) -> Int? {
    guard output.count >= 8 else { return nil }
    output.storeBytes(of: crc.littleEndian, toByteOffset: 0, as: UInt32.self)
    output.storeBytes(of: size.littleEndian, toByteOffset: 4, as: UInt32.self)
    return 8
  }

  /// Reads a trailer from exactly 8 bytes.
  package init?(_ bytes: UnsafeRawBufferPointer) {
    guard bytes.count == 8 else { return nil }
    func word(_ at: Int) -> UInt32 {
      UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16
        | UInt32(bytes[at + 3]) << 24
    }
    self.init(crc: word(0), size: word(4))
  }
}

/// Appends `value` to `output` least significant byte first, RFC 1952's byte order.
func appendLittleEndian(_ value: UInt32, to output: inout [UInt8]) {
  output.append(UInt8(truncatingIfNeeded: value))
  output.append(UInt8(truncatingIfNeeded: value >> 8))
  output.append(UInt8(truncatingIfNeeded: value >> 16))
  output.append(UInt8(truncatingIfNeeded: value >> 24))
}

/// Why bytes are not a valid gzip file (RFC 1952), as reported by `-d`, `-t` and `-l`.
package enum GzipFormatError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The file is empty: not even a header.
  case empty
  /// The first two bytes are not 1f 8b.
  case badMagic
  /// CM is not 8 (deflate).
  case unknownMethod(UInt8)
  /// A reserved FLG bit (5–7) is set.
  case reservedFlags(UInt8)
  /// FHCRC is set and the header's CRC-16 does not match.
  case badHeaderCRC
  /// The file ends inside a member; `offset` is where the data stopped.
  case truncated(offset: Int64)
  /// The deflate stream is corrupt (the engine's message says how); it stopped at `offset`.
  case corruptDeflateData(EngineError, offset: Int64)
  /// The trailer's CRC-32 differs from the data's.
  case crcMismatch(stored: UInt32, computed: UInt32)
  /// The trailer's ISIZE differs from the data's length modulo 2^32.
  case sizeMismatch(stored: UInt32, computed: UInt32)
  /// Both the trailer's CRC-32 and its ISIZE differ from the data's (gzip reports both).
  case crcAndSizeMismatch(
    storedCRC: UInt32, computedCRC: UInt32, storedSize: UInt32, computedSize: UInt32)
  /// Bytes that are neither a gzip member nor zero padding follow the last member.
  case trailingGarbage(offset: Int64)

  /// The fault in lowercase words, for messages: `not in gzip format`, `crc error`.
  package var description: String {
    switch self {
    case .empty: "empty file, not in gzip format"
    case .badMagic: "not in gzip format (bad magic number)"
    case .unknownMethod(let method):
      "unknown compression method \(method) (only 8, deflate, is defined)"
    case .reservedFlags(let flags):
      "bad header flags 0x\(String(flags, radix: 16)) (reserved bits set)"
    case .badHeaderCRC: "header CRC-16 mismatch"
    case .truncated(let offset): "unexpected end of file at byte \(offset) (truncated)"
    case .corruptDeflateData(let error, let offset):
      "corrupt deflate data: \(error), at byte \(offset)"
    case .crcMismatch(let stored, let computed):
      "CRC-32 mismatch: trailer says \(hex(stored)), data gives \(hex(computed))"
    case .sizeMismatch(let stored, let computed):
      "length mismatch: ISIZE says \(stored), data gives \(computed) (mod 2^32)"
    case .crcAndSizeMismatch(let storedCRC, let computedCRC, let storedSize, let computedSize):
      "CRC-32 mismatch: trailer says \(hex(storedCRC)), data gives \(hex(computedCRC)); "
        + "length mismatch: ISIZE says \(storedSize), data gives \(computedSize) (mod 2^32)"
    case .trailingGarbage(let offset):
      "trailing garbage after the last gzip member at byte \(offset)"
    }
  }
}

private func hex(_ value: UInt32) -> String {
  let digits = String(value, radix: 16)
  return "0x" + String(repeating: "0", count: 8 - digits.count) + digits
}
