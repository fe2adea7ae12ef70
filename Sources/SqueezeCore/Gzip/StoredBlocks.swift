/// Writes deflate data as stored (non-compressed) blocks, RFC 1951 §3.2.4: the bytes go out
/// as they are, framed, at copying speed. No zlib involved.
///
/// Each block is a 3-bit block header (BFINAL, then BTYPE = 00, §3.2.3) padded with zero
/// bits to the next byte boundary, then LEN (the block's byte count, 0...65,535) and NLEN
/// (its one's complement), both 16-bit little-endian, then LEN bytes of data. Starting on a
/// byte boundary, as a gzip member's deflate stream does (RFC 1952 §2.3) and as every chunk
/// after a zlib sync flush does, the header and padding take exactly one byte, so a block
/// costs 5 bytes of framing: 0.0076 % of a full block.
///
/// Because stored blocks begin and end on byte boundaries, a run of them can sit anywhere
/// between other deflate blocks that end on one (a sync flush, or another stored run): a
/// chunk of a big file can be stored while its neighbours are deflated, and the member stays
/// one valid deflate stream as long as only the stream's last block has BFINAL set.
enum StoredBlocks {
  /// The most data one stored block holds: LEN is 16 bits (RFC 1951 §3.2.4).
  static let maximumBlockLength = 65_535
  /// Framing bytes per block when it starts on a byte boundary: the header byte, LEN, NLEN.
  static let framingBytes = 5

  /// How many bytes ``encode(_:isLast:into:)`` writes for `length` bytes of data: the data
  /// plus 5 bytes per block of up to 65,535 bytes (one empty block for no data).
  ///
  /// - Parameter length: data bytes, ≥ 0.
  /// - Returns: the exact output size in bytes.
  static func encodedLength(of length: Int) -> Int {
    let blocks = max(1, (length + maximumBlockLength - 1) / maximumBlockLength)
    return length + blocks * framingBytes
  }

  /// Frames `input` as stored blocks of at most 65,535 bytes into `output`.
  ///
  /// The output starts and ends on a byte boundary. Empty input gives one empty block
  /// (`01 00 00 FF FF` when it is the last one: an empty deflate stream).
  ///
  /// - Parameters:
  ///   - input: the data to store.
  ///   - isLast: set BFINAL on the last block written (the end of the deflate stream);
  ///     otherwise more deflate blocks must follow.
  ///   - output: room for at least ``encodedLength(of:)`` of `input.count` bytes; `input`
  ///     and `output` must not overlap.
  /// - Returns: the number of bytes written to `output`.
  static func encode(
    _ input: UnsafeRawBufferPointer, isLast: Bool, into output: UnsafeMutableRawBufferPointer
  ) -> Int {
    precondition(output.count >= encodedLength(of: input.count), "stored-block output too small")
    var read = 0
    var written = 0
    repeat {
      let length = min(maximumBlockLength, input.count - read)
      let final = isLast && read + length == input.count
      // Bit 0: BFINAL; bits 1-2: BTYPE 00 (stored); bits 3-7: padding to the byte boundary.
      output[written] = final ? 1 : 0
      output[written + 1] = UInt8(truncatingIfNeeded: length)
      output[written + 2] = UInt8(truncatingIfNeeded: length >> 8)
      output[written + 3] = ~UInt8(truncatingIfNeeded: length)
      output[written + 4] = ~UInt8(truncatingIfNeeded: length >> 8)
      written += framingBytes
      if length > 0, let source = input.baseAddress {
        (output.baseAddress! + written).copyMemory(from: source + read, byteCount: length)
      }
      written += length
      read += length
    } while read < input.count
    return written
  }
}
