import SqueezeCore
import SqueezeEngines
import SqueezeGzip
import SqueezeSystem

/// Everything the command line chose for a run, after parsing.
struct Options: Sendable, Equatable {
  /// The mode (`-d`, `-t`, `-l`; compress otherwise).
  var mode: RunMode = .compress
  /// Files and folders named on the command line, as raw bytes; empty or `-` for standard
  /// input.
  var paths: [RawPath] = []
  /// `-o/--output`: the mirror folder, or nil for outputs beside their sources.
  var output: RawPath? = nil
  /// `-c/--stdout`: write to standard output.
  var toStandardOutput = false
  /// `-k/--keep`: accepted for gzip habits (keeping is the default).
  var keep = false
  /// `-j/--jobs` (`-p/--processes`), or nil for the CPUs this process may use
  /// (``CPUAllowance``, resolved once in ``RunConfiguration``).
  var jobs: Int? = nil
  /// `-1`…`-12`, `--level`, `--fast`, `--best`: the compression level (default 6), checked
  /// against ``engine`` once every option is read.
  var level: CompressionLevel = .default
  /// `--engine`: which libraries compress and restore (default `fast`).
  var engine: Engine = .default
  /// `-q` / `-v`.
  var verbosity: Verbosity = .normal
  /// `-f/--force`: replace outputs squeeze would otherwise leave alone.
  var force = false
  /// `-n` (false) / `-N` (true): store (compressing) or use (decompressing) the original name
  /// and time in the header; nil for the default of the mode (store; do not use).
  var headerNameAndTime: Bool? = nil
  /// `-S/--suffix`: the compressed suffix (default `.gz`; never empty).
  var suffix: RawPath = ".gz"
  /// `--dry-run`: print what would happen, change nothing.
  var dryRun = false
  /// `--check`: compare the mirror (`-o`) with its source, change nothing.
  var check = false
  /// `--one-file-system`: do not cross into other mounted file systems.
  var oneFileSystem = false
  /// `--rm`: remove each source once its output is durable and verified.
  var removeSources = false
  /// `--delete`: with `-o`, prune the mirror of entries whose source is gone.
  var deletes = false
  /// `--max-delete=N`: `--delete` removes at most N entries (nil: no limit).
  var maxDeletions: Int? = nil
  /// `--link-dest`: earlier snapshots, in the order given, whose unchanged outputs the new
  /// snapshot (`-o`) hard-links instead of compressing again.
  var linkDestinations: [RawPath] = []
  /// `--include` patterns (repeatable): when any is given, only files matching one are taken.
  var includes: [String] = []
  /// `--exclude` patterns (repeatable): matching files and folders are left out.
  var excludes: [String] = []
  /// `--older-than`: only files modified more than this many seconds ago.
  var olderThan: Double? = nil
  /// `--follow-symlinks`: follow symbolic links.
  var followSymlinks = false
  /// `--shard K/N`.
  var shard: Shard? = nil
  /// `--progress`.
  var progress: ProgressStyle = .auto
  /// `--json`: print a machine-readable summary on stdout.
  var json = false
  /// `--isolation`: which stage of the WWDC22 session runs the work.
  var isolation: Isolation = .nonisolated
  /// `--task-log`: where to write the task-state log, or nil.
  var taskLog: RawPath? = nil
  /// `--sample-interval`: seconds between task-state samples (default 10 ms).
  var sampleInterval: Double = 0.010
  /// `--sample-interval` was given: it needs `--task-log` (samples go nowhere else).
  var sampleIntervalGiven = false
  /// `--block-size` as given, in bytes, or nil.
  var blockSize: Int? = nil
  /// Bytes per chunk of a big file: `--block-size`, or the engine's default
  /// (``Engine/defaultChunkSize``); resolved by the parser once every option is read.
  var chunkSize: Int = Engine.default.defaultChunkSize
  /// `--rsyncable`: cut chunks where the content says, ``chunkSize`` being the target
  /// (``RsyncableChunking``).
  var rsyncable = false

  /// Where big files are cut into chunks.
  var chunking: Chunking { Chunking(chunkSize: chunkSize, rsyncable: rsyncable) }

  /// `--help`, `--version`, `--generate-manual` or `--generate-completion-script`: print it
  /// instead of running.
  var request: InformationRequest? = nil

  /// True when the run reads standard input: no path, or the single path `-`.
  var readsStandardInput: Bool { paths.isEmpty || paths == ["-"] }
}

/// Something printed instead of a run: help, the version, or a document made from the
/// option table.
enum InformationRequest: Sendable, Equatable {
  /// `-h`, `--help`.
  case help
  /// `--version`.
  case version
  /// `--generate-manual`: the man page.
  case manual
  /// `--generate-completion-script <shell>`.
  case completionScript(CompletionShell)
}

/// What the command line asks for.
enum ParsedCommand: Sendable, Equatable {
  /// Run with these options.
  case run(Options)
  /// Print help (`-h`, `--help`).
  case help
  /// Print the version (`--version`).
  case version
  /// Print the man page (`--generate-manual`).
  case manual
  /// Print a completion script (`--generate-completion-script <shell>`).
  case completionScript(CompletionShell)
  /// `squeeze timeline`: draw a task-state log.
  case timeline(TimelineOptions)
  /// Print the help of `squeeze timeline`.
  case timelineHelp
}

/// The options of `squeeze timeline <log> [-o <file>]`.
struct TimelineOptions: Sendable, Equatable {
  /// The task-state log to draw.
  var log: RawPath
  /// The file to write (`.svg`, `.html` for the interactive page, `.json` for a Chrome trace);
  /// nil for the log's name with `.svg`.
  var output: RawPath?
  /// Replace a file at the output that is not a drawing squeeze made, or a link there (`-f`).
  var force = false

  /// What `squeeze timeline` writes, chosen by the output's extension (in any letter case).
  enum Format: Sendable, Equatable {
    /// A self-contained SVG picture.
    case svg
    /// An interactive HTML page that draws from data embedded in it.
    case html
    /// The Chrome Trace Event Format, for Perfetto's UI and chrome://tracing.
    case chromeTrace
  }

  /// The format ``resolvedOutput`` asks for, or nil for an extension squeeze does not write
  /// (a usage error).
  var format: Format? {
    let name = String(decoding: resolvedOutput.lastComponent.bytes, as: UTF8.self).lowercased()
    if name.hasSuffix(".svg") { return .svg }
    if name.hasSuffix(".html") || name.hasSuffix(".htm") { return .html }
    if name.hasSuffix(".json") { return .chromeTrace }
    return nil
  }

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
