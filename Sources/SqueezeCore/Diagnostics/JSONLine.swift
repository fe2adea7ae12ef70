/// Builds one JSON object as UTF-8 bytes, field by field, without `Foundation` or `String`
/// formatting on the way: the task-state log writes one per task transition and per sample,
/// and must cost under 2 % of a run.
struct JSONLine {
  private(set) var bytes: [UInt8] = [UInt8(ascii: "{")]
  private var first = true

  init() {
    bytes.reserveCapacity(160)
  }

  private mutating func key(_ name: StaticString) {
    if !first { bytes.append(UInt8(ascii: ",")) }
    first = false
    bytes.append(UInt8(ascii: "\""))
    name.withUTF8Buffer { bytes.append(contentsOf: $0) }
    bytes.append(UInt8(ascii: "\""))
    bytes.append(UInt8(ascii: ":"))
  }

  /// `"name":"value"` with JSON escaping (RFC 8259 §7).
  mutating func field(_ name: StaticString, _ value: String) {
    key(name)
    JSONLine.appendString(value, to: &bytes)
  }

  /// `"name":"value"` for a static string that needs no escaping.
  mutating func field(_ name: StaticString, literal value: StaticString) {
    key(name)
    bytes.append(UInt8(ascii: "\""))
    value.withUTF8Buffer { bytes.append(contentsOf: $0) }
    bytes.append(UInt8(ascii: "\""))
  }

  /// `"name":123`.
  mutating func field<I: BinaryInteger>(_ name: StaticString, _ value: I) {
    key(name)
    JSONLine.appendInteger(Int64(value), to: &bytes)
  }

  /// `"name":1.234` with exactly `decimals` decimals (non-finite values become 0).
  mutating func field(_ name: StaticString, _ value: Double, decimals: Int) {
    key(name)
    JSONLine.appendDecimal(value, decimals: decimals, to: &bytes)
  }

  /// `"name":true`.
  mutating func field(_ name: StaticString, _ value: Bool) {
    key(name)
    bytes.append(contentsOf: value ? Array("true".utf8) : Array("false".utf8))
  }

  /// The object's bytes with the closing brace and a newline: one JSON Lines record.
  var line: [UInt8] {
    var result = bytes
    result.append(UInt8(ascii: "}"))
    result.append(UInt8(ascii: "\n"))
    return result
  }

  /// Appends `value` in decimal.
  static func appendInteger(_ value: Int64, to bytes: inout [UInt8]) {
    if value < 0 { bytes.append(UInt8(ascii: "-")) }
    var magnitude = value.magnitude
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
      var count = 0
      repeat {
        digits[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
        magnitude /= 10
        count += 1
      } while magnitude > 0
      for index in stride(from: count - 1, through: 0, by: -1) { bytes.append(digits[index]) }
    }
  }

  /// Appends `value` rounded to `decimals` decimals (at most 9).
  static func appendDecimal(_ value: Double, decimals: Int, to bytes: inout [UInt8]) {
    guard value.isFinite else {
      bytes.append(UInt8(ascii: "0"))
      return
    }
    var scale: Int64 = 1
    for _ in 0..<min(decimals, 9) { scale *= 10 }
    let scaled = Int64((abs(value) * Double(scale)).rounded())
    if value < 0 && scaled != 0 { bytes.append(UInt8(ascii: "-")) }
    appendInteger(scaled / scale, to: &bytes)
    guard decimals > 0 else { return }
    bytes.append(UInt8(ascii: "."))
    var fraction = scaled % scale
    var divisor = scale / 10
    while divisor > 0 {
      bytes.append(UInt8(ascii: "0") + UInt8(fraction / divisor))
      fraction %= divisor
      divisor /= 10
    }
  }

  /// Appends `text` as a JSON string: quotes, backslashes and control characters escaped.
  static func appendString(_ text: String, to bytes: inout [UInt8]) {
    let hex = Array("0123456789abcdef".utf8)
    bytes.append(UInt8(ascii: "\""))
    for byte in text.utf8 {
      switch byte {
      case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
      case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
      case UInt8(ascii: "\n"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
      case UInt8(ascii: "\t"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
      case 0..<0x20:
        bytes.append(contentsOf: Array("\\u00".utf8))
        bytes.append(hex[Int(byte >> 4)])
        bytes.append(hex[Int(byte & 0x0F)])
      default: bytes.append(byte)
      }
    }
    bytes.append(UInt8(ascii: "\""))
  }
}
