/// Writes JSON text (RFC 8259) as UTF-8 bytes, value by value, putting the commas and colons
/// in their places: the one JSON writer of the task-state log, the Chrome trace, the timeline
/// page's data and `-l --json`.
///
/// Objects and arrays are opened and closed by hand (``beginObject()``, ``endArray()``, ...);
/// whether the next value needs a comma is one flag, which is all nesting needs (after an
/// opening bracket or a key, no comma; after any complete value, one). It writes through a
/// ``JSONOutput``: a growing `[UInt8]`, or a fixed `ByteWriter` for the task log's hot path,
/// which must allocate nothing. No `Foundation` and no `String` formatting on the way: the
/// task log writes one object per task transition and must cost under 2 % of a run.
///
/// Strings are escaped for where they land (``Escaping``): in JSON text, quotes, backslashes
/// and control characters (RFC 8259 section 7); inside an HTML `<script>` element, also `<`,
/// `>` and `&`, so that no name can hold `</script`, `<!--` or `<script` and end or change
/// the element (HTML's script data states; JSON's own `\u003c` reads back as `<`).
package struct JSONWriter<Output: JSONOutput> {
  /// Where the text goes.
  package enum Escaping {
    /// A JSON file or line.
    case json
    /// The content of an HTML `<script>` element: `<`, `>` and `&` as `\u003c`, `\u003e`,
    /// `\u0026` too.
    case scriptElement
  }

  /// The text so far.
  package private(set) var output: Output
  /// How strings are escaped.
  package let escaping: Escaping
  /// The next value (or key) follows another in its object or array: a comma first.
  private var needsSeparator: Bool

  /// A writer into `output`, starting a value.
  package init(_ output: Output, escaping: Escaping = .json) {
    self.output = output
    self.escaping = escaping
    needsSeparator = false
  }

  /// A writer into `output` that continues an object whose members `output` (or another
  /// writer) began: its first key gets a comma.
  package init(continuingObjectIn output: Output) {
    self.output = output
    escaping = .json
    needsSeparator = true
  }

  private mutating func separate() {
    if needsSeparator { output.writeByte(UInt8(ascii: ",")) }
    needsSeparator = false
  }

  /// `{`.
  package mutating func beginObject() {
    separate()
    output.writeByte(UInt8(ascii: "{"))
  }

  /// `}`.
  package mutating func endObject() {
    output.writeByte(UInt8(ascii: "}"))
    needsSeparator = true
  }

  /// `[`.
  package mutating func beginArray() {
    separate()
    output.writeByte(UInt8(ascii: "["))
  }

  /// `]`.
  package mutating func endArray() {
    output.writeByte(UInt8(ascii: "]"))
    needsSeparator = true
  }

  /// `"name":`, for a name that needs no escaping.
  package mutating func key(_ name: StaticString) {
    literal(name)
    output.writeByte(UInt8(ascii: ":"))
    needsSeparator = false
  }

  /// `"name":`, escaped.
  package mutating func key(_ name: String) {
    string(name)
    output.writeByte(UInt8(ascii: ":"))
    needsSeparator = false
  }

  /// A string, escaped.
  package mutating func string(_ text: String) {
    separate()
    output.writeByte(UInt8(ascii: "\""))
    let markup = escaping == .scriptElement
    for byte in text.utf8 {
      switch byte {
      case UInt8(ascii: "\""), UInt8(ascii: "\\"):
        output.writeByte(UInt8(ascii: "\\"))
        output.writeByte(byte)
      case UInt8(ascii: "\n"):
        output.writeByte(UInt8(ascii: "\\"))
        output.writeByte(UInt8(ascii: "n"))
      case UInt8(ascii: "\t"):
        output.writeByte(UInt8(ascii: "\\"))
        output.writeByte(UInt8(ascii: "t"))
      case 0..<0x20:
        writeUnicodeEscape(byte)
      case UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "&"):
        if markup { writeUnicodeEscape(byte) } else { output.writeByte(byte) }
      default: output.writeByte(byte)
      }
    }
    output.writeByte(UInt8(ascii: "\""))
    needsSeparator = true
  }

  /// `\u00XX` for an ASCII byte.
  private mutating func writeUnicodeEscape(_ byte: UInt8) {
    let hex: StaticString = "0123456789abcdef"
    output.writeByte(UInt8(ascii: "\\"))
    output.writeByte(UInt8(ascii: "u"))
    output.writeByte(UInt8(ascii: "0"))
    output.writeByte(UInt8(ascii: "0"))
    output.writeByte(hex.utf8Start[Int(byte >> 4)])
    output.writeByte(hex.utf8Start[Int(byte & 0x0F)])
  }

  /// A string that needs no escaping (a name squeeze chose).
  package mutating func literal(_ text: StaticString) {
    separate()
    output.writeByte(UInt8(ascii: "\""))
    text.withUTF8Buffer { output.writeBytes(UnsafeRawBufferPointer($0)) }
    output.writeByte(UInt8(ascii: "\""))
    needsSeparator = true
  }

  /// An integer in decimal.
  package mutating func integer<I: BinaryInteger>(_ value: I) {
    separate()
    let negative = value < 0
    if negative { output.writeByte(UInt8(ascii: "-")) }
    var magnitude = UInt64(clamping: value.magnitude)
    var divisor: UInt64 = 1
    while divisor <= magnitude / 10 { divisor *= 10 }
    repeat {
      output.writeByte(UInt8(ascii: "0") + UInt8(magnitude / divisor))
      magnitude %= divisor
      divisor /= 10
    } while divisor > 0
    needsSeparator = true
  }

  /// `value` rounded to `decimals` decimals (at most 9), in fixed point: `1.500`. Values that
  /// are not finite, or beyond 9.2 × 10^18 / 10^`decimals`, which JSON or this format cannot
  /// hold, are written as 0.
  package mutating func decimal(_ value: Double, decimals: Int) {
    var scale: Int64 = 1
    let places = max(0, min(decimals, 9))
    for _ in 0..<places { scale *= 10 }
    let scaled = (abs(value) * Double(scale)).rounded()
    guard scaled.isFinite, scaled < 0x1p63 else {
      integer(0)
      return
    }
    let whole = Int64(scaled)
    separate()
    if value < 0 && whole != 0 { output.writeByte(UInt8(ascii: "-")) }
    integer(whole / scale)
    needsSeparator = false
    if places > 0 {
      output.writeByte(UInt8(ascii: "."))
      var fraction = whole % scale
      var divisor = scale / 10
      while divisor > 0 {
        output.writeByte(UInt8(ascii: "0") + UInt8(fraction / divisor))
        fraction %= divisor
        divisor /= 10
      }
    }
    needsSeparator = true
  }

  /// `true` or `false`.
  package mutating func bool(_ value: Bool) {
    separate()
    let text: StaticString = value ? "true" : "false"
    text.withUTF8Buffer { output.writeBytes(UnsafeRawBufferPointer($0)) }
    needsSeparator = true
  }

  /// `null`.
  package mutating func null() {
    separate()
    let text: StaticString = "null"
    text.withUTF8Buffer { output.writeBytes(UnsafeRawBufferPointer($0)) }
    needsSeparator = true
  }

  /// A value another ``JSONWriter`` wrote (complete JSON text), as the next value.
  package mutating func encoded(_ value: [UInt8]) {
    separate()
    value.withUnsafeBytes { output.writeBytes($0) }
    needsSeparator = true
  }

  /// Starts the next element of a multi-line array: the comma after the previous one, if
  /// any, then a line break (`[\n{…},\n{…}`).
  package mutating func nextLine() {
    separate()
    output.writeByte(UInt8(ascii: "\n"))
  }

  /// A line break between values, or after the last (JSON Lines).
  package mutating func lineBreak() {
    output.writeByte(UInt8(ascii: "\n"))
  }

  /// `"name":"value"`, escaped.
  package mutating func field(_ name: StaticString, _ value: String) {
    key(name)
    string(value)
  }

  /// `"name":"value"` for a value that needs no escaping.
  package mutating func field(_ name: StaticString, literal value: StaticString) {
    key(name)
    literal(value)
  }

  /// `"name":123`.
  package mutating func field<I: BinaryInteger>(_ name: StaticString, _ value: I) {
    key(name)
    integer(value)
  }

  /// `"name":1.234` with exactly `decimals` decimals (see ``decimal(_:decimals:)``).
  package mutating func field(_ name: StaticString, _ value: Double, decimals: Int) {
    key(name)
    decimal(value, decimals: decimals)
  }

  /// `"name":true`.
  package mutating func field(_ name: StaticString, _ value: Bool) {
    key(name)
    bool(value)
  }

  /// `"name":null`.
  package mutating func nullField(_ name: StaticString) {
    key(name)
    null()
  }
}

extension JSONWriter where Output == [UInt8] {
  /// A writer into a new array of `capacity` bytes reserved.
  package init(capacity: Int = 160, escaping: Escaping = .json) {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(capacity)
    self.init(bytes, escaping: escaping)
  }

  /// The bytes written.
  package var bytes: [UInt8] { output }

  /// One JSON Lines record: `{`, the members `members` writes, `}` and a line break.
  package static func line(_ members: (inout JSONWriter) -> Void) -> [UInt8] {
    var json = JSONWriter()
    json.beginObject()
    members(&json)
    json.endObject()
    json.lineBreak()
    return json.output
  }
}

/// Where a ``JSONWriter`` puts its bytes.
package protocol JSONOutput {
  /// Appends one byte.
  mutating func writeByte(_ byte: UInt8)
  /// Appends `bytes`.
  mutating func writeBytes(_ bytes: UnsafeRawBufferPointer)
}

extension Array: JSONOutput where Element == UInt8 {
  package mutating func writeByte(_ byte: UInt8) { append(byte) }
  package mutating func writeBytes(_ bytes: UnsafeRawBufferPointer) { append(contentsOf: bytes) }
}

/// Writes bytes into a fixed buffer the caller sized: no growth and no allocation (the task
/// log's hot path reserves enough room for the longest event it formats there, ~90 of 120
/// bytes; past the end is a bug, caught by the buffer's bounds checks in debug builds).
struct ByteWriter: JSONOutput {
  private let buffer: UnsafeMutableBufferPointer<UInt8>
  /// Bytes written so far.
  private(set) var count = 0

  init(_ buffer: UnsafeMutableBufferPointer<UInt8>) {
    self.buffer = buffer
  }

  mutating func writeByte(_ byte: UInt8) {
    buffer[count] = byte
    count += 1
  }

  mutating func writeBytes(_ bytes: UnsafeRawBufferPointer) {
    for byte in bytes { writeByte(byte) }
  }
}
