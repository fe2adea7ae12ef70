/// Everything the command line chose for a run, after parsing (spec §3).
struct Options: Sendable, Equatable {
  /// What the run does.
  enum Mode: String, Sendable, Equatable {
    /// Compress files (the default).
    case compress
  }

  /// How much is printed.
  enum Verbosity: Int, Sendable, Comparable {
    /// `-q`: errors only.
    case quiet
    /// Progress on a terminal, errors, the summary on a terminal.
    case normal
    /// `-v`: also a line per file and per skip, and the summary everywhere.
    case verbose

    static func < (lhs: Verbosity, rhs: Verbosity) -> Bool { lhs.rawValue < rhs.rawValue }
  }

  /// The mode.
  var mode: Mode = .compress
  /// Files and folders named on the command line, as raw bytes.
  var paths: [RawPath] = []
  /// `-o/--output`: the mirror folder, or nil for outputs beside their sources.
  var output: RawPath? = nil
  /// `-j/--jobs`, or nil for the active processor count.
  var jobs: Int? = nil
  /// `-1`…`-9`, `--level`: the zlib level (default 6).
  var level: CompressionLevel = .default
  /// `-q` / `-v`.
  var verbosity: Verbosity = .normal
  /// `-f/--force`: replace outputs squeeze would otherwise leave alone.
  var force = false

  init() {}
}

/// What the command line asks for.
enum ParsedCommand: Sendable, Equatable {
  /// Run with these options.
  case run(Options)
  /// Print help (`-h`, `--help`).
  case help
  /// Print the version (`--version`).
  case version
}
