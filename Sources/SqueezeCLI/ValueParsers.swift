/// Parsers for option values with units: durations (`--sample-interval 5ms`,
/// `--older-than 7d`), sizes (`--block-size 128K`) and whole numbers (`--jobs 4`).
///
/// Every option that takes a number goes through one of the `…Value` functions here with the
/// range it accepts, so a number from the command line is range-checked once, in one place,
/// before any arithmetic sees it (Swift traps on overflow: `Int64(1e300)` or
/// `Int.max * 2` would end the process with SIGILL and no message). A value out of range is a
/// usage error that names the option and the range, as swift-argument-parser words it:
/// `The value '999999999999999d' is invalid for '--older-than <duration>': expected a
/// duration from 1ns to 1000000d, such as 90s, 30m, 12h or 7d`.
enum ValueParsers {
  /// The units of a duration, longest first: seconds in one (`d`: 86400), or ones in a
  /// second (`ms`: 1000). A value in a unit shorter than a second is divided by the count,
  /// so `100us` is exactly the `Double` nearest 0.0001 (`100 * 1e-6` is one bit below it).
  private static let durationUnits: [(suffix: String, seconds: Double, perSecond: Double)] = [
    ("d", 86400, 1), ("h", 3600, 1), ("m", 60, 1), ("s", 1, 1), ("ms", 1, 1e3), ("us", 1, 1e6),
    ("µs", 1, 1e6), ("ns", 1, 1e9),
  ]

  /// Seconds from a number and a unit: `ns`, `us` (or `µs`), `ms`, `s`, `m`, `h`, `d` (`1.5s`,
  /// `250ms`, `7d`). The number is decimal digits with at most one point: no sign, no
  /// exponent, no `inf`. A bare number is refused: the unit is what makes the value
  /// unambiguous.
  ///
  /// - Returns: seconds, or nil when the text is not a positive, finite duration.
  static func duration(_ text: String) -> Double? {
    // Longest suffix first: "ms" also ends in "s", "5ms" is not "5m" followed by "s".
    for unit in durationUnits.sorted(by: { $0.suffix.count > $1.suffix.count })
    where text.hasSuffix(unit.suffix) {
      let number = text.dropLast(unit.suffix.count)
      guard isDecimal(number), let value = Double(number), value.isFinite, value > 0 else {
        continue
      }
      let seconds = value * unit.seconds / unit.perSecond
      return seconds.isFinite && seconds > 0 ? seconds : nil
    }
    return nil
  }

  /// A size's number and the bytes its unit stands for: a last `K`, `M` or `G` (either
  /// case) is 1024, 1024² or 1024³ bytes and is cut off; without one, the whole text and 1.
  private static func splitUnit(_ text: String) -> (number: Substring, multiplier: Int) {
    let multipliers: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
    guard let last = Substring(text).last?.uppercased().first, let unit = multipliers[last]
    else { return (Substring(text), 1) }
    return (Substring(text).dropLast(), unit)
  }

  /// Bytes from a number with an optional binary unit: `K` (KiB), `M` (MiB), `G` (GiB), in
  /// either case, as pigz's `-b` counts in KiB (`128K` = 131072; a bare number is bytes).
  ///
  /// - Returns: bytes, or nil when the text is not a positive size that fits in an `Int`.
  static func size(_ text: String) -> Int? {
    let (digits, multiplier) = splitUnit(text)
    guard let value = wholeNumber(digits), value > 0 else { return nil }
    let (bytes, overflow) = value.multipliedReportingOverflow(by: multiplier)
    return overflow ? nil : bytes
  }

  /// A whole number written as decimal digits, with an optional leading `+` (as `Int("+4")`
  /// reads it; a `-` is kept so that a negative number is reported as out of range, not as
  /// "not a number").
  ///
  /// - Returns: the number, or nil when the text is not one or does not fit in an `Int`.
  static func wholeNumber<S: StringProtocol>(_ text: S) -> Int? {
    var digits = Substring(text)
    if digits.first == "+" || digits.first == "-" { digits = digits.dropFirst() }
    guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
    return Int(text)
  }

  /// The value of a duration option, in seconds, checked against `range`.
  ///
  /// - Parameters:
  ///   - value: the value as typed.
  ///   - spelling: the option as errors name it (`--older-than <duration>`).
  ///   - range: the durations accepted, in seconds.
  ///   - examples: typical values for the message (`90s, 30m, 12h or 7d`).
  /// - Throws: ``UsageError/invalidValue(_:option:reason:)`` naming the range when `value`
  ///   is not a duration or is outside `range`.
  static func durationValue(
    _ value: OptionValue, option spelling: String, in range: ClosedRange<Double>,
    examples: String
  ) throws(UsageError) -> Double {
    guard let seconds = duration(value.text), range.contains(seconds) else {
      throw .invalidValue(
        value.shown, option: spelling,
        reason:
          "expected a duration from \(durationRangeText(range)), such as \(examples)"
      )
    }
    return seconds
  }

  /// The value of a size option, in bytes, checked against `range`.
  ///
  /// - Throws: ``UsageError/invalidValue(_:option:reason:)`` naming the range when `value`
  ///   is not a size or is outside `range`.
  static func sizeValue(_ value: OptionValue, option spelling: String, in range: ClosedRange<Int>)
    throws(UsageError) -> Int
  {
    let bounds = "from \(sizeText(range.lowerBound)) to \(sizeText(range.upperBound))"
    guard let bytes = size(value.text), range.contains(bytes) else {
      // A decimal point is refused as pigz's -b and GNU head -c refuse it, but named as the
      // fault, not the range (with the whole number it stands for, when there is one).
      if let decimal = decimalSize(value.text) {
        let equal = decimal.map { " (\(value.shown) is \(sizeText($0)))" } ?? ""
        throw .invalidValue(
          value.shown, option: spelling,
          reason: "expected a whole number of bytes, K, M or G\(equal), \(bounds)")
      }
      throw .invalidValue(value.shown, option: spelling, reason: "expected a size \(bounds)")
    }
    return bytes
  }

  /// A size written with a decimal point (`1.5M`, `.5K`, `2.0`), which ``size(_:)`` refuses:
  /// `.some` of its whole number of bytes when it has one that fits in an `Int` (`1.5M` is
  /// 1572864), `.some(nil)` when it is not a whole number of bytes (`1.3K`, `0.5`) or does not
  /// fit, nil when the text is not a decimal size at all.
  static func decimalSize(_ text: String) -> Int?? {
    let (number, multiplier) = splitUnit(text)
    guard isDecimal(number), let point = number.firstIndex(of: ".") else { return nil }
    // Trailing zeros after the point change nothing: 2.50M is 2.5M.
    var fraction = number[number.index(after: point)...]
    while fraction.last == "0" { fraction = fraction.dropLast() }
    var scale = 1
    var numerator = 0
    for digit in number[..<point] + fraction {
      let (shifted, overflow) = numerator.multipliedReportingOverflow(by: 10)
      guard !overflow else { return .some(nil) }
      numerator = shifted + Int(digit.asciiValue! - UInt8(ascii: "0"))
    }
    for _ in fraction {
      let (larger, overflow) = scale.multipliedReportingOverflow(by: 10)
      guard !overflow else { return .some(nil) }
      scale = larger
    }
    let (scaled, overflow) = numerator.multipliedReportingOverflow(by: multiplier)
    guard !overflow, scaled % scale == 0 else { return .some(nil) }
    return .some(scaled / scale)
  }

  /// The value of a whole-number option, checked against `range`.
  ///
  /// - Throws: ``UsageError/invalidValue(_:option:reason:)`` naming the range when `value`
  ///   is not a whole number or is outside `range`.
  static func wholeNumberValue(
    _ value: OptionValue, option spelling: String, in range: ClosedRange<Int>
  ) throws(UsageError) -> Int {
    guard let number = wholeNumber(value.text), range.contains(number) else {
      throw .invalidValue(
        value.shown, option: spelling,
        reason: "expected a whole number from \(range.lowerBound) to \(range.upperBound)")
    }
    return number
  }

  /// `seconds` as the command line writes it, in the longest unit that gives a whole number,
  /// except that one minute, hour or day is written in the unit below it, as people say
  /// them (`90` → `90s`, `120` → `2m`, `60` → `60s`, `3600` → `60m`, `0.0001` → `100us`,
  /// `86400000000` → `1000000d`).
  static func durationText(_ seconds: Double) -> String {
    for unit in durationUnits where unit.suffix != "µs" {
      let count = (seconds * unit.perSecond / unit.seconds).rounded()
      // Within a part in 10^9: binary fractions are not exact (1e-4 * 1e6 is not 100).
      if count >= 1, count < 1e15,
        abs(count * unit.seconds / unit.perSecond - seconds) <= seconds * 1e-9,
        count > 1 || unit.seconds == 1
      {
        return "\(Int64(count))\(unit.suffix)"
      }
    }
    return "\(seconds)s"
  }

  /// A duration option's range as both its help and its range error write it
  /// (`100us to 60s`).
  static func durationRangeText(_ range: ClosedRange<Double>) -> String {
    "\(durationText(range.lowerBound)) to \(durationText(range.upperBound))"
  }

  /// `bytes` as the command line writes it, in the longest binary unit that gives a whole
  /// number (`32768` → `32K`, `67108864` → `64M`).
  static func sizeText(_ bytes: Int) -> String {
    for (suffix, unit) in [("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)]
    where bytes >= unit && bytes % unit == 0 {
      return "\(bytes / unit)\(suffix)"
    }
    return "\(bytes)"
  }

  /// True for decimal digits with at most one point and at least one digit (`12`, `1.5`,
  /// `.5`), ASCII only.
  private static func isDecimal(_ text: Substring) -> Bool {
    var digits = 0
    var points = 0
    for character in text {
      if character == "." {
        points += 1
      } else if character.isASCII && character.isNumber {
        digits += 1
      } else {
        return false
      }
    }
    return digits > 0 && points <= 1
  }
}
