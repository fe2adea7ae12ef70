import SqueezeEngines

/// Reads one gzip member header (RFC 1952 section 2.3) as its bytes arrive, in pieces of any
/// size, in memory bounded whatever the header's length.
///
/// RFC 1952 bounds FEXTRA (a 16-bit length: at most 65,535 bytes) but not FNAME or FCOMMENT,
/// which run to a zero byte. The reader keeps FEXTRA whole, FNAME up to
/// ``GzipHeader/longestKeptName`` bytes and FCOMMENT up to ``GzipHeader/longestKeptComment``
/// bytes, and beyond those only counts (``GzipHeader/nameLength`` says how long a name was),
/// so `-d`, `-t`, `-l` and `-N` all read every header the format allows, at most about
/// 66 KiB held. When FHCRC is set, the CRC-16 (the low 16 bits of the CRC-32 of every header
/// byte before it) is computed as the bytes pass.
///
/// Used by ``GzipHeader/parse(_:)`` (a header in one buffer), ``GzipDecoder`` (headers of
/// every member, from a stream) and ``DecompressionJob/readHeaderAndLength(_:)`` (the first
/// header, read in pieces with `pread`).
struct GzipHeaderReader {
  /// The parts of a header, in their order (RFC 1952 section 2.3).
  private enum Part {
    /// ID1 ID2 CM FLG MTIME(4) XFL OS: 10 bytes.
    case fixed
    /// FEXTRA's 2-byte length (XLEN).
    case extraLength
    /// FEXTRA's XLEN bytes.
    case extra
    /// FNAME, up to its zero byte.
    case name
    /// FCOMMENT, up to its zero byte.
    case comment
    /// FHCRC's 2 bytes.
    case headerCRC
    /// The header is complete.
    case done
  }

  private var part = Part.fixed
  /// The fixed part, then XLEN, then the stored CRC-16: the bytes of the part being read.
  private var scratch: [UInt8] = []
  /// The 10 fixed bytes, once all are read.
  private var fixedPart: [UInt8] = []
  /// FLG, once read.
  private var flags: UInt8 = 0
  /// FEXTRA bytes still to come.
  private var extraRemaining = 0
  private var extra: [UInt8]? = nil
  /// FNAME's bytes while no longer than ``GzipHeader/longestKeptName``.
  private var name: [UInt8] = []
  /// FNAME's length so far (bytes, without the zero).
  private var nameLength = 0
  /// FCOMMENT's bytes while no longer than ``GzipHeader/longestKeptComment``.
  private var comment: [UInt8] = []
  /// FCOMMENT's length so far.
  private var commentLength = 0
  /// The CRC-32 of the header's bytes so far, for FHCRC.
  private var crc = CRC32()
  /// Bytes of the header read so far.
  private(set) var length = 0

  /// The fixed bytes read so far (at most 10): what a reader that finds the start of a
  /// would-be member is not a header hands on (`gzip -dcf` copies data that is not gzip).
  var fixedBytes: [UInt8] { part == .fixed ? scratch : [] }

  /// Reads from the start of `input` and says how far it got.
  ///
  /// - Returns: the header and its whole length once its last byte is read (`consumed` then
  ///   counts only this input's bytes of the header: the rest of `input` follows it),
  ///   `needMoreData` when all of `input` was taken and the header goes on, or `invalid` at
  ///   the first byte that cannot be a header's (`consumed` includes that byte).
  mutating func read(_ input: UnsafeRawBufferPointer) -> (
    result: GzipHeader.ParseResult, consumed: Int
  ) {
    var index = 0
    /// Takes `count` bytes of `input` from `index` as part of the header.
    func take(_ count: Int) -> UnsafeRawBufferPointer {
      let bytes = UnsafeRawBufferPointer(rebasing: input[index..<(index + count)])
      if flags & GzipHeader.Flag.headerCRC != 0 && part != .headerCRC { crc.update(bytes) }
      index += count
      length += count
      return bytes
    }
    while true {
      switch part {
      case .fixed:
        while scratch.count < 10 && index < input.count {
          let byte = input[index]
          index += 1
          length += 1
          scratch.append(byte)
          switch scratch.count {
          case 1 where byte != GzipHeader.magic.0, 2 where byte != GzipHeader.magic.1:
            return (.invalid(.badMagic), index)
          case 3 where byte != GzipHeader.deflateMethod:
            return (.invalid(.unknownMethod(byte)), index)
          case 4 where byte & GzipHeader.Flag.reserved != 0:
            return (.invalid(.reservedFlags(byte)), index)
          default: break
          }
        }
        guard scratch.count == 10 else { return (.needMoreData, index) }
        fixedPart = scratch
        flags = scratch[3]
        if flags & GzipHeader.Flag.headerCRC != 0 {
          scratch.withUnsafeBytes { crc.update($0) }
        }
        advance(from: .fixed)
      case .extraLength:
        while scratch.count < 2 && index < input.count {
          scratch.append(take(1)[0])
        }
        guard scratch.count == 2 else { return (.needMoreData, index) }
        extraRemaining = Int(scratch[0]) | Int(scratch[1]) << 8
        extra = []
        extra?.reserveCapacity(extraRemaining)
        part = .extra
      case .extra:
        let count = min(extraRemaining, input.count - index)
        extra?.append(contentsOf: take(count))
        extraRemaining -= count
        guard extraRemaining == 0 else { return (.needMoreData, index) }
        advance(from: .extra)
      case .name, .comment:
        let rest = UnsafeRawBufferPointer(rebasing: input[index...])
        let end = rest.firstIndex(of: 0)
        let bytes = take(end ?? rest.count)
        if part == .name {
          nameLength += bytes.count
          if nameLength <= GzipHeader.longestKeptName {
            name.append(contentsOf: bytes)
          } else {
            name = []
          }
        } else {
          commentLength += bytes.count
          if commentLength <= GzipHeader.longestKeptComment {
            comment.append(contentsOf: bytes)
          } else {
            comment = []
          }
        }
        guard end != nil else { return (.needMoreData, index) }
        _ = take(1)
        advance(from: part)
      case .headerCRC:
        while scratch.count < 2 && index < input.count {
          scratch.append(take(1)[0])
        }
        guard scratch.count == 2 else { return (.needMoreData, index) }
        let stored = UInt16(scratch[0]) | UInt16(scratch[1]) << 8
        guard stored == UInt16(truncatingIfNeeded: crc.value) else {
          return (.invalid(.badHeaderCRC), index)
        }
        part = .done
      case .done:
        return (.header(header, length: length), index)
      }
    }
  }

  /// Moves on to the part after `finished` that FLG says is present.
  private mutating func advance(from finished: Part) {
    scratch = []
    let order: [(Part, UInt8)] = [
      (.extraLength, GzipHeader.Flag.extra), (.name, GzipHeader.Flag.name),
      (.comment, GzipHeader.Flag.comment), (.headerCRC, GzipHeader.Flag.headerCRC),
    ]
    let start: Int
    switch finished {
    case .fixed: start = 0
    case .extraLength, .extra: start = 1
    case .name: start = 2
    case .comment: start = 3
    case .headerCRC, .done: start = order.count
    }
    part = order[start...].first { flags & $0.1 != 0 }?.0 ?? .done
  }

  /// The header read (once ``read(_:)`` returned it).
  private var header: GzipHeader {
    let hasName = flags & GzipHeader.Flag.name != 0
    let hasComment = flags & GzipHeader.Flag.comment != 0
    return GzipHeader(
      modificationTime: UInt32(fixed(4)) | UInt32(fixed(5)) << 8 | UInt32(fixed(6)) << 16
        | UInt32(fixed(7)) << 24,
      name: hasName && nameLength <= GzipHeader.longestKeptName ? name : nil,
      nameLength: hasName ? nameLength : 0,
      comment: hasComment && commentLength <= GzipHeader.longestKeptComment ? comment : nil,
      extra: extra, extraFlags: fixed(8), operatingSystem: fixed(9),
      isText: flags & GzipHeader.Flag.text != 0,
      hasHeaderCRC: flags & GzipHeader.Flag.headerCRC != 0)
  }

  /// Byte `index` of the fixed part.
  private func fixed(_ index: Int) -> UInt8 { fixedPart[index] }
}
