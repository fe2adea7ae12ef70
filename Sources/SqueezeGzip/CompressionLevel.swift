/// A compression level: 1 (fastest) through 12 (smallest output). Which levels an engine
/// takes is the engine's (`Engine/levels`: zlib 1 to 9, libdeflate 1 to 12); the command
/// line checks a level against the engine once every option is read. 6 is the default of
/// gzip, pigz, zlib and libdeflate.
package struct CompressionLevel: Sendable, Hashable, CustomStringConvertible {
  /// The level, 1...12.
  package let value: Int32

  /// The levels any engine accepts.
  package static let range = 1...12

  /// Validates `value`; nil unless it is in ``range``.
  package init?(_ value: Int) {
    guard Self.range.contains(value) else { return nil }
    self.value = Int32(value)
  }

  /// Level 6, the default of gzip, zlib and libdeflate.
  package static let `default` = CompressionLevel(6)!
  /// Level 1 (`--fast`).
  package static let fastest = CompressionLevel(1)!
  /// Level 9 (`--best`, as gzip).
  package static let best = CompressionLevel(9)!

  /// The gzip header's XFL byte for this level (RFC 1952 section 2.3.1): 2 for the slowest
  /// algorithms (level 9 and libdeflate's 10 to 12), 4 for the fastest (level 1), 0
  /// otherwise, as gzip and libdeflate write it.
  var extraFlags: UInt8 {
    switch value {
    case 9...: 2
    case 1: 4
    default: 0
    }
  }

  /// The level's number, as the command line takes it.
  package var description: String { String(value) }
}
