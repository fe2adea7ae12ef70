/// Builds one JSON object as UTF-8 bytes, field by field, without `Foundation` or `String`
/// formatting on the way: the task-state log writes one per task transition and per sample,
/// and must cost under 2 % of a run.
package struct JSONLine {
  /// The object so far: its opening brace and the fields, without the closing brace.
  package private(set) var bytes: [UInt8] = [UInt8(ascii: "{")]
  private var first = true

  /// An empty object.
  package init() {
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
  package mutating func field(_ name: StaticString, _ value: String) {
    key(name)
    JSONLine.appendString(value, to: &bytes)
  }

  /// `"name":"value"` for a static string that needs no escaping.
  package mutating func field(_ name: StaticString, literal value: StaticString) {
    key(name)
    bytes.append(UInt8(ascii: "\""))
    value.withUTF8Buffer { bytes.append(contentsOf: $0) }
    bytes.append(UInt8(ascii: "\""))
  }

  /// `"name":123`.
  package mutating func field<I: BinaryInteger>(_ name: StaticString, _ value: I) {
    key(name)
    JSONLine.appendInteger(Int64(value), to: &bytes)
  }

  /// `"name":1.234` with exactly `decimals` decimals (non-finite values become 0).
  package mutating func field(_ name: StaticString, _ value: Double, decimals: Int) {
    key(name)
    JSONLine.appendDecimal(value, decimals: decimals, to: &bytes)
  }

  /// `"name":null`.
  package mutating func nullField(_ name: StaticString) {
    key(name)
    bytes.append(contentsOf: Array("null".utf8))
  }

  /// `"name":true`.
  package mutating func field(_ name: StaticString, _ value: Bool) {
    key(name)
    bytes.append(contentsOf: value ? Array("true".utf8) : Array("false".utf8))
  }

  /// The object's bytes with the closing brace and a newline: one JSON Lines record.
  package var line: [UInt8] {
    var result = bytes
    result.append(UInt8(ascii: "}"))
    result.append(UInt8(ascii: "\n"))
    return result
  }

  /// Appends `value` in decimal.
  static func appendInteger(_ value: Int64, to bytes: inout [UInt8]) {
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { buffer in
      var writer = ByteWriter(buffer)
      writer.appendInteger(value)
      bytes.append(contentsOf: buffer[..<writer.count])
    }
  }

  /// Appends `value` rounded to `decimals` decimals (at most 9; non-finite values as 0).
  package static func appendDecimal(_ value: Double, decimals: Int, to bytes: inout [UInt8]) {
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 48) { buffer in
      var writer = ByteWriter(buffer)
      writer.appendDecimal(value, decimals: decimals)
      bytes.append(contentsOf: buffer[..<writer.count])
    }
  }

  /// Appends `text` as a JSON string: quotes, backslashes and control characters escaped.
  package static func appendString(_ text: String, to bytes: inout [UInt8]) {
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

/// Writes bytes into a fixed buffer the caller sized (no bounds growth: the caller reserves
/// enough room for the longest line it formats).
struct ByteWriter {
  private let buffer: UnsafeMutableBufferPointer<UInt8>
  /// Bytes written so far.
  private(set) var count = 0

  init(_ buffer: UnsafeMutableBufferPointer<UInt8>) {
    self.buffer = buffer
  }

  /// Appends the bytes of `text`.
  mutating func append(_ text: StaticString) {
    text.withUTF8Buffer { bytes in
      for byte in bytes {
        buffer[count] = byte
        count += 1
      }
    }
  }

  /// Appends `value` in decimal.
  mutating func appendInteger(_ value: Int64) {
    if value < 0 {
      buffer[count] = UInt8(ascii: "-")
      count += 1
    }
    var magnitude = value.magnitude
    var divisor: UInt64 = 1
    while divisor <= magnitude / 10 { divisor *= 10 }
    repeat {
      buffer[count] = UInt8(ascii: "0") + UInt8(magnitude / divisor)
      count += 1
      magnitude %= divisor
      divisor /= 10
    } while divisor > 0
  }

  /// Appends `value` rounded to `decimals` decimals (at most 9; non-finite values as 0).
  mutating func appendDecimal(_ value: Double, decimals: Int) {
    guard value.isFinite else {
      append("0")
      return
    }
    var scale: Int64 = 1
    for _ in 0..<min(decimals, 9) { scale *= 10 }
    let scaled = Int64((abs(value) * Double(scale)).rounded())
    if value < 0 && scaled != 0 { append("-") }
    appendInteger(scaled / scale)
    guard decimals > 0 else { return }
    append(".")
    var fraction = scaled % scale
    var divisor = scale / 10
    while divisor > 0 {
      buffer[count] = UInt8(ascii: "0") + UInt8(fraction / divisor)
      count += 1
      fraction %= divisor
      divisor /= 10
    }
  }
}
