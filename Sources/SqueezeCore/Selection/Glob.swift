import SqueezeSystem

/// A shell-style pattern with rsync and gitignore rules (`--include`, `--exclude`):
///
/// - a pattern without `/` matches a name at any depth; one with `/` (a leading `/` is
///   dropped) matches the whole path below the argument;
/// - a trailing `/` makes the pattern match folders only;
/// - `?` matches one character and `*` any run of characters, neither crossing `/`;
///   `**` matches anything, `/` included, and `**/` also matches nothing (so `a/**/b` matches
///   `a/b`); `[abc]`, `[a-z]` and `[!a-z]` (or `[^a-z]`) match one character of a set; `\`
///   makes the next character literal.
///
/// Matching works on raw bytes (names need not be UTF-8); `?` and sets take a whole UTF-8
/// character when the bytes are one.
package struct Glob: Sendable, Hashable {
  private enum Token: Sendable, Hashable {
    case literal(UInt8)
    /// `?`: one character, not `/`.
    case anyCharacter
    /// `*`: a run of characters without `/`.
    case star
    /// `**`: a run of anything.
    case globstar
    /// `**/`: nothing, or a run of anything ending in `/`.
    case globstarSlash
    /// `[...]`: one character in (or, negated, not in) the ranges; never `/`.
    case set(ranges: [ClosedRange<UInt32>], negated: Bool)
  }

  private let tokens: [Token]
  /// The pattern matches the whole relative path (it contained a `/`).
  let isAnchored: Bool
  /// The pattern matches folders only (it ended in `/`).
  let matchesFoldersOnly: Bool
  /// The pattern as written.
  let text: String

  /// Compiles `pattern`; nil when it is empty or has an unterminated `[` or a trailing `\`.
  package init?(_ pattern: String) {
    text = pattern
    var bytes = Array(pattern.utf8)
    matchesFoldersOnly = bytes.count > 1 && bytes.last == UInt8(ascii: "/")
    if matchesFoldersOnly { bytes.removeLast() }
    if bytes.first == UInt8(ascii: "/") {
      bytes.removeFirst()
      isAnchored = true
    } else {
      isAnchored = bytes.contains(UInt8(ascii: "/"))
    }
    guard !bytes.isEmpty else { return nil }
    var tokens: [Token] = []
    var index = 0
    while index < bytes.count {
      let byte = bytes[index]
      switch byte {
      case UInt8(ascii: "\\"):
        guard index + 1 < bytes.count else { return nil }
        tokens.append(.literal(bytes[index + 1]))
        index += 2
      case UInt8(ascii: "?"):
        tokens.append(.anyCharacter)
        index += 1
      case UInt8(ascii: "*"):
        if index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "*") {
          // A run of two stars or more is one globstar; a '*' after its '/' is a star of
          // its own (`**/*.txt`).
          while index < bytes.count && bytes[index] == UInt8(ascii: "*") { index += 1 }
          if index < bytes.count && bytes[index] == UInt8(ascii: "/") {
            tokens.append(.globstarSlash)
            index += 1
          } else {
            tokens.append(.globstar)
          }
        } else {
          tokens.append(.star)
          index += 1
        }
      case UInt8(ascii: "["):
        guard let (token, next) = Glob.parseSet(bytes, from: index) else { return nil }
        tokens.append(token)
        index = next
      default:
        tokens.append(.literal(byte))
        index += 1
      }
    }
    self.tokens = tokens
  }

  /// Parses `[...]` starting at `start`; returns the token and the index after `]`.
  private static func parseSet(_ bytes: [UInt8], from start: Int) -> (Token, Int)? {
    var index = start + 1
    var negated = false
    if index < bytes.count
      && (bytes[index] == UInt8(ascii: "!") || bytes[index] == UInt8(ascii: "^"))
    {
      negated = true
      index += 1
    }
    var ranges: [ClosedRange<UInt32>] = []
    var first = true
    while index < bytes.count {
      if bytes[index] == UInt8(ascii: "]") && !first {
        return (.set(ranges: ranges, negated: negated), index + 1)
      }
      first = false
      var (low, length) = scalar(bytes, at: index)
      if bytes[index] == UInt8(ascii: "\\") && index + 1 < bytes.count {
        (low, length) = scalar(bytes, at: index + 1)
        length += 1
      }
      index += length
      if index + 1 < bytes.count && bytes[index] == UInt8(ascii: "-")
        && bytes[index + 1] != UInt8(ascii: "]")
      {
        let (high, highLength) = scalar(bytes, at: index + 1)
        index += 1 + highLength
        guard low <= high else { return nil }
        ranges.append(low...high)
      } else {
        ranges.append(low...low)
      }
    }
    return nil
  }

  /// The character at `index`: its value (the code point of a valid UTF-8 sequence, else the
  /// byte) and its length in bytes.
  private static func scalar(_ bytes: [UInt8], at index: Int) -> (UInt32, Int) {
    let byte = bytes[index]
    guard byte >= 0x80 else { return (UInt32(byte), 1) }
    let length = DisplayEscaping.validSequenceLength(bytes, at: index)
    guard length > 0 else { return (UInt32(byte), 1) }
    var value = UInt32(byte) & (0xFF >> (length + 1))
    for offset in 1..<length { value = value << 6 | UInt32(bytes[index + offset] & 0x3F) }
    return (value, length)
  }

  /// True when the pattern matches `path`.
  ///
  /// - Parameters:
  ///   - relativePath: the path below the argument (`sub/dir/name`).
  ///   - isFolder: whether it names a folder (for patterns ending in `/`).
  /// - Complexity: O(pattern length × path length).
  func matches(_ relativePath: RawPath, isFolder: Bool) -> Bool {
    if matchesFoldersOnly && !isFolder { return false }
    let subject = isAnchored ? relativePath.bytes : relativePath.lastComponent.bytes
    return Glob.match(tokens, subject)
  }

  /// Dynamic programming over (token, byte position): `reachable[j]` says whether the tokens
  /// so far can consume exactly the first `j` bytes.
  private static func match(_ tokens: [Token], _ subject: [UInt8]) -> Bool {
    let count = subject.count
    var reachable = [Bool](repeating: false, count: count + 1)
    reachable[0] = true
    let slash = UInt8(ascii: "/")
    for token in tokens {
      var next = [Bool](repeating: false, count: count + 1)
      switch token {
      case .literal(let byte):
        for position in 0..<count where reachable[position] && subject[position] == byte {
          next[position + 1] = true
        }
      case .anyCharacter, .set:
        for position in 0..<count where reachable[position] && subject[position] != slash {
          let (value, length) = scalar(subject, at: position)
          guard position + length <= count else { continue }
          if case .set(let ranges, let negated) = token {
            let inside = ranges.contains { $0.contains(value) }
            guard inside != negated else { continue }
          }
          next[position + length] = true
        }
      case .star:
        var open = false
        for position in 0...count {
          if reachable[position] { open = true }
          if open { next[position] = true }
          if position < count && subject[position] == slash { open = false }
        }
      case .globstar:
        var open = false
        for position in 0...count {
          if reachable[position] { open = true }
          if open { next[position] = true }
        }
      case .globstarSlash:
        // Nothing, or anything up to and including a '/'.
        var open = false
        for position in 0...count {
          if reachable[position] {
            next[position] = true
            open = true
          }
          if open && position < count && subject[position] == slash { next[position + 1] = true }
        }
      }
      reachable = next
    }
    return reachable[count]
  }
}

/// What `--include`, `--exclude`, `--older-than` and `--shard` select.
package struct Selection: Sendable {
  /// `--include` patterns: when any is given, a file must match one.
  package var includes: [Glob] = []
  /// `--exclude` patterns: a matching file or folder is left out (wins over includes).
  package var excludes: [Glob] = []
  /// `--older-than`: files modified at or after this time are left out.
  package var modifiedBefore: Timestamp? = nil
  /// `--shard`.
  package var shard: Shard? = nil

  /// No selection: everything is taken.
  package init() {}

  /// True when nothing is filtered.
  var isEmpty: Bool {
    includes.isEmpty && excludes.isEmpty && modifiedBefore == nil && shard == nil
  }

  /// Why a folder is not entered, or nil to enter it.
  func skipReason(forFolder relativePath: RawPath) -> SkipReason? {
    excludes.contains { $0.matches(relativePath, isFolder: true) } ? .excluded : nil
  }

  /// Why a file is left out, or nil to take it.
  func skipReason(forFile relativePath: RawPath, modified: Timestamp) -> SkipReason? {
    if excludes.contains(where: { $0.matches(relativePath, isFolder: false) }) { return .excluded }
    if !includes.isEmpty && !includes.contains(where: { $0.matches(relativePath, isFolder: false) })
    {
      return .excluded
    }
    if let modifiedBefore, !(modified < modifiedBefore) { return .tooRecent }
    if let shard, !shard.contains(relativePath) { return .otherShard }
    return nil
  }
}
