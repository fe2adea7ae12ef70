/// Human-readable quantities for progress and summaries: decimal (SI) units, as `ls -h --si`,
/// `du --si` and hyperfine print them.
package enum ByteFormat {
  /// `bytes` with a decimal unit and three significant digits: `999 B`, `1.23 kB`,
  /// `45.6 MB`, `789 GB`.
  package static func format(_ bytes: Int64) -> String {
    let units = ["B", "kB", "MB", "GB", "TB", "PB", "EB"]
    var value = Double(bytes)
    var unit = 0
    while abs(value) >= 999.5 && unit < units.count - 1 {
      value /= 1000
      unit += 1
    }
    if unit == 0 { return "\(bytes) B" }
    let digits = abs(value) >= 99.95 ? 0 : abs(value) >= 9.995 ? 1 : 2
    return "\(fixed(value, digits)) \(units[unit])"
  }

  /// `value` with exactly `digits` decimals (no locale, no exponent), or as Swift prints a
  /// `Double` (`1e+20`) when it has too many digits for that: above 2^63 once scaled.
  package static func fixed(_ value: Double, _ digits: Int) -> String {
    guard value.isFinite else { return value.isNaN ? "nan" : (value < 0 ? "-inf" : "inf") }
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let scaled = (abs(value) * scale).rounded()
    // Int64(_:) traps from 2^63 on: a ratio of two file sizes can get there.
    guard scaled < 0x1p63 else { return "\(value)" }
    let whole = Int64(scaled / scale)
    let fraction = Int64(scaled - Double(whole) * scale)
    let sign = value < 0 && scaled != 0 ? "-" : ""
    guard digits > 0 else { return "\(sign)\(whole)" }
    var fractionText = String(fraction)
    fractionText = String(repeating: "0", count: max(0, digits - fractionText.count)) + fractionText
    return "\(sign)\(whole).\(fractionText)"
  }

  /// A count with thousands separators: `12,345`.
  /// `value` with thousands separators and `noun`, plural unless `value` is 1:
  /// `count(3, "folder")` is `3 folders`, `count(1, "symbolic link")` is `1 symbolic link`.
  package static func count(_ value: Int, _ noun: String) -> String {
    "\(count(value)) \(noun)\(value == 1 ? "" : "s")"
  }

  package static func count(_ value: Int) -> String {
    let digits = String(value.magnitude)
    var result = ""
    for (index, character) in digits.enumerated() {
      if index > 0 && (digits.count - index) % 3 == 0 { result.append(",") }
      result.append(character)
    }
    return value < 0 ? "-" + result : result
  }

  /// Seconds as `m:ss` (or `h:mm:ss` from an hour on); `--:--` for a negative or
  /// non-finite time, and the hours held at `Int.max` seconds (an estimate from a total of
  /// sparse file sizes can be past it).
  package static func clock(_ seconds: Double) -> String {
    guard seconds.isFinite && seconds >= 0 else { return "--:--" }
    let total = Int(saturating: seconds.rounded())
    let (hours, minutes, secs) = (total / 3600, total / 60 % 60, total % 60)
    func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
    return hours > 0 ? "\(hours):\(two(minutes)):\(two(secs))" : "\(minutes):\(two(secs))"
  }

  /// A duration in seconds for summaries: `0.123 s`, `12.3 s`, `123 s`.
  package static func seconds(_ value: Double) -> String {
    let digits = value >= 100 ? 0 : value >= 10 ? 1 : value >= 1 ? 2 : 3
    return "\(fixed(value, digits)) s"
  }

  /// Seconds as milliseconds for summaries: `0.4 ms`, `12 ms`, `3120 ms`.
  package static func milliseconds(_ seconds: Double) -> String {
    let value = seconds * 1000
    return "\(fixed(value, value >= 10 ? 0 : 1)) ms"
  }

  /// The share of `part` in `whole` as a percentage with one decimal: `27.9 %`.
  package static func percent(_ part: Int64, of whole: Int64) -> String {
    guard whole > 0 else { return "0.0 %" }
    return "\(fixed(Double(part) * 100 / Double(whole), 1)) %"
  }
}
