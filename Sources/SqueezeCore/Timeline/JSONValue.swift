/// A JSON value (RFC 8259), as `squeeze timeline` reads the lines of a task-state log.
///
/// A log of 100,000 files has over half a million lines; Foundation's `JSONSerialization`
/// builds an `NSDictionary` of `NSNumber`s for each (about 5 µs a line here), so the reader
/// parses with this small recursive-descent parser instead (about ten times faster).
enum JSONValue: Sendable, Equatable {
  case null
  case bool(Bool)
  case number(Double)
  case string(String)
  case array([JSONValue])
  /// An object's members in their order (keys are few: a linear search is fastest).
  case object([(key: String, value: JSONValue)])

  static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
    switch (lhs, rhs) {
    case (.null, .null): true
    case (.bool(let a), .bool(let b)): a == b
    case (.number(let a), .number(let b)): a == b
    case (.string(let a), .string(let b)): a == b
    case (.array(let a), .array(let b)): a == b
    case (.object(let a), .object(let b)):
      a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    default: false
    }
  }

  /// The member `key` of an object, or nil.
  subscript(key: String) -> JSONValue? {
    guard case .object(let members) = self else { return nil }
    return members.first { $0.key == key }?.value
  }

  // Numbers are read through TaskLogData.Fields, which checks each against its range before
  // anything converts it.

  /// The value as a string, or nil.
  var string: String? {
    if case .string(let value) = self { return value }
    return nil
  }

  /// The value as an array, or nil.
  var array: [JSONValue]? {
    if case .array(let value) = self { return value }
    return nil
  }

  /// Why a text is not JSON.
  struct ParseError: Error, Sendable, CustomStringConvertible {
    /// The byte offset where parsing failed.
    var offset: Int
    var description: String { "not valid JSON at byte \(offset + 1)" }
  }

  /// Parses one JSON text (leading and trailing white space allowed).
  ///
  /// - Throws: ``ParseError`` when `bytes` is not exactly one JSON value.
  static func parse<Bytes: Collection<UInt8>>(_ bytes: Bytes) throws(ParseError) -> JSONValue {
    let contiguous = bytes.withContiguousStorageIfAvailable { buffer in
      Result { () throws(ParseError) in try parse(buffer) }
    }
    if let contiguous { return try contiguous.get() }
    let copy = Array(bytes)
    return try copy.withUnsafeBufferPointer { (buffer) throws(ParseError) in try parse(buffer) }
  }

  private static func parse(_ buffer: UnsafeBufferPointer<UInt8>) throws(ParseError) -> JSONValue {
    var parser = Parser(bytes: buffer)
    parser.skipSpace()
    let value = try parser.value(depth: 0)
    parser.skipSpace()
    guard parser.index == buffer.count else { throw ParseError(offset: parser.index) }
    return value
  }

  private struct Parser {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    init(bytes: UnsafeBufferPointer<UInt8>) {
      self.bytes = bytes
    }

    var failure: ParseError { ParseError(offset: index) }

    mutating func skipSpace() {
      while index < bytes.count {
        switch bytes[index] {
        case 0x20, 0x09, 0x0A, 0x0D: index += 1
        default: return
        }
      }
    }

    mutating func expect(_ literal: StaticString) throws(ParseError) {
      let count = literal.utf8CodeUnitCount
      guard index + count <= bytes.count else { throw failure }
      for offset in 0..<count where bytes[index + offset] != literal.utf8Start[offset] {
        throw failure
      }
      index += count
    }

    mutating func value(depth: Int) throws(ParseError) -> JSONValue {
      guard index < bytes.count, depth < 64 else { throw failure }
      switch bytes[index] {
      case UInt8(ascii: "{"): return try object(depth: depth)
      case UInt8(ascii: "["): return try array(depth: depth)
      case UInt8(ascii: "\""): return .string(try string())
      case UInt8(ascii: "t"):
        try expect("true")
        return .bool(true)
      case UInt8(ascii: "f"):
        try expect("false")
        return .bool(false)
      case UInt8(ascii: "n"):
        try expect("null")
        return .null
      default: return .number(try number())
      }
    }

    mutating func object(depth: Int) throws(ParseError) -> JSONValue {
      index += 1
      var members: [(key: String, value: JSONValue)] = []
      skipSpace()
      if index < bytes.count && bytes[index] == UInt8(ascii: "}") {
        index += 1
        return .object(members)
      }
      while true {
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw failure }
        let key = try string()
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw failure }
        index += 1
        skipSpace()
        members.append((key, try value(depth: depth + 1)))
        skipSpace()
        guard index < bytes.count else { throw failure }
        if bytes[index] == UInt8(ascii: ",") {
          index += 1
          continue
        }
        guard bytes[index] == UInt8(ascii: "}") else { throw failure }
        index += 1
        return .object(members)
      }
    }

    mutating func array(depth: Int) throws(ParseError) -> JSONValue {
      index += 1
      var elements: [JSONValue] = []
      skipSpace()
      if index < bytes.count && bytes[index] == UInt8(ascii: "]") {
        index += 1
        return .array(elements)
      }
      while true {
        skipSpace()
        elements.append(try value(depth: depth + 1))
        skipSpace()
        guard index < bytes.count else { throw failure }
        if bytes[index] == UInt8(ascii: ",") {
          index += 1
          continue
        }
        guard bytes[index] == UInt8(ascii: "]") else { throw failure }
        index += 1
        return .array(elements)
      }
    }

    mutating func number() throws(ParseError) -> Double {
      let start = index
      if index < bytes.count && bytes[index] == UInt8(ascii: "-") { index += 1 }
      // Integers and fixed-point decimals (all the log writes) are read exactly here;
      // anything with an exponent goes through the standard library's parser.
      var integer: Double = 0
      var digits = 0
      while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
        integer = integer * 10 + Double(bytes[index] - 0x30)
        index += 1
        digits += 1
      }
      guard digits > 0 else { throw ParseError(offset: start) }
      var fraction: Double = 0
      var scale: Double = 1
      if index < bytes.count && bytes[index] == UInt8(ascii: ".") {
        index += 1
        var fractionDigits = 0
        while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
          fraction = fraction * 10 + Double(bytes[index] - 0x30)
          scale *= 10
          index += 1
          fractionDigits += 1
        }
        guard fractionDigits > 0 else { throw failure }
      }
      if index < bytes.count
        && (bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E"))
      {
        index += 1
        if index < bytes.count
          && (bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-"))
        {
          index += 1
        }
        var exponentDigits = 0
        while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
          index += 1
          exponentDigits += 1
        }
        guard exponentDigits > 0 else { throw failure }
        let text = String(
          decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let value = Double(text) else { throw ParseError(offset: start) }
        return value
      }
      let magnitude = scale == 1 ? integer : integer + fraction / scale
      return bytes[start] == UInt8(ascii: "-") ? -magnitude : magnitude
    }

    mutating func string() throws(ParseError) -> String {
      index += 1
      let start = index
      // Fast path: no escapes.
      while index < bytes.count {
        let byte = bytes[index]
        if byte == UInt8(ascii: "\"") {
          let text = String(
            decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
          index += 1
          return text
        }
        if byte == UInt8(ascii: "\\") || byte < 0x20 { break }
        index += 1
      }
      var utf8 = Array(bytes[start..<index])
      while index < bytes.count {
        let byte = bytes[index]
        index += 1
        switch byte {
        case UInt8(ascii: "\""):
          return String(decoding: utf8, as: UTF8.self)
        case UInt8(ascii: "\\"):
          guard index < bytes.count else { throw failure }
          let escape = bytes[index]
          index += 1
          switch escape {
          case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escape)
          case UInt8(ascii: "b"): utf8.append(0x08)
          case UInt8(ascii: "f"): utf8.append(0x0C)
          case UInt8(ascii: "n"): utf8.append(0x0A)
          case UInt8(ascii: "r"): utf8.append(0x0D)
          case UInt8(ascii: "t"): utf8.append(0x09)
          case UInt8(ascii: "u"):
            var scalar = try hex4()
            if (0xD800..<0xDC00).contains(scalar), index + 1 < bytes.count,
              bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
            {
              index += 2
              let low = try hex4()
              guard (0xDC00..<0xE000).contains(low) else { throw failure }
              scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            }
            let character = Unicode.Scalar(scalar) ?? "\u{FFFD}"
            utf8.append(contentsOf: String(character).utf8)
          default: throw failure
          }
        case 0..<0x20:
          throw failure
        default:
          utf8.append(byte)
        }
      }
      throw failure
    }

    mutating func hex4() throws(ParseError) -> UInt32 {
      guard index + 4 <= bytes.count else { throw failure }
      var value: UInt32 = 0
      for _ in 0..<4 {
        let byte = bytes[index]
        index += 1
        let digit: UInt32
        switch byte {
        case 0x30...0x39: digit = UInt32(byte - 0x30)
        case 0x41...0x46: digit = UInt32(byte - 0x41 + 10)
        case 0x61...0x66: digit = UInt32(byte - 0x61 + 10)
        default: throw failure
        }
        value = value * 16 + digit
      }
      return value
    }
  }
}
