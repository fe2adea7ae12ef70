import SqueezeEngines

/// A command line that does not parse. Printed as swift-argument-parser prints its errors:
/// `Error: <message>`, the usage line, and `See 'squeeze --help' for more information.`;
/// the exit status is 64 (`EX_USAGE`).
enum UsageError: Error, Equatable, Sendable, CustomStringConvertible {
  /// An option squeeze does not have, as typed (`--x`, `-x`).
  case unknownOption(String)
  /// An option that takes a value came last, or before `--`.
  case missingValue(option: String)
  /// An option's value does not parse; `reason` says what is expected.
  case invalidValue(String, option: String, reason: String)
  /// A flag that takes no value was given one (`--quiet=yes`).
  case unexpectedValue(option: String)
  /// A required argument is missing.
  case missingArgument(String)
  /// Two options that cannot go together.
  case conflict(String, String)
  /// An extra positional argument.
  case unexpectedArgument(String)
  /// `-` (standard input) next to other paths without `-c`.
  case standardInputAmongPaths
  /// A compression level no engine has (`-13`, `--level 0`).
  case invalidLevel(Int)
  /// A level the chosen engine does not have (`--level 11 --engine zlib`).
  case levelNeedsOtherEngine(Int, engine: Engine)

  var description: String {
    switch self {
    case .unknownOption(let option): "Unknown option '\(option)'"
    case .missingValue(let option): "Missing value for '\(option)'"
    case .invalidValue(let value, let option, let reason):
      "The value '\(value)' is invalid for '\(option)': \(reason)"
    case .unexpectedValue(let option): "The option '\(option)' does not take a value"
    case .missingArgument(let argument): "Missing expected argument '\(argument)'"
    case .conflict(let first, let second): "'\(first)' cannot be used with '\(second)'"
    case .unexpectedArgument(let argument): "Unexpected argument '\(argument)'"
    case .standardInputAmongPaths:
      "'-' (standard input) can be given with other paths only with '--stdout'"
    case .invalidLevel(let level):
      "level \(level) is not a compression level (\(Engine.allCases.map { "\($0): \($0.levels.lowerBound) to \($0.levels.upperBound)" }.joined(separator: ", ")))"
    case .levelNeedsOtherEngine(let level, let engine):
      "level \(level) needs --engine \(Engine.allCases.first { $0.levels.contains(level) }?.rawValue ?? "fast") (\(engine): \(engine.levels.lowerBound) to \(engine.levels.upperBound))"
    }
  }
}
