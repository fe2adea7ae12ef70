import SqueezeEngines

/// A command line that does not parse. Printed as swift-argument-parser prints its errors
/// (``HelpText/usageError(_:)``): `Error: <message>`, a `Help:` line for the argument or
/// option concerned, the usage line, and `See 'squeeze --help' for more information.`; the
/// exit status is 64 (`EX_USAGE`).
indirect enum UsageError: Error, Equatable, Sendable, CustomStringConvertible {
  /// An option squeeze does not have, as typed (`--x`, `-x`), and the nearest long option
  /// when one is close (swift-argument-parser's "Did you mean", `String.editDistance` < 4).
  case unknownOption(String, suggestion: String? = nil)
  /// An option that takes a value came last, or before `--`.
  case missingValue(option: String)
  /// An option's value does not parse; `reason` says what is expected.
  case invalidValue(String, option: String, reason: String)
  /// A flag that takes no value was given one (`--quiet=yes`).
  case unexpectedValue(option: String)
  /// A required argument is missing.
  case missingArgument(String)
  /// An option that needs a path was given with none (standard input goes to standard
  /// output then); `reason` says why it cannot work on that stream.
  case needsPath(option: String, reason: String)
  /// Two options that cannot go together.
  case conflict(String, String)
  /// An option that needs another one.
  case requires(String, String)
  /// An extra positional argument.
  case unexpectedArgument(String)
  /// `-` (standard input) next to other paths without `-c`.
  case standardInputAmongPaths
  /// A compression level no engine has (`-13`, `--level 0`).
  case invalidLevel(Int)
  /// A level the chosen engine does not have (`--level 11 --engine zlib`).
  case levelNeedsOtherEngine(Int, engine: Engine)
  /// The command was given no arguments at all and needs some: the whole help is printed
  /// after the error, as swift-argument-parser does (`ParserError.noArguments`).
  case noArguments(UsageError)
  /// The error is about `squeeze timeline`: its usage is printed, not squeeze's.
  case inTimeline(UsageError)

  var description: String {
    switch self {
    case .unknownOption(let option, let suggestion?):
      "Unknown option '\(option)'. Did you mean '\(suggestion)'?"
    case .unknownOption(let option, nil): "Unknown option '\(option)'"
    case .missingValue(let option): "Missing value for '\(option)'"
    case .invalidValue(let value, let option, let reason):
      "The value '\(value)' is invalid for '\(option)': \(reason)"
    case .unexpectedValue(let option): "The option '\(option)' does not take a value"
    case .missingArgument(let argument): "Missing expected argument '\(argument)'"
    case .needsPath(let option, let reason): "'\(option)' needs a <path>: \(reason)"
    case .conflict(let first, let second): "'\(first)' cannot be used with '\(second)'"
    case .requires(let first, let second): "'\(first)' requires '\(second)'"
    case .unexpectedArgument(let argument): "Unexpected argument '\(argument)'"
    case .standardInputAmongPaths:
      "'-' (standard input) can be given with other paths only with '--stdout'"
    case .invalidLevel(let level):
      "level \(level) is not a compression level (\(Engine.allCases.map { "\($0): \($0.levels.lowerBound) to \($0.levels.upperBound)" }.joined(separator: ", ")))"
    case .levelNeedsOtherEngine(let level, let engine):
      "level \(level) needs --engine \(Engine.allCases.first { $0.levels.contains(level) }?.rawValue ?? "fast") (\(engine): \(engine.levels.lowerBound) to \(engine.levels.upperBound))"
    case .noArguments(let error), .inTimeline(let error): error.description
    }
  }

  /// True when the error is about `squeeze timeline`.
  var concernsTimeline: Bool {
    switch self {
    case .inTimeline: true
    case .noArguments(let error): error.concernsTimeline
    default: false
    }
  }

  /// True when the command was given no arguments at all (``noArguments(_:)``, wrapped or
  /// not).
  var hadNoArguments: Bool {
    switch self {
    case .noArguments: true
    case .inTimeline(let error): error.hadNoArguments
    default: false
    }
  }

  /// The error without the ``inTimeline(_:)`` and ``noArguments(_:)`` wrappers.
  var underlying: UsageError {
    switch self {
    case .inTimeline(let error), .noArguments(let error): error.underlying
    default: self
    }
  }

  /// swift-argument-parser's `Help:` line: the argument or option concerned and its help
  /// (`<task-log>  A log written by …`), or nil when the error concerns none.
  func helpLine(in command: CommandDocumentation) -> String? {
    switch underlying {
    case .missingArgument(let label):
      let bare = label.split(separator: " ").first.map(String.init) ?? label
      return command.arguments.first { $0.label == bare }.map { "\($0.label)  \($0.help)" }
    case .needsPath:
      return command.arguments.first.map { "\($0.label)  \($0.help)" }
    case .missingValue(let option), .invalidValue(_, let option, _):
      return command.options.first { $0.synopsis == option }.map { "\($0.synopsis)  \($0.help)" }
    default:
      return nil
    }
  }
}

extension String {
  /// The Levenshtein distance to `other`: the fewest single-character insertions, deletions
  /// and substitutions that turn one into the other (what swift-argument-parser measures its
  /// "Did you mean" suggestions by).
  ///
  /// - Complexity: O(*m* × *n*) time, O(*n*) memory, for lengths *m* and *n*.
  func editDistance(to other: String) -> Int {
    let source = Array(self)
    let target = Array(other)
    guard !source.isEmpty else { return target.count }
    guard !target.isEmpty else { return source.count }
    var previous = Array(0...target.count)
    var current = [Int](repeating: 0, count: target.count + 1)
    for (row, sourceCharacter) in source.enumerated() {
      current[0] = row + 1
      for (column, targetCharacter) in target.enumerated() {
        let substitution = previous[column] + (sourceCharacter == targetCharacter ? 0 : 1)
        current[column + 1] = Swift.min(previous[column + 1] + 1, current[column] + 1, substitution)
      }
      swap(&previous, &current)
    }
    return previous[target.count]
  }
}
