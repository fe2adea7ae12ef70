/// One option of the command line: its names, its value, its help, and what it does to
/// ``Options``. The table drives both parsing and `--help`, so they cannot disagree.
struct OptionDefinition: Sendable {
  /// `-o`, without the dash.
  var short: Character?
  /// `--output`, without the dashes.
  var long: String?
  /// The value's label (`dir` for `--output <dir>`), or nil for a flag.
  var valueLabel: String?
  /// One or two sentences for `--help`.
  var help: String
  /// The default, shown in `--help` as `(default: …)`.
  var defaultValue: String?
  /// Replaces the generated label in `--help` (for the `-1` … `-9` family).
  var helpLabel: String?
  /// Left out of `--help` (covered by another entry's label).
  var hidden = false
  /// Applies the option; `value` is nil for a flag.
  var apply:
    @Sendable (inout Options, _ value: String, _ spelling: String) throws(UsageError) -> Void

  /// How errors name the option: `--jobs <n>` (the long name when there is one).
  var synopsis: String {
    let name = long.map { "--" + $0 } ?? "-" + String(short!)
    return valueLabel.map { "\(name) <\($0)>" } ?? name
  }

  /// The label in `--help`: `-j, --jobs <n>`.
  var label: String {
    if let helpLabel { return helpLabel }
    var names: [String] = []
    if let short { names.append("-" + String(short)) }
    if let long { names.append("--" + long) }
    let joined = names.joined(separator: ", ")
    return valueLabel.map { "\(joined) <\($0)>" } ?? joined
  }
}

/// squeeze's options, in `--help` order.
enum OptionTable {
  static let options: [OptionDefinition] = {
    var table: [OptionDefinition] = [
      OptionDefinition(
        short: "o", long: "output", valueLabel: "dir",
        help:
          "Write outputs under <dir>, mirroring each argument relative to itself, instead of beside each file.",
        apply: { options, value, _ in options.output = RawPath(value) }),
      OptionDefinition(
        short: "j", long: "jobs", valueLabel: "n",
        help: "How many files or blocks compress at once.",
        defaultValue: "the active processor count",
        apply: { options, value, spelling throws(UsageError) in
          guard let jobs = Int(value), jobs >= 1, jobs <= 4096 else {
            throw .invalidValue(
              value, option: spelling, reason: "expected a whole number from 1 to 4096")
          }
          options.jobs = jobs
        }),
      OptionDefinition(
        short: nil, long: "level", valueLabel: "n",
        help: "Compression level: 1 is fastest, 9 compresses most.", defaultValue: "6",
        apply: { options, value, spelling throws(UsageError) in
          guard let number = Int(value), let level = CompressionLevel(number) else {
            throw .invalidValue(value, option: spelling, reason: "expected a level from 1 to 9")
          }
          options.level = level
        }),
      OptionDefinition(
        short: nil, long: "block-size", valueLabel: "size",
        help: "Split files larger than <size> into blocks compressed in parallel (K, M suffixes).",
        defaultValue: "128K",
        apply: { options, value, spelling throws(UsageError) in
          guard let size = ValueParsers.size(value), size >= BlockLayout.minimumBlockSize,
            size <= BlockLayout.maximumBlockSize
          else {
            throw .invalidValue(value, option: spelling, reason: "expected a size from 32K to 64M")
          }
          options.blockSize = size
        }),
      OptionDefinition(
        short: "f", long: "force",
        help: "Replace existing outputs that are not squeeze's current output of their source.",
        apply: { options, _, _ in options.force = true }),
      OptionDefinition(
        short: nil, long: "isolation", valueLabel: "mode",
        help:
          "Where compression runs, after the stages of WWDC22 \"Visualize and optimize Swift concurrency\": main-actor, actor, nonisolated or detached.",
        defaultValue: "nonisolated",
        apply: { options, value, spelling throws(UsageError) in
          guard let isolation = Isolation(rawValue: value) else {
            throw .invalidValue(
              value, option: spelling, reason: "expected main-actor, actor, nonisolated or detached"
            )
          }
          options.isolation = isolation
        }),
      OptionDefinition(
        short: nil, long: "task-log", valueLabel: "file",
        help: "Write the task-state log (JSON Lines) to <file>; draw it with 'squeeze timeline'.",
        apply: { options, value, _ in options.taskLog = RawPath(value) }),
      OptionDefinition(
        short: nil, long: "sample-interval", valueLabel: "duration",
        help: "Time between task-state samples, with a unit (5ms, 1s).", defaultValue: "10ms",
        apply: { options, value, spelling throws(UsageError) in
          guard let seconds = ValueParsers.duration(value), seconds >= 0.0001, seconds <= 60 else {
            throw .invalidValue(
              value, option: spelling, reason: "expected a duration from 100us to 60s, such as 5ms")
          }
          options.sampleInterval = seconds
        }),
      OptionDefinition(
        short: "q", long: "quiet", help: "Print errors only.",
        apply: { options, _, _ in options.verbosity = .quiet }),
      OptionDefinition(
        short: "v", long: "verbose",
        help: "Print a line for each file and each skip, and the summary.",
        apply: { options, _, _ in options.verbosity = .verbose }),
    ]
    for digit in 1...9 {
      table.append(
        OptionDefinition(
          short: Character(String(digit)), long: nil, valueLabel: nil,
          help: "Compression level, as with --level: -1 is fastest, -9 compresses most.",
          helpLabel: "-1 ... -9", hidden: digit != 1,
          apply: { options, _, _ in options.level = CompressionLevel(digit)! }))
    }
    return table
  }()

  /// The option with long name `name`.
  static func long(_ name: String) -> OptionDefinition? {
    options.first { $0.long == name }
  }

  /// The option with short name `name`.
  static func short(_ name: Character) -> OptionDefinition? {
    options.first { $0.short == name }
  }
}
