import Foundation

/// A seeded pseudo-random generator (SplitMix64): the same seed gives the same values on every
/// run and machine, so a property test that fails can be replayed from the seed it prints.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
  private var state: UInt64

  /// A generator that starts from `seed`.
  public init(seed: UInt64) {
    state = seed
  }

  /// The next 64 random bits.
  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var mixed = state
    mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
    mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
    return mixed ^ (mixed >> 31)
  }
}

/// Values a hostile user types after an option: numbers past every integer type, signs,
/// exponents, units, empty text, NUL bytes, bytes that are not UTF-8, and very long text;
/// plus values an option does take, so that accepted runs are exercised too.
public enum HostileValues {
  /// The seeds property tests use: `SQUEEZE_PROPERTY_SEED` (decimal, or hexadecimal after
  /// `0x`) when set, to replay a failure or to explore, else fixed ones, the same every run.
  public static var seeds: [UInt64] {
    if let text = ProcessInfo.processInfo.environment["SQUEEZE_PROPERTY_SEED"] {
      let seed = text.hasPrefix("0x") ? UInt64(text.dropFirst(2), radix: 16) : UInt64(text)
      if let seed { return [seed] }
    }
    return [0x5EED_0001, 0x5EED_0002, 0x5EED_0003]
  }

  /// Numbers at and just past the ends of the integer types, and around them.
  static let edges = [
    "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
    "18446744073709551615", "18446744073709551616", "4294967295", "4294967296", "2147483647",
    "2147483648", "-2147483649", "65535", "65536", "4096", "4097", "12", "13", "1", "0", "-1",
  ]

  /// Text that number parsers read in surprising ways.
  static let oddNumbers = [
    "", " ", "0", "00", "-0", "+0", "0.0", ".", "1.", ".5", "1..5", "1.5.5", "+5", "--5", "+-5",
    "1e3", "1E400", "1e-400", "0x10", "0x1p3", "0b101", "0o17", "inf", "-inf", "infinity", "nan",
    "NaN", "1_000", "1,000", " 5", "5 ", "٣", "²", "½", "５", "5\u{0}", "\u{0}",
  ]

  /// Units squeeze takes after numbers (durations and sizes), and none.
  static let units = ["", "ns", "us", "µs", "ms", "s", "m", "h", "d", "K", "M", "G", "k", "g"]

  /// Units it does not take.
  static let otherUnits = ["KB", "KiB", "y", "w", "sec", "S", "D", "dd", " d"]

  /// Values some option takes, to reach the paths after a successful parse.
  static let plausible = [
    "4", "1", "32K", "64M", "1M", "5ms", "100us", "60s", "7d", "1000000d", "1ns", "2/3", "1/1",
    "fast", "zlib", "auto", "bar", "plain", "none", "actor", "main-actor", "nonisolated",
    "detached", "blocking", "bash", "zsh", "fish", "*.txt", "**/", "[a-", "\\", ".gz", "x.jsonl",
    "x.svg", "x.html", "x.json", "x.png",
  ]

  /// One hostile value, at most `maximumLength` bytes long.
  public static func value(using generator: inout SeededGenerator, maximumLength: Int) -> [UInt8] {
    let value: [UInt8]
    // Numbers with units most often: a value that parses and is huge is what reaches the
    // arithmetic behind an option.
    let unit =
      Int.random(in: 0..<5, using: &generator) == 0
      ? otherUnits.randomElement(using: &generator)! : units.randomElement(using: &generator)!
    switch Int.random(in: 0..<15, using: &generator) {
    case 0:
      value = Array(edges.randomElement(using: &generator)!.utf8)
    case 1:
      value = Array(oddNumbers.randomElement(using: &generator)!.utf8)
    case 2, 10, 11:
      // A long run of digits, maybe signed, with a unit.
      let count = Int.random(in: 1...60, using: &generator)
      let sign = ["", "", "", "", "-", "+"].randomElement(using: &generator)!
      value = Array((sign + digits(count, using: &generator) + unit).utf8)
    case 3:
      // A number with a fraction and a unit.
      let text =
        digits(Int.random(in: 0...20, using: &generator), using: &generator) + "."
        + digits(Int.random(in: 0...20, using: &generator), using: &generator) + unit
      value = Array(text.utf8)
    case 4, 12:
      // An edge with a unit.
      value = Array((edges.randomElement(using: &generator)! + unit).utf8)
    case 5:
      // k/n with edges.
      let text =
        edges.randomElement(using: &generator)! + "/" + edges.randomElement(using: &generator)!
      value = Array(text.utf8)
    case 6:
      // Bytes that are not UTF-8, among ASCII ones.
      value = (0..<Int.random(in: 1...16, using: &generator)).map { _ in
        Bool.random(using: &generator)
          ? UInt8.random(in: 0x80...0xFF, using: &generator)
          : UInt8.random(in: 0x21...0x7E, using: &generator)
      }
    case 7:
      // NUL bytes inside (a process gets the value cut at the first one).
      value =
        Array(plausible.randomElement(using: &generator)!.utf8) + [0]
        + Array(edges.randomElement(using: &generator)!.utf8)
    case 8:
      // Very long: digits, or one letter repeated.
      let count = Int.random(in: 1000...maximumLength, using: &generator)
      value =
        Bool.random(using: &generator)
        ? Array(digits(count, using: &generator).utf8)
        : [UInt8](repeating: UInt8.random(in: 0x21...0x7E, using: &generator), count: count)
    case 9:
      // Any bytes at all.
      value = (0..<Int.random(in: 0...24, using: &generator)).map { _ in
        UInt8.random(in: 0...0xFF, using: &generator)
      }
    default:
      value = Array(plausible.randomElement(using: &generator)!.utf8)
    }
    return Array(value.prefix(maximumLength))
  }

  /// An option named `--long` or `-short` with `value`, spelled one of the ways a command line
  /// gives one: separate, after `=`, or attached to the short name.
  public static func spell(
    long: String?, short: Character?, value: [UInt8], using generator: inout SeededGenerator
  ) -> [[UInt8]] {
    var spellings: [[[UInt8]]] = []
    if let long {
      spellings.append([Array("--\(long)".utf8), value])
      spellings.append([Array("--\(long)=".utf8) + value])
    }
    if let short {
      spellings.append([Array("-\(short)".utf8), value])
      spellings.append([Array("-\(short)".utf8) + value])
    }
    return spellings.randomElement(using: &generator) ?? []
  }

  /// `count` random decimal digits.
  public static func digits(_ count: Int, using generator: inout SeededGenerator) -> String {
    String((0..<count).map { _ in Character(String(Int.random(in: 0...9, using: &generator))) })
  }
}
