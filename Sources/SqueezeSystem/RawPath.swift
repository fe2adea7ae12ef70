/// A file system path or file name as raw bytes.
///
/// Linux file names are byte strings, not text: any byte but `/` and NUL may appear, and
/// names need not be valid UTF-8. squeeze keeps names as bytes wherever it opens, creates,
/// renames or compares files, and turns them into text only for display
/// (see ``displayString``), so every name round-trips.
public struct RawPath: Hashable, Sendable, Comparable, ExpressibleByStringLiteral,
  CustomStringConvertible
{
  /// The path's bytes, without a terminating NUL.
  public var bytes: [UInt8]

  /// Wraps raw bytes (no NUL inside).
  public init(bytes: [UInt8]) {
    self.bytes = bytes
  }

  /// Wraps raw bytes (no NUL inside).
  public init<S: Sequence>(bytes: S) where S.Element == UInt8 {
    self.bytes = Array(bytes)
  }

  /// The UTF-8 bytes of `string`.
  public init(_ string: String) {
    self.bytes = Array(string.utf8)
  }

  /// The UTF-8 bytes of a string literal.
  public init(stringLiteral value: String) {
    self.init(value)
  }

  /// True for the empty path.
  public var isEmpty: Bool { bytes.isEmpty }

  /// The number of bytes.
  public var count: Int { bytes.count }

  /// True when the path starts with `/`.
  public var isAbsolute: Bool { bytes.first == UInt8(ascii: "/") }

  /// The path with `component` appended after a `/` (no separator is added to an empty path).
  public func appending(_ component: RawPath) -> RawPath {
    if bytes.isEmpty { return component }
    if component.isEmpty { return self }
    var result = bytes
    if result.last != UInt8(ascii: "/") { result.append(UInt8(ascii: "/")) }
    result.append(contentsOf: component.bytes)
    return RawPath(bytes: result)
  }

  /// The path with `suffix` appended to its last component (`a/b` + `.gz` = `a/b.gz`).
  public func addingSuffix(_ suffix: RawPath) -> RawPath {
    RawPath(bytes: bytes + suffix.bytes)
  }

  /// The path without trailing slashes (`a/b//` → `a/b`; `/` stays `/`).
  public var trimmingTrailingSlashes: RawPath {
    var end = bytes.count
    while end > 1 && bytes[end - 1] == UInt8(ascii: "/") { end -= 1 }
    return RawPath(bytes: bytes[..<end])
  }

  /// The last component (`a/b/c.txt` → `c.txt`; `a/b/` → `b`; `/` → `/`).
  public var lastComponent: RawPath {
    let trimmed = trimmingTrailingSlashes.bytes
    if trimmed == [UInt8(ascii: "/")] { return self }
    guard let slash = trimmed.lastIndex(of: UInt8(ascii: "/")) else {
      return RawPath(bytes: trimmed)
    }
    return RawPath(bytes: trimmed[(slash + 1)...])
  }

  /// Everything before the last component, as `dirname(1)` gives it (`a/b/c` → `a/b`,
  /// `c` → `.`, `/c` → `/`).
  public var parent: RawPath {
    let trimmed = trimmingTrailingSlashes.bytes
    guard let slash = trimmed.lastIndex(of: UInt8(ascii: "/")) else { return "." }
    var end = slash
    while end > 0 && trimmed[end - 1] == UInt8(ascii: "/") { end -= 1 }
    return end == 0 ? "/" : RawPath(bytes: trimmed[..<end])
  }

  /// The components between slashes, empty ones and `.` dropped (`a//./b/` → `a`, `b`).
  public var components: [RawPath] {
    bytes.split(separator: UInt8(ascii: "/")).filter { $0 != [UInt8(ascii: ".")] }
      .map { RawPath(bytes: $0) }
  }

  /// True when the last component ends with `suffix` and is longer than it.
  public func hasSuffix(_ suffix: [UInt8]) -> Bool {
    bytes.count > suffix.count && bytes.suffix(suffix.count).elementsEqual(suffix)
  }

  /// Calls `body` with the path as a NUL-terminated C string (copied to the stack when
  /// short, so a system call on a path costs no heap allocation).
  public func withCString<R, E: Error>(
    _ body: (UnsafePointer<CChar>) throws(E) -> R
  ) throws(E) -> R {
    // withUnsafeTemporaryAllocation rethrows untyped: carry the typed error out by hand.
    var failure: E? = nil
    let result = withUnsafeTemporaryAllocation(of: CChar.self, capacity: bytes.count + 1) {
      chars -> R? in
      bytes.withUnsafeBytes { raw in
        UnsafeMutableRawBufferPointer(chars).copyMemory(from: raw)
      }
      chars[bytes.count] = 0
      do throws(E) {
        return try body(UnsafePointer(chars.baseAddress!))
      } catch {
        failure = error
        return nil
      }
    }
    if let failure { throw failure }
    return result!
  }

  /// Calls `body` with `directory/name` (just `name` when `directory` is empty) as a
  /// NUL-terminated C string, joined on the stack when short: what ``appending(_:)``
  /// followed by ``withCString(_:)`` gives, without building the joined path on the heap.
  public static func withJoinedCString<R, E: Error>(
    _ directory: RawPath, _ name: RawPath, _ body: (UnsafePointer<CChar>) throws(E) -> R
  ) throws(E) -> R {
    if directory.isEmpty { return try name.withCString(body) }
    let slash = directory.bytes.last == UInt8(ascii: "/") ? 0 : 1
    let count = directory.count + slash + name.count
    var failure: E? = nil
    let result = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count + 1) {
      joined -> R? in
      directory.bytes.withUnsafeBufferPointer { part in
        _ = UnsafeMutableBufferPointer(rebasing: joined[0..<part.count]).initialize(
          fromContentsOf: part)
      }
      if slash == 1 { joined[directory.count] = UInt8(ascii: "/") }
      name.bytes.withUnsafeBufferPointer { part in
        let start = directory.count + slash
        _ = UnsafeMutableBufferPointer(rebasing: joined[start..<(start + part.count)])
          .initialize(fromContentsOf: part)
      }
      joined[count] = 0
      do throws(E) {
        return try joined.withMemoryRebound(to: CChar.self) { (chars) throws(E) -> R in
          try body(UnsafePointer(chars.baseAddress!))
        }
      } catch {
        failure = error
        return nil
      }
    }
    if let failure { throw failure }
    return result!
  }

  /// The path as text for messages, logs and JSON: valid UTF-8 as is, a backslash as `\\`,
  /// control characters (C0, DEL and C1: U+0080 to U+009F, each of its two bytes), the
  /// bidirectional controls that could make a line show another name (U+200E, U+200F,
  /// U+202A to U+202E, U+2066 to U+2069, each of their three bytes) and every byte that is
  /// not valid UTF-8 as `\xHH`. The mapping is
  /// lossless: ``init(displayString:)`` reverses it.
  public var displayString: String { DisplayEscaping.escape(bytes) }

  /// Reverses ``displayString``: `\\` becomes `\` and `\xHH` the byte HH.
  ///
  /// - Returns: nil when `displayString` holds a malformed escape.
  public init?(displayString: String) {
    guard let bytes = DisplayEscaping.unescape(displayString) else { return nil }
    self.bytes = bytes
  }

  /// Same as ``displayString``.
  public var description: String { displayString }

  /// Byte-wise order (as `LC_ALL=C sort`).
  ///
  /// Inlinable, as are `==` and `hash(into:)`, so that sorting and hashing paths in other
  /// modules is specialized there instead of going through generic code for every comparison.
  @inlinable
  public static func < (lhs: RawPath, rhs: RawPath) -> Bool {
    lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
  }

  /// True when both paths have the same bytes.
  @inlinable
  public static func == (lhs: RawPath, rhs: RawPath) -> Bool {
    lhs.bytes == rhs.bytes
  }

  /// Feeds the path's bytes to `hasher`.
  @inlinable
  public func hash(into hasher: inout Hasher) {
    hasher.combine(bytes)
  }
}

/// The lossless byte-to-text mapping of ``RawPath/displayString``: a name that is not UTF-8
/// is shown with its bytes escaped, never silently changed.
package enum DisplayEscaping {
  private static let hexDigits = Array("0123456789abcdef".utf8)

  /// Escapes `bytes` as described in ``RawPath/displayString``.
  package static func escape<C: Collection>(_ bytes: C) -> String
  where C.Element == UInt8, C.Index == Int {
    var output: [UInt8] = []
    output.reserveCapacity(bytes.count)
    var index = bytes.startIndex
    func appendHex(_ byte: UInt8) {
      output.append(UInt8(ascii: "\\"))
      output.append(UInt8(ascii: "x"))
      output.append(hexDigits[Int(byte >> 4)])
      output.append(hexDigits[Int(byte & 0x0F)])
    }
    while index < bytes.endIndex {
      let byte = bytes[index]
      if byte < 0x80 {
        if byte == UInt8(ascii: "\\") {
          output.append(byte)
          output.append(byte)
        } else if byte < 0x20 || byte == 0x7F {
          appendHex(byte)
        } else {
          output.append(byte)
        }
        index += 1
        continue
      }
      let length = validSequenceLength(bytes, at: index)
      if length == 0 {
        appendHex(byte)
        index += 1
      } else if byte == 0xC2 && bytes[index + 1] <= 0x9F {
        // U+0080 to U+009F: the C1 control characters (U+009B is CSI, which a terminal
        // may take as the start of an escape sequence), escaped byte by byte.
        appendHex(byte)
        appendHex(bytes[index + 1])
        index += 2
      } else if length == 3
        && isBidirectionalControl(bytes[index + 1], bytes[index + 2], lead: byte)
      {
        // The bidirectional controls reorder what a terminal shows after them, so a line
        // could show another name than the file's: escaped byte by byte, as C1 is.
        for offset in 0..<3 { appendHex(bytes[index + offset]) }
        index += 3
      } else {
        output.append(contentsOf: bytes[index..<(index + length)])
        index += length
      }
    }
    return String(decoding: output, as: UTF8.self)
  }

  /// True for the UTF-8 encoding (`lead`, `second`, `third`) of a bidirectional control
  /// character (Unicode's Bidi_Control, less U+061C, which only Arabic text needs): U+200E
  /// and U+200F (the marks), U+202A to U+202E (embeddings and overrides) and U+2066 to
  /// U+2069 (isolates).
  private static func isBidirectionalControl(_ second: UInt8, _ third: UInt8, lead: UInt8)
    -> Bool
  {
    guard lead == 0xE2 else { return false }
    switch second {
    case 0x80: return third == 0x8E || third == 0x8F || (0xAA...0xAE).contains(third)
    case 0x81: return (0xA6...0xA9).contains(third)
    default: return false
    }
  }

  /// The length (2–4) of the valid UTF-8 sequence starting at `index` with a non-ASCII
  /// lead byte, or 0 when the bytes there are not valid UTF-8 (RFC 3629 table 3-7: no
  /// overlong forms, no surrogates, nothing above U+10FFFF).
  package static func validSequenceLength<C: Collection>(_ bytes: C, at index: Int) -> Int
  where C.Element == UInt8, C.Index == Int {
    let lead = bytes[index]
    let remaining = bytes.endIndex - index
    func continuation(_ offset: Int, _ range: ClosedRange<UInt8> = 0x80...0xBF) -> Bool {
      offset < remaining && range.contains(bytes[index + offset])
    }
    switch lead {
    case 0xC2...0xDF:
      return continuation(1) ? 2 : 0
    case 0xE0:
      return continuation(1, 0xA0...0xBF) && continuation(2) ? 3 : 0
    case 0xE1...0xEC, 0xEE...0xEF:
      return continuation(1) && continuation(2) ? 3 : 0
    case 0xED:
      return continuation(1, 0x80...0x9F) && continuation(2) ? 3 : 0
    case 0xF0:
      return continuation(1, 0x90...0xBF) && continuation(2) && continuation(3) ? 4 : 0
    case 0xF1...0xF3:
      return continuation(1) && continuation(2) && continuation(3) ? 4 : 0
    case 0xF4:
      return continuation(1, 0x80...0x8F) && continuation(2) && continuation(3) ? 4 : 0
    default:
      return 0
    }
  }

  /// Reverses ``escape(_:)``; nil on a malformed escape.
  static func unescape(_ text: String) -> [UInt8]? {
    let input = Array(text.utf8)
    var output: [UInt8] = []
    output.reserveCapacity(input.count)
    var index = 0
    func hexValue(_ byte: UInt8) -> UInt8? {
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
      case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
      case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
      default: return nil
      }
    }
    while index < input.count {
      let byte = input[index]
      guard byte == UInt8(ascii: "\\") else {
        output.append(byte)
        index += 1
        continue
      }
      guard index + 1 < input.count else { return nil }
      if input[index + 1] == UInt8(ascii: "\\") {
        output.append(byte)
        index += 2
      } else if input[index + 1] == UInt8(ascii: "x"), index + 3 < input.count,
        let high = hexValue(input[index + 2]), let low = hexValue(input[index + 3])
      {
        output.append(high << 4 | low)
        index += 4
      } else {
        return nil
      }
    }
    return output
  }
}
