import CZlib

/// The CRC-32 of RFC 1952 §8 (polynomial 0xEDB88320, as in the gzip trailer), computed by
/// zlib's `crc32_z`.
struct CRC32: Sendable, Equatable {
  /// The checksum of everything fed so far (0 for no bytes).
  private(set) var value: UInt32 = 0

  init() {}

  /// A checksum with a known value, for combining.
  init(value: UInt32) {
    self.value = value
  }

  /// Extends the checksum with `bytes`.
  mutating func update(_ bytes: UnsafeRawBufferPointer) {
    guard let base = bytes.baseAddress, bytes.count > 0 else { return }
    value = UInt32(
      crc32_z(UInt(value), base.assumingMemoryBound(to: Bytef.self), bytes.count))
  }

  /// The checksum of `first` followed by a run of `secondLength` bytes whose checksum is
  /// `second` (zlib's `crc32_combine`), without touching those bytes: how the CRC-32s
  /// of blocks compressed in parallel become one gzip trailer.
  ///
  /// - Complexity: O(log `secondLength`).
  static func combine(_ first: UInt32, _ second: UInt32, secondLength: Int64) -> UInt32 {
    UInt32(crc32_combine(UInt(first), UInt(second), Int(secondLength)))
  }
}
