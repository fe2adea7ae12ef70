/// Parsers for option values with units: durations (`--sample-interval 5ms`,
/// `--older-than 7d`) and sizes (`--block-size 128K`).
enum ValueParsers {
  /// Seconds from a number and a unit: `ns`, `us`, `ms`, `s`, `m`, `h`, `d` (`1.5s`, `250ms`,
  /// `7d`). A bare number is refused: the unit is what makes the value unambiguous.
  ///
  /// - Returns: seconds, or nil when the text is not a positive duration.
  static func duration(_ text: String) -> Double? {
    let units: [(suffix: String, seconds: Double)] = [
      ("ns", 1e-9), ("us", 1e-6), ("µs", 1e-6), ("ms", 1e-3), ("s", 1), ("m", 60), ("h", 3600),
      ("d", 86400),
    ]
    for unit in units where text.hasSuffix(unit.suffix) {
      let number = text.dropLast(unit.suffix.count)
      // "ms" also ends in "s": a number must remain.
      guard let value = Double(number), value.isFinite, value > 0,
        number.allSatisfy({ $0.isNumber || $0 == "." })
      else { continue }
      return value * unit.seconds
    }
    return nil
  }

  /// Bytes from a number with an optional binary unit: `K` (KiB), `M` (MiB), `G` (GiB), as
  /// pigz's `-b` counts in KiB (`128K` = 131072; a bare number is bytes).
  ///
  /// - Returns: bytes, or nil when the text is not a positive size.
  static func size(_ text: String) -> Int? {
    let multipliers: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
    var digits = Substring(text)
    var multiplier = 1
    if let last = digits.last?.uppercased().first, let unit = multipliers[last] {
      multiplier = unit
      digits = digits.dropLast()
    }
    guard let value = Int(digits), value > 0 else { return nil }
    let (bytes, overflow) = value.multipliedReportingOverflow(by: multiplier)
    return overflow ? nil : bytes
  }
}
