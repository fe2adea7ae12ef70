/// Deflate's stored blocks (RFC 1951 §3.2.4): data copied as it is, in blocks of at most
/// 65,535 bytes, each behind a byte-aligned header (BFINAL, BTYPE 00) and the lengths LEN and
/// NLEN. Costs 5 bytes a block, 0.008 % of the data, and copying time.
public enum StoredBlocks {
  /// The most data one stored block holds: 65,535 bytes (LEN is 16 bits).
  public static let maximumBlockLength = 65_535

  /// Bytes ``write(_:isLast:into:)`` writes for `length` bytes of data: the data, 5 bytes a
  /// block, and, for a chunk that is not the last, the 5-byte empty block of the sync
  /// marker.
  public static func size(ofLength length: Int, isLast: Bool) -> Int {
    let blocks = max(1, (length + maximumBlockLength - 1) / maximumBlockLength)
    return length + 5 * blocks + (isLast ? 0 : 5)
  }

  /// Writes `data` as stored blocks into `output`, starting on a byte boundary: the last
  /// block has BFINAL set when `isLast`; otherwise the data is followed by an empty,
  /// non-final stored block, so the output ends with the sync marker `00 00 ff ff` as every
  /// chunk but a file's last does.
  ///
  /// - Parameter output: room for ``size(ofLength:isLast:)`` bytes.
  /// - Returns: bytes written, or nil when `output` is too small.
  public static func write(
    _ data: UnsafeRawBufferPointer, isLast: Bool, into output: UnsafeMutableRawBufferPointer
  ) -> Int? {
    guard output.count >= size(ofLength: data.count, isLast: isLast) else { return nil }
    var written = 0
    var start = 0
    repeat {
      let length = min(maximumBlockLength, data.count - start)
      let final = isLast && start + length == data.count
      writeHeader(length: length, final: final, into: output, at: &written)
      if length > 0 {
        UnsafeMutableRawBufferPointer(rebasing: output[written..<(written + length)]).copyMemory(
          from: UnsafeRawBufferPointer(rebasing: data[start..<(start + length)]))
      }
      written += length
      start += length
    } while start < data.count
    if !isLast { writeHeader(length: 0, final: false, into: output, at: &written) }
    return written
  }

  /// The header byte (BFINAL in bit 0, BTYPE 00, then padding to the byte boundary) and
  /// LEN, NLEN, little-endian.
  private static func writeHeader(
    length: Int, final: Bool, into output: UnsafeMutableRawBufferPointer, at offset: inout Int
  ) {
    let value = UInt16(length)
    output[offset] = final ? 1 : 0
    output[offset + 1] = UInt8(value & 0xff)
    output[offset + 2] = UInt8(value >> 8)
    output[offset + 3] = UInt8(~value & 0xff)
    output[offset + 4] = UInt8(~value >> 8)
    offset += 5
  }
}
