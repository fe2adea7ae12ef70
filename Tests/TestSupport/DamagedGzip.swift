/// Damaged copies of a good gzip file, each with one fault a restore must name (RFC 1952:
/// the trailer's CRC-32 and ISIZE, the member's end).
public enum DamagedGzip {
  /// Writes into `folder`'s `subfolder`: `truncated.gz` (the last 100 bytes cut off),
  /// `crc.gz` (one bit of the trailer's CRC-32 flipped), `size.gz` (one bit of ISIZE
  /// flipped) and `garbage.gz` (bytes after the last member).
  ///
  /// - Parameter good: a whole gzip file of more than 100 bytes.
  /// - Throws: what ``TemporaryFolder/write(_:_:)`` throws.
  public static func writeCopies(
    of good: [UInt8], in folder: TemporaryFolder, under subfolder: String
  )
    throws
  {
    try folder.write("\(subfolder)/truncated.gz", Array(good.prefix(good.count - 100)))
    var crc = good
    crc[good.count - 6] ^= 0x01
    try folder.write("\(subfolder)/crc.gz", crc)
    var size = good
    size[good.count - 2] ^= 0x01
    try folder.write("\(subfolder)/size.gz", size)
    try folder.write("\(subfolder)/garbage.gz", good + Array("trailing".utf8))
  }
}
