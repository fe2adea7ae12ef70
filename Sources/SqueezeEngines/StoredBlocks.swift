/// Writes deflate data as stored (non-compressed) blocks, RFC 1951 section 3.2.4: the bytes go out
/// as they are, framed, at copying speed. No compression library involved.
///
/// Each block is a 3-bit block header (BFINAL, then BTYPE = 00, section 3.2.3) padded with zero
/// bits to the next byte boundary, then LEN (the block's byte count, 0...65,535) and NLEN
/// (its one's complement), both 16-bit little-endian, then LEN bytes of data. Starting on a
/// byte boundary, as a gzip member's deflate stream does (RFC 1952 section 2.3) and as every chunk
/// after a sync marker does, the header and padding take exactly one byte, so a block costs
/// 5 bytes of framing: 0.0076 % of a full block.
///
/// Because stored blocks begin and end on byte boundaries, a run of them can sit anywhere
/// between other deflate blocks that end on one: a chunk of a big file can be stored while
/// its neighbours are deflated (the fast engine stores chunks it finds incompressible), and
/// the member stays one valid deflate stream as long as only its last block has BFINAL set.
public enum StoredBlocks {
  /// The most data one stored block holds: LEN is 16 bits (RFC 1951 section 3.2.4).
  public static let maximumBlockLength = 65_535
  /// Framing bytes per block when it starts on a byte boundary: the header byte, LEN, NLEN.
  public static let framingBytes = 5

  /// The exact number of bytes ``write(_:isLast:into:)`` writes for `length` bytes of data:
  /// the data, 5 bytes per block of up to 65,535 bytes (one empty block for no data), and,
  /// when the run is not the last of the stream and holds data, the 5 bytes of the empty
  /// block that ends it with the sync marker.
  ///
  /// - Parameters:
  ///   - length: data bytes, ≥ 0.
  ///   - isLast: whether the run ends the deflate stream (no sync marker after it).
  public static func size(ofLength length: Int, isLast: Bool) -> Int {
    let blocks = max(1, (length + maximumBlockLength - 1) / maximumBlockLength)
    return length + blocks * framingBytes + (!isLast && length > 0 ? framingBytes : 0)
  }

  /// Frames `data` as stored blocks of at most 65,535 bytes into `output`, starting and
  /// ending on a byte boundary.
  ///
  /// - Parameters:
  ///   - data: the data to store (it must not overlap `output`).
  ///   - isLast: set BFINAL on the last block (the end of the deflate stream). Otherwise the
  ///     run ends with an empty, non-final stored block, so its last four bytes are the sync
  ///     marker `00 00 ff ff` (``SyncMarker``), as every chunk but a file's last does; empty
  ///     data is then that one empty block.
  ///   - output: room for ``size(ofLength:isLast:)`` bytes.
  /// - Returns: bytes written, or nil when `output` is too small (nothing is written then).
  public static func write(
    _ data: UnsafeRawBufferPointer, isLast: Bool, into output: UnsafeMutableRawBufferPointer
  ) -> Int? {
    guard output.count >= size(ofLength: data.count, isLast: isLast) else { return nil }
    var written = 0
    var start = 0
    repeat {
      let length = min(maximumBlockLength, data.count - start)
      writeHeader(
        length: length, final: isLast && start + length == data.count, into: output, at: &written)
      if length > 0 {
        UnsafeMutableRawBufferPointer(rebasing: output[written..<(written + length)]).copyMemory(
          from: UnsafeRawBufferPointer(rebasing: data[start..<(start + length)]))
      }
      written += length
      start += length
    } while start < data.count
    if !isLast && data.count > 0 {
      writeHeader(length: 0, final: false, into: output, at: &written)
    }
    return written
  }

  /// The header byte (bit 0 BFINAL, bits 1–2 BTYPE 00, bits 3–7 padding to the byte
  /// boundary), then LEN and NLEN, little-endian.
  private static func writeHeader(
    length: Int, final: Bool, into output: UnsafeMutableRawBufferPointer, at offset: inout Int
  ) {
    let value = UInt16(length)
    output[offset] = final ? 1 : 0
    output[offset + 1] = UInt8(value & 0xff)
    output[offset + 2] = UInt8(value >> 8)
    output[offset + 3] = UInt8(~value & 0xff)
    output[offset + 4] = UInt8(~value >> 8)
    offset += framingBytes
  }
}
