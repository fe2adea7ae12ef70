import CLibdeflate
import CZlib

/// The CRC-32 of RFC 1952 section 8 (polynomial 0xEDB88320, as in the gzip trailer). Computed by
/// libdeflate's `libdeflate_crc32` (carry-less multiplication where the CPU has it: about
/// 10 GB/s here, several times zlib's `crc32_z`), combined by zlib's `crc32_combine`. The
/// value is the same whichever engine runs.
public struct CRC32: Sendable, Equatable {
  /// The checksum of everything fed so far (0 for no bytes).
  public private(set) var value: UInt32 = 0

  /// The checksum of no bytes: 0.
  public init() {}

  /// A checksum with a known value, for combining.
  public init(value: UInt32) {
    self.value = value
  }

  /// Extends the checksum with `bytes`.
  public mutating func update(_ bytes: UnsafeRawBufferPointer) {
    guard let base = bytes.baseAddress, bytes.count > 0 else { return }
    value = libdeflate_crc32(value, base, bytes.count)
  }

  /// The checksum of `first` followed by a run of `secondLength` bytes whose checksum is
  /// `second` (zlib's `crc32_combine`), without touching those bytes: how the CRC-32s
  /// of chunks compressed in parallel become one gzip trailer.
  ///
  /// - Complexity: O(log `secondLength`).
  public static func combine(_ first: UInt32, _ second: UInt32, secondLength: Int64) -> UInt32 {
    UInt32(crc32_combine(UInt(first), UInt(second), Int(secondLength)))
  }
}
