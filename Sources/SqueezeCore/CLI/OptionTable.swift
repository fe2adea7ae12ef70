import SqueezeEngines

/// One option of the command line: its names, its value, its help, and what it does to
/// ``Options``. The table drives parsing, `--help`, the man page and the shell completions
/// (``CommandDocumentation``), so none of them can disagree with another.
struct OptionDefinition: Sendable {
  /// The `--help` section it is listed in (and the man page's subsection).
  enum Group: String, Sendable, CaseIterable {
    case modes = "MODES"
    case output = "OUTPUT OPTIONS"
    case selection = "SELECTION OPTIONS"
    case compression = "COMPRESSION OPTIONS"
    case reporting = "REPORTING OPTIONS"
    case diagnostics = "DIAGNOSTIC OPTIONS"
    /// Help, version and the generators, last as in swift-argument-parser.
    case general = "OPTIONS"
  }

  /// Where `--help` lists it.
  var group: Group
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
  /// May be given more than once (`--include`): completions keep offering it.
  var repeats = false
  /// What a shell completes for the value.
  var completion: ValueCompletion = .none
  /// Applies the option; `value` is empty for a flag.
  var apply:
    @Sendable (inout Options, _ value: String, _ spelling: String) throws(UsageError) -> Void

  /// How errors name the option: `--jobs <n>` (the long name when there is one).
  var synopsis: String {
    let name = long.map { "--" + $0 } ?? "-" + String(short!)
    return valueLabel.map { "\(name) <\($0)>" } ?? name
  }

  /// The spellings typed on a command line: `-j`, `--jobs`.
  var spellings: [String] {
    [short.map { "-" + String($0) }, long.map { "--" + $0 }].compactMap { $0 }
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
  static let options: [OptionDefinition] =
    modes + output + selection + compression + reporting + diagnostics + general

  private static let modes: [OptionDefinition] = [
    OptionDefinition(
      group: .modes, short: "d", long: "decompress",
      help: "Restore the originals from .gz files (beside them, or under --output).",
      apply: { options, _, _ in if options.mode == .compress { options.mode = .decompress } }),
    OptionDefinition(
      group: .modes, short: "t", long: "test",
      help:
        "Check every member of each .gz file (header, deflate data, CRC-32, length); write nothing.",
      apply: { options, _, _ in if options.mode != .list { options.mode = .test } }),
    OptionDefinition(
      group: .modes, short: "l", long: "list",
      help:
        "Print compressed size, uncompressed size, ratio and name of each .gz file, and totals.",
      apply: { options, _, _ in options.mode = .list }),
  ]

  private static let output: [OptionDefinition] = [
    OptionDefinition(
      group: .output, short: "o", long: "output", valueLabel: "dir",
      help:
        "Write outputs under <dir> instead of beside each file, as rsync maps arguments: <dir>/x/ for a/x, x's contents in <dir> for a/x/.",
      completion: .folders,
      apply: { options, value, spelling throws(UsageError) in
        guard !value.isEmpty else {
          throw .invalidValue(value, option: spelling, reason: "expected a folder")
        }
        options.output = RawPath(value)
      }),
    OptionDefinition(
      group: .output, short: "c", long: "stdout",
      help: "Write to standard output. With no path or '-', read standard input.",
      apply: { options, _, _ in options.toStandardOutput = true }),
    OptionDefinition(
      group: .output, short: "k", long: "keep",
      help: "Keep the originals (the default; accepted for gzip habits).",
      apply: { options, _, _ in options.keep = true }),
    OptionDefinition(
      group: .output, short: "S", long: "suffix", valueLabel: "suffix",
      help: "The suffix of compressed files.", defaultValue: ".gz",
      apply: { options, value, spelling throws(UsageError) in
        guard !value.isEmpty, !value.contains("/") else {
          throw .invalidValue(
            value, option: spelling, reason: "expected a non-empty suffix without '/'")
        }
        options.suffix = RawPath(value)
      }),
    OptionDefinition(
      group: .output, short: "f", long: "force",
      help:
        "Replace existing outputs squeeze would leave alone, and with --rm remove originals that have other hard links.",
      apply: { options, _, _ in options.force = true }),
    OptionDefinition(
      group: .output, short: nil, long: "rm",
      help:
        "Remove each original once its output is on disk under its final name, its folder synced, and verified by decompressing it.",
      apply: { options, _, _ in options.removeSources = true }),
    OptionDefinition(
      group: .output, short: nil, long: "delete",
      help:
        "With --output: remove outputs, links and folders squeeze mirrored whose source is gone, once the new outputs are on disk; never foreign files, nothing after a walk error.",
      apply: { options, _, _ in options.deletes = true }),
    OptionDefinition(
      group: .output, short: nil, long: "dry-run",
      help: "Print what would be compressed, skipped and removed; change nothing.",
      apply: { options, _, _ in options.dryRun = true }),
  ]

  private static let selection: [OptionDefinition] = [
    OptionDefinition(
      group: .selection, short: nil, long: "include", valueLabel: "glob",
      help:
        "Only take files matching <glob> (repeatable). Without '/' it matches the file name at any depth, with '/' the path below the argument; '*' and '?' stop at '/', '**' crosses it.",
      repeats: true,
      apply: { options, value, spelling throws(UsageError) in
        guard Glob(value) != nil else {
          throw .invalidValue(value, option: spelling, reason: "not a valid pattern")
        }
        options.includes.append(value)
      }),
    OptionDefinition(
      group: .selection, short: nil, long: "exclude", valueLabel: "glob",
      help:
        "Leave out files and folders matching <glob> (repeatable; wins over --include; excluded folders are not entered).",
      repeats: true,
      apply: { options, value, spelling throws(UsageError) in
        guard Glob(value) != nil else {
          throw .invalidValue(value, option: spelling, reason: "not a valid pattern")
        }
        options.excludes.append(value)
      }),
    OptionDefinition(
      group: .selection, short: nil, long: "older-than", valueLabel: "duration",
      help: "Only take files last modified longer ago than <duration> (90s, 30m, 12h, 7d).",
      apply: { options, value, spelling throws(UsageError) in
        guard let seconds = ValueParsers.duration(value) else {
          throw .invalidValue(
            value, option: spelling,
            reason: "expected a positive duration with a unit, such as 90s, 30m, 12h or 7d")
        }
        options.olderThan = seconds
      }),
    OptionDefinition(
      group: .selection, short: "r", long: "recursive",
      help: "Accepted for gzip habits: folders are always walked recursively.",
      apply: { _, _, _ in }),
    OptionDefinition(
      group: .selection, short: nil, long: "follow-symlinks",
      help: "Follow symbolic links (by default they are skipped and reported).",
      apply: { options, _, _ in options.followSymlinks = true }),
    OptionDefinition(
      group: .selection, short: nil, long: "one-file-system",
      help: "Do not cross into other mounted file systems.",
      apply: { options, _, _ in options.oneFileSystem = true }),
    OptionDefinition(
      group: .selection, short: nil, long: "shard", valueLabel: "k>/<n",
      help:
        "Only take the files whose path below the argument hashes (FNV-1a 64) to shard k of n, so n hosts or array jobs share a folder.",
      apply: { options, value, spelling throws(UsageError) in
        let parts = value.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]), count >= 1,
          (1...count).contains(index)
        else {
          throw .invalidValue(
            value, option: spelling, reason: "expected k/n with 1 <= k <= n, such as 2/3")
        }
        options.shard = Options.Shard(index: index, count: count)
      }),
  ]

  /// Sets the level from its digits (`-11`, `--level 11`); the engine's range is checked once
  /// every option is read, so `--level 11 --engine zlib` and `--engine zlib --level 11` agree.
  ///
  /// - Throws: ``UsageError/invalidLevel(_:)`` for a number no engine has.
  static func applyLevel(_ digits: String, to options: inout Options, spelling: String)
    throws(UsageError)
  {
    guard let number = Int(digits), number >= 0 else {
      throw .invalidValue(digits, option: spelling, reason: "expected a level from 1 to 12")
    }
    guard let level = CompressionLevel(number) else { throw .invalidLevel(number) }
    options.level = level
  }

  // The digit options: one row per first digit, so `-1` ... `-9` parse as options and show
  // in help, man page and completions; the parser reads the digits after one dash as one
  // number, as pigz does (`-11` is level 11), which the help of the family says.
  private static let compression: [OptionDefinition] =
    (1...9).map { digit in
      OptionDefinition(
        group: .compression, short: Character(String(digit)), long: nil,
        help:
          "Compression level: -1 is fastest, -9 compresses more; with --engine fast, -10 to -12 compress most (digits after one dash are one number, as in pigz).",
        helpLabel: "-1 ... -9",
        hidden: digit != 1,
        apply: { options, _, spelling throws(UsageError) in
          try applyLevel(String(digit), to: &options, spelling: spelling)
        })
    } + [
      OptionDefinition(
        group: .compression, short: nil, long: "fast", help: "The same as -1.",
        apply: { options, _, _ in options.level = .fastest }),
      OptionDefinition(
        group: .compression, short: nil, long: "best", help: "The same as -9.",
        apply: { options, _, _ in options.level = .best }),
      OptionDefinition(
        group: .compression, short: nil, long: "level", valueLabel: "n",
        help: "Compression level: 1 to 12 with --engine fast, 1 to 9 with --engine zlib.",
        defaultValue: "6",
        apply: { options, value, spelling throws(UsageError) in
          try applyLevel(value, to: &options, spelling: spelling)
        }),
      OptionDefinition(
        group: .compression, short: nil, long: "engine", valueLabel: "engine",
        help:
          "Which libraries compress and restore: "
          + Engine.allCases.map { "\($0.rawValue): \($0.summary)" }.joined(separator: "; ") + ".",
        defaultValue: Engine.default.rawValue,
        completion: .choices(Engine.allCases.map(\.rawValue)),
        apply: { options, value, spelling throws(UsageError) in
          guard let engine = Engine(rawValue: value) else {
            throw .invalidValue(
              value, option: spelling,
              reason: "expected " + Engine.allCases.map(\.rawValue).joined(separator: " or "))
          }
          options.engine = engine
        }),
      OptionDefinition(
        group: .compression, short: "n", long: "no-name",
        help:
          "Compressing, do not store the original name and time; decompressing, do not use them (the default).",
        apply: { options, _, _ in options.headerNameAndTime = false }),
      OptionDefinition(
        group: .compression, short: "N", long: "name",
        help:
          "Compressing, store the original name and time (the default); decompressing, restore them from the header (a stored name over 255 bytes, too long for a file name, fails the file).",
        apply: { options, _, _ in options.headerNameAndTime = true }),
      OptionDefinition(
        group: .compression, short: "j", long: "jobs", valueLabel: "n",
        help: "How many files or chunks are worked on at once.",
        defaultValue: "the CPUs this process may use: affinity and cgroup CPU quota",
        apply: { options, value, spelling throws(UsageError) in
          options.jobs = try parseJobs(value, spelling: spelling)
        }),
      OptionDefinition(
        group: .compression, short: "p", long: "processes", valueLabel: "n",
        help: "The same as --jobs (pigz's spelling).",
        apply: { options, value, spelling throws(UsageError) in
          options.jobs = try parseJobs(value, spelling: spelling)
        }),
      OptionDefinition(
        group: .compression, short: nil, long: "block-size", valueLabel: "size",
        help:
          "Split files larger than <size> into chunks compressed in parallel (32K to 64M; K, M suffixes); with --rsyncable, chunks of <size>/4 to 2x<size>, 0.75x<size> on average.",
        defaultValue: "the engine's: 1M for fast, 128K for zlib",
        apply: { options, value, spelling throws(UsageError) in
          guard let size = ValueParsers.size(value), size >= ChunkLayout.minimumChunkSize,
            size <= ChunkLayout.maximumChunkSize
          else {
            throw .invalidValue(value, option: spelling, reason: "expected a size from 32K to 64M")
          }
          options.blockSize = size
        }),
      OptionDefinition(
        group: .compression, short: nil, long: "rsyncable",
        help:
          "Cut big files into chunks where their content says (a rolling hash), so a small change changes only the output near it and rsync sends little; outputs grow by 0.2 % or less.",
        apply: { options, _, _ in options.rsyncable = true }),
    ]

  private static let reporting: [OptionDefinition] = [
    OptionDefinition(
      group: .reporting, short: nil, long: "progress", valueLabel: "mode",
      help:
        "auto: a live bar on a terminal, nothing otherwise; bar; plain: a line every 5 seconds, for logs; none.",
      defaultValue: "auto", completion: .choices(ProgressStyle.allCases.map(\.rawValue)),
      apply: { options, value, spelling throws(UsageError) in
        guard let style = ProgressStyle(rawValue: value) else {
          throw .invalidValue(value, option: spelling, reason: "expected auto, bar, plain or none")
        }
        options.progress = style
      }),
    OptionDefinition(
      group: .reporting, short: "q", long: "quiet", help: "Print errors only.",
      apply: { options, _, _ in options.verbosity = .quiet }),
    OptionDefinition(
      group: .reporting, short: "v", long: "verbose",
      help: "Print a line for each file and each skip, and the summary.",
      apply: { options, _, _ in options.verbosity = .verbose }),
    OptionDefinition(
      group: .reporting, short: nil, long: "json",
      help: "Print one JSON object summarizing the run on standard output.",
      apply: { options, _, _ in options.json = true }),
  ]

  private static let diagnostics: [OptionDefinition] = [
    OptionDefinition(
      group: .diagnostics, short: nil, long: "isolation", valueLabel: "mode",
      help:
        "Where the work runs, after the stages of WWDC22 \"Visualize and optimize Swift concurrency\": main-actor, actor, nonisolated, detached, or blocking (as nonisolated, with the syncs and reads on the pool's threads).",
      defaultValue: "nonisolated", completion: .choices(Isolation.allCases.map(\.rawValue)),
      apply: { options, value, spelling throws(UsageError) in
        guard let isolation = Isolation(rawValue: value) else {
          throw .invalidValue(
            value, option: spelling,
            reason: "expected main-actor, actor, nonisolated, detached or blocking")
        }
        options.isolation = isolation
      }),
    OptionDefinition(
      group: .diagnostics, short: nil, long: "task-log", valueLabel: "file",
      help: "Write the task-state log (JSON Lines) to <file>; draw it with 'squeeze timeline'.",
      completion: .files,
      apply: { options, value, _ in options.taskLog = RawPath(value) }),
    OptionDefinition(
      group: .diagnostics, short: nil, long: "sample-interval", valueLabel: "duration",
      help: "Time between task-state samples, with a unit (5ms, 1s).", defaultValue: "10ms",
      apply: { options, value, spelling throws(UsageError) in
        guard let seconds = ValueParsers.duration(value), seconds >= 0.0001, seconds <= 60 else {
          throw .invalidValue(
            value, option: spelling, reason: "expected a duration from 100us to 60s, such as 5ms")
        }
        options.sampleInterval = seconds
      }),
  ]

  /// Help, version, and the man page and completion scripts made from this table (the
  /// spellings of swift-argument-parser).
  private static let general: [OptionDefinition] = [
    OptionDefinition(
      group: .general, short: nil, long: "generate-completion-script", valueLabel: "shell",
      help:
        "Print the completion script for <shell> (bash, zsh or fish), made from these options.",
      completion: .choices(CompletionShell.allCases.map(\.rawValue)),
      apply: { options, value, spelling throws(UsageError) in
        guard let shell = CompletionShell(rawValue: value) else {
          throw .invalidValue(value, option: spelling, reason: "expected bash, zsh or fish")
        }
        options.request = .completionScript(shell)
      }),
    OptionDefinition(
      group: .general, short: nil, long: "generate-manual",
      help: "Print the man page (mdoc), made from these options.",
      apply: { options, _, _ in options.request = .manual }),
    OptionDefinition(
      group: .general, short: "V", long: "version", help: "Show the version (-V as gzip's).",
      apply: { options, _, _ in options.request = .version }),
    OptionDefinition(
      group: .general, short: "h", long: "help", help: "Show help information.",
      apply: { options, _, _ in options.request = .help }),
  ]

  /// `-j`/`-p`'s value: a whole number from 1 to 4096.
  ///
  /// - Throws: ``UsageError/invalidValue(_:option:reason:)`` for anything else.
  private static func parseJobs(_ value: String, spelling: String) throws(UsageError) -> Int {
    guard let jobs = Int(value), jobs >= 1, jobs <= 4096 else {
      throw .invalidValue(value, option: spelling, reason: "expected a whole number from 1 to 4096")
    }
    return jobs
  }

  /// The option with long name `name`.
  static func long(_ name: String) -> OptionDefinition? {
    options.first { $0.long == name }
  }

  /// The option with short name `name`.
  static func short(_ name: Character) -> OptionDefinition? {
    options.first { $0.short == name }
  }
}
