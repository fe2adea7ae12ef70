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
  /// `--isolation`: which stage of the WWDC22 session runs the compression.
  var isolation: Isolation = .nonisolated
  /// `--task-log`: where to write the task-state log, or nil.
  var taskLog: RawPath? = nil
  /// `--sample-interval`: seconds between task-state samples (default 10 ms).
  var sampleInterval: Double = 0.010
  /// `--block-size`: bytes per block of a big file (default 128 KiB).
  var blockSize: Int = BlockLayout.defaultBlockSize

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
  /// `squeeze timeline`: draw a task-state log.
  case timeline(TimelineOptions)
  /// Print the help of `squeeze timeline`.
  case timelineHelp
}

/// The options of `squeeze timeline <log> [-o <file>]`.
struct TimelineOptions: Sendable, Equatable {
  /// The task-state log to draw.
  var log: RawPath
  /// The picture to write (`.svg`, or `.html` for the SVG inside a page); nil for the log's
  /// name with `.svg`.
  var output: RawPath?

  /// Where the picture goes: `output`, or the log's path with its extension replaced by
  /// `.svg`.
  var resolvedOutput: RawPath {
    if let output { return output }
    var bytes = log.bytes
    let name = log.lastComponent.bytes
    if let dot = name.lastIndex(of: UInt8(ascii: ".")), dot > 0 {
      bytes.removeLast(name.count - dot)
    }
    return RawPath(bytes: bytes + Array(".svg".utf8))
  }
}
