/// A zlib compression level, 1 (fastest) through 9 (smallest output); 6 is the default of
/// gzip, pigz and zlib (`Z_DEFAULT_COMPRESSION`).
struct CompressionLevel: Sendable, Hashable, CustomStringConvertible {
  /// The level, 1...9.
  let value: Int32

  /// Validates `value`; nil unless it is 1...9.
  init?(_ value: Int) {
    guard (1...9).contains(value) else { return nil }
    self.value = Int32(value)
  }

  /// Level 6, the default of gzip and zlib.
  static let `default` = CompressionLevel(6)!
  /// Level 1 (`--fast`).
  static let fastest = CompressionLevel(1)!
  /// Level 9 (`--best`).
  static let best = CompressionLevel(9)!

  /// The gzip header's XFL byte for this level (RFC 1952 §2.3.1): 2 for the slowest
  /// algorithm (level 9), 4 for the fastest (level 1), 0 otherwise, as gzip writes it.
  var extraFlags: UInt8 {
    switch value {
    case 9: 2
    case 1: 4
    default: 0
    }
  }

  var description: String { String(value) }
}
