import SqueezeCore
import SqueezeEngines
import SqueezeGzip
import SqueezeSystem

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
    @Sendable (inout Options, _ value: OptionValue, _ spelling: String) throws(UsageError) -> Void

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

/// An option's value as the kernel passed it: bytes, which need not be UTF-8.
///
/// A value that names a file (`-o`, `-S`, `--task-log`) is taken as a ``path``, byte for
/// byte, as positional paths are: a name that is not UTF-8 reaches the file system as it
/// was typed. Words and numbers are read as ``text``.
struct OptionValue: Sendable, Equatable, ExpressibleByStringLiteral {
  /// The bytes after the option (`-ofoo`, `--output=foo`) or of the next argument.
  var bytes: [UInt8]

  /// Wraps bytes as passed.
  init<S: Sequence>(bytes: S) where S.Element == UInt8 {
    self.bytes = Array(bytes)
  }

  /// The UTF-8 bytes of `string`.
  init(_ string: String) {
    bytes = Array(string.utf8)
  }

  /// The UTF-8 bytes of a string literal.
  init(stringLiteral value: String) {
    self.init(value)
  }

  /// The value as text, for words and numbers: bytes that are not UTF-8 become U+FFFD,
  /// which no word or number squeeze takes contains, so such a value is refused.
  var text: String { String(decoding: bytes, as: UTF8.self) }

  /// The value as a path, byte for byte.
  var path: RawPath { RawPath(bytes: bytes) }

  /// The value for messages: as typed when it is UTF-8, otherwise with the bytes that are
  /// not as `\xHH` (``RawPath/displayString``).
  var shown: String { String(validating: bytes, as: UTF8.self) ?? path.displayString }

  /// True for an empty value (and for every flag).
  var isEmpty: Bool { bytes.isEmpty }
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
        "Print compressed size, uncompressed size, ratio (percent saved, as gzip -l) and name of each .gz file, and totals; with -v, first the method, CRC-32, date and time, as gzip -lv.",
      apply: { options, _, _ in options.mode = .list }),
    OptionDefinition(
      group: .modes, short: nil, long: "check",
      help:
        "With --output: compare the backup with its source, changing nothing: each source's CRC-32 and size against its output's trailer (files a re-run would keep, though their bytes changed), missing outputs, links and hard links, and entries whose source is gone; exit status 1 when any differs.",
      apply: { options, _, _ in options.check = true }),
  ]

  private static let output: [OptionDefinition] = [
    OptionDefinition(
      group: .output, short: "o", long: "output", valueLabel: "dir",
      help:
        "Write outputs under <dir> instead of beside each file, as rsync maps arguments: <dir>/x/ for a/x, x's contents in <dir> for a/x/. <dir> itself is made when missing; a missing parent is an error, as with rsync.",
      completion: .folders,
      apply: { options, value, spelling throws(UsageError) in
        guard !value.isEmpty else {
          throw .invalidValue(value.shown, option: spelling, reason: "expected a folder")
        }
        options.output = value.path
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
        guard !value.isEmpty, !value.bytes.contains(UInt8(ascii: "/")) else {
          throw .invalidValue(
            value.shown, option: spelling, reason: "expected a non-empty suffix without '/'")
        }
        options.suffix = value.path
      }),
    OptionDefinition(
      group: .output, short: "f", long: "force",
      help:
        "Replace existing outputs squeeze would leave alone (with --link-dest, link none: write every output anew), and with --rm remove originals that have other hard links.",
      apply: { options, _, _ in options.force = true }),
    OptionDefinition(
      group: .output, short: nil, long: "rm",
      help:
        "Remove each original once its output is on disk under its final name, its folder synced, and verified by decompressing it. On a full disk, the originals of outputs in flight go first and the file that found no room is tried once more.",
      apply: { options, _, _ in options.removeSources = true }),
    OptionDefinition(
      group: .output, short: nil, long: "delete",
      help:
        "With --output: remove what squeeze made in the mirror whose source is gone (outputs, known by their header; links and folders, listed in its .squeeze-manifest), once the new outputs are on disk; nothing anyone else put there, nothing after a walk error.",
      apply: { options, _, _ in options.deletes = true }),
    OptionDefinition(
      group: .output, short: nil, long: "max-delete", valueLabel: "n",
      help:
        "With --delete: delete at most <n> entries (outputs, links, folders), keep the rest and fail the run (status 1) saying how many were kept, as rsync's --max-delete; 0 deletes nothing and reports what would go. Guards a mirror against an empty or unmounted source.",
      apply: { options, value, spelling throws(UsageError) in
        options.maxDeletions = try ValueParsers.wholeNumberValue(
          value, option: spelling, in: maxDeletionsRange)
      }),
    OptionDefinition(
      group: .output, short: nil, long: "link-dest", valueLabel: "dir",
      help:
        "With --output, make a snapshot: each output whose source is unchanged since the snapshot in <dir> (up to date there by the re-run rules, with the same mode, owner and times) is hard-linked from it instead of compressed (repeatable, searched in order; a relative <dir> is relative to the --output folder, as rsync's). Nothing in <dir> is changed; <dir> must exist and lie outside the sources. The --output folder must be empty, or a snapshot a stopped run left unfinished, which is resumed: what it holds for entries the source has lost since is removed, as --delete would.",
      repeats: true, completion: .folders,
      apply: { options, value, spelling throws(UsageError) in
        guard !value.isEmpty else {
          throw .invalidValue(value.shown, option: spelling, reason: "expected a folder")
        }
        options.linkDestinations.append(value.path)
      }),
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
        guard Glob(value.text) != nil else {
          throw .invalidValue(value.shown, option: spelling, reason: "not a valid pattern")
        }
        options.includes.append(value.text)
      }),
    OptionDefinition(
      group: .selection, short: nil, long: "exclude", valueLabel: "glob",
      help:
        "Leave out files and folders matching <glob> (repeatable; wins over --include; excluded folders are not entered).",
      repeats: true,
      apply: { options, value, spelling throws(UsageError) in
        guard Glob(value.text) != nil else {
          throw .invalidValue(value.shown, option: spelling, reason: "not a valid pattern")
        }
        options.excludes.append(value.text)
      }),
    OptionDefinition(
      group: .selection, short: nil, long: "older-than", valueLabel: "duration",
      help:
        "Only take files last modified longer ago than <duration> (90s, 30m, 12h, 7d; \(ValueParsers.durationRangeText(olderThanRange))).",
      apply: { options, value, spelling throws(UsageError) in
        options.olderThan = try ValueParsers.durationValue(
          value, option: spelling, in: olderThanRange, examples: "90s, 30m, 12h or 7d")
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
        let parts = value.text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = ValueParsers.wholeNumber(parts[0]),
          let count = ValueParsers.wholeNumber(parts[1]), count >= 1, (1...count).contains(index)
        else {
          throw .invalidValue(
            value.shown, option: spelling, reason: "expected k/n with 1 <= k <= n, such as 2/3")
        }
        options.shard = Shard(index: index, count: count)
      }),
  ]

  /// Sets the level from its digits (`-11`, `--level 11`); the engine's range is checked once
  /// every option is read, so `--level 11 --engine zlib` and `--engine zlib --level 11` agree.
  ///
  /// - Throws: ``UsageError/invalidLevel(_:)`` for a number no engine has,
  ///   ``UsageError/invalidValue(_:option:reason:)`` for what is not a number.
  static func applyLevel(_ digits: OptionValue, to options: inout Options, spelling: String)
    throws(UsageError)
  {
    guard let number = ValueParsers.wholeNumber(digits.text), number >= 0 else {
      throw .invalidValue(digits.shown, option: spelling, reason: "expected a level from 1 to 12")
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
          try applyLevel(OptionValue(String(digit)), to: &options, spelling: spelling)
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
          guard let engine = Engine(rawValue: value.text) else {
            throw .invalidValue(
              value.shown, option: spelling,
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
          "Compressing, store the original name and time (the default); decompressing, restore them from the header (of a stored path, its last component, as gzip does; a stored name over 255 bytes, too long for a file name, fails the file).",
        apply: { options, _, _ in options.headerNameAndTime = true }),
      OptionDefinition(
        group: .compression, short: "j", long: "jobs", valueLabel: "n",
        help: "How many files or chunks are worked on at once (1 to 4096).",
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
          options.blockSize = try ValueParsers.sizeValue(
            value, option: spelling, in: ChunkLayout.minimumChunkSize...ChunkLayout.maximumChunkSize
          )
        }),
      OptionDefinition(
        group: .compression, short: nil, long: "rsyncable",
        help:
          "Cut big files into chunks where their content says (a rolling hash), so a small change changes only the output near it and rsync sends little; outputs grow by 0.2 % or less. Restores, --test and --list take it and ignore it, as gzip does.",
        apply: { options, _, _ in options.rsyncable = true }),
    ]

  private static let reporting: [OptionDefinition] = [
    OptionDefinition(
      group: .reporting, short: nil, long: "progress", valueLabel: "mode",
      help:
        "auto: a live bar on a terminal, nothing otherwise; bar; plain: a line every 5 seconds, for logs; none.",
      defaultValue: "auto", completion: .choices(ProgressStyle.allCases.map(\.rawValue)),
      apply: { options, value, spelling throws(UsageError) in
        guard let style = ProgressStyle(rawValue: value.text) else {
          throw .invalidValue(
            value.shown, option: spelling, reason: "expected auto, bar, plain or none")
        }
        options.progress = style
      }),
    OptionDefinition(
      group: .reporting, short: "q", long: "quiet", help: "Print errors only.",
      apply: { options, _, _ in options.verbosity = .quiet }),
    OptionDefinition(
      group: .reporting, short: "v", long: "verbose",
      help:
        "Print a line for each file, each skip and, in a mirror, each link and folder, and the summary with the main actor's worst lag and hangs.",
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
        guard let isolation = Isolation(rawValue: value.text) else {
          throw .invalidValue(
            value.shown, option: spelling,
            reason: "expected main-actor, actor, nonisolated, detached or blocking")
        }
        options.isolation = isolation
      }),
    OptionDefinition(
      group: .diagnostics, short: nil, long: "task-log", valueLabel: "file",
      help: "Write the task-state log (JSON Lines) to <file>; draw it with 'squeeze timeline'.",
      completion: .files,
      apply: { options, value, _ in options.taskLog = value.path }),
    OptionDefinition(
      group: .diagnostics, short: nil, long: "sample-interval", valueLabel: "duration",
      help:
        "Time between task-state samples in the --task-log file, with a unit (5ms, 1s; \(ValueParsers.durationRangeText(sampleIntervalRange))).",
      defaultValue: "10ms",
      apply: { options, value, spelling throws(UsageError) in
        options.sampleInterval = try ValueParsers.durationValue(
          value, option: spelling, in: sampleIntervalRange, examples: "5ms")
        options.sampleIntervalGiven = true
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
        guard let shell = CompletionShell(rawValue: value.text) else {
          throw .invalidValue(value.shown, option: spelling, reason: "expected bash, zsh or fish")
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

  /// `-j`/`-p`'s value: a whole number in ``jobsRange``.
  ///
  /// - Throws: ``UsageError/invalidValue(_:option:reason:)`` for anything else.
  private static func parseJobs(_ value: OptionValue, spelling: String) throws(UsageError) -> Int {
    try ValueParsers.wholeNumberValue(value, option: spelling, in: jobsRange)
  }

  /// What `--max-delete` accepts: any count of entries from none up (rsync's `-1`, kept for
  /// its clients older than 3.0.0, is not needed here).
  static let maxDeletionsRange = 0...Int(Int32.max)

  /// What `--jobs` accepts: 1 to 4096 workers, more than any machine squeeze runs on has
  /// cores. Memory grows with the width (a chunk's buffers per worker on a big file).
  static let jobsRange = 1...4096

  /// What `--older-than` accepts, in seconds: 1 ns to 1,000,000 days (about 2,700 years).
  /// The cutoff is the current time less this, in whole seconds and nanoseconds: the bound
  /// keeps that subtraction, and the `Double` it starts from, far inside what an `Int64` of
  /// seconds holds, and no file of any use is older.
  static let olderThanRange: ClosedRange<Double> = 1e-9...(1_000_000 * 86400)

  /// What `--sample-interval` accepts, in seconds: 100 µs (finer samples cost more than
  /// they show) to 60 s (coarser ones show nothing of a run).
  static let sampleIntervalRange: ClosedRange<Double> = 0.0001...60

  /// The option with long name `name`.
  static func long(_ name: String) -> OptionDefinition? {
    options.first { $0.long == name }
  }

  /// The option with short name `name`.
  static func short(_ name: Character) -> OptionDefinition? {
    options.first { $0.short == name }
  }
}
