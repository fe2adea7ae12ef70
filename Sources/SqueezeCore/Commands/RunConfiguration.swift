import SqueezeEngines
import SqueezeGzip
import SqueezeSystem

/// What a run does.
package enum RunMode: String, Sendable, Equatable {
  /// Compress files (the default).
  case compress
  /// Restore the originals (`-d`).
  case decompress
  /// Check gzip files, writing nothing (`-t`).
  case test
  /// Print a table of gzip files (`-l`).
  case list

  /// What the mode does to each file (`-l` reads like a test, but is its own command).
  package var operation: Operation {
    switch self {
    case .decompress: .decompress
    case .test: .test
    case .compress, .list: .compress
    }
  }
}

/// How much a run prints.
package enum Verbosity: Int, Sendable, Comparable {
  /// `-q`: errors only.
  case quiet
  /// Progress on a terminal, errors, the summary on a terminal.
  case normal
  /// `-v`: also a line per file and per skip, and the summary everywhere.
  case verbose

  /// True when `lhs` prints less than `rhs`.
  package static func < (lhs: Verbosity, rhs: Verbosity) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// `--shard K/N`: a run handles shard `index` (1...count) of `count`.
package struct Shard: Sendable, Equatable {
  /// This run's shard, from 1.
  var index: Int
  /// How many shards share the files.
  var count: Int

  /// Shard `index` (1...`count`) of `count`.
  package init(index: Int, count: Int) {
    self.index = index
    self.count = count
  }

  /// True when a file whose path relative to its argument is `relativePath` belongs to
  /// this shard: FNV-1a 64 of the path's raw bytes, modulo `count`: the
  /// same split on every machine and every version, so shards can run anywhere.
  func contains(_ relativePath: RawPath) -> Bool {
    Int(FNV1a.hash64(relativePath.bytes) % UInt64(count)) == index - 1
  }
}

/// Everything a run needs to know before it starts, resolved once from the command line
/// and the machine, and read (never changed) by every phase after: discovery, planning,
/// execution and the report.
///
/// What only the run itself finds out (the mirror's open folder, the task log's identity)
/// is not here: it is applied where it is needed (`settings(mirrorBase:)`,
/// `discovery(excludingFolder:file:)`), without changing this value.
package struct RunConfiguration: Sendable {
  /// What the run does.
  package var mode: RunMode
  /// Files and folders named on the command line, as raw bytes; empty or `-` for standard
  /// input.
  var paths: [RawPath]
  /// The mirror folder (`-o`), or nil for outputs beside their sources.
  var output: RawPath?
  /// Write to standard output (`-c`).
  package var toStandardOutput: Bool
  /// The CPUs this process may use (affinity mask, cgroup CPU quota).
  var cpus: CPUAllowance
  /// How many files or chunks are worked on at once: `--jobs`, or ``cpus``' count.
  var jobs: Int
  /// Where the work runs (`--isolation`).
  var isolation: Isolation
  /// Bytes per chunk of a big file (`--block-size`, or the engine's default): with
  /// `--rsyncable`, the target of the content-defined rule.
  var chunkSize: Int
  /// Cut chunks where the content says (`--rsyncable`).
  var rsyncable: Bool
  /// How much is printed (`-q`, `-v`).
  var verbosity: Verbosity
  /// How progress is shown (`--progress`).
  var progress: ProgressStyle
  /// Print a JSON summary on stdout (`--json`).
  var json: Bool
  /// Print what would happen, change nothing (`--dry-run`).
  var dryRun: Bool
  /// Where to write the task-state log (`--task-log`), or nil.
  var taskLog: RawPath?
  /// Seconds between task-state samples (`--sample-interval`).
  var sampleInterval: Double
  /// What every file of the run shares: operation, level, engine, naming and destination,
  /// `-f`, `-n`/`-N`, `--rm`, `--delete`. In a mirror, the destination's open folder is not
  /// known yet (its base is -1): ``settings(mirrorBase:)`` gives it.
  var files: FileSettings
  /// What discovery selects, but for what the run finds out (``discovery(excludingFolder:file:)``).
  var selection: DiscoveryOptions
  /// Mirror hard-link groups as hard links (not with `--shard`, where each name goes to its
  /// own shard, nor with `--rm`).
  var linksHardLinks: Bool
  /// `--link-dest`: the earlier snapshots whose outputs of unchanged files a snapshot into
  /// the `-o` folder hard-links, as given (a relative one is relative to the `-o` folder).
  package var linkDestinations: [RawPath] = []
  /// `--check`: compare the mirror (`-o`) with the source instead of writing it.
  ///
  /// The run is planned as a re-run would be; then each source whose output the re-run
  /// rules call up to date is read and its CRC-32 and length compared with the output's
  /// trailer (RFC 1952 section 2.3). Nothing is changed in either tree, as in a dry run:
  /// the user's guide, "Checking a backup against its source".
  package var checksBackup = false

  /// A configuration of these values (the command line's resolution builds one).
  package init(
    mode: RunMode, paths: [RawPath], output: RawPath?, toStandardOutput: Bool, cpus: CPUAllowance,
    jobs: Int, isolation: Isolation, chunkSize: Int, rsyncable: Bool, verbosity: Verbosity,
    progress: ProgressStyle, json: Bool, dryRun: Bool, taskLog: RawPath?, sampleInterval: Double,
    files: FileSettings, selection: DiscoveryOptions, linksHardLinks: Bool
  ) {
    self.mode = mode
    self.paths = paths
    self.output = output
    self.toStandardOutput = toStandardOutput
    self.cpus = cpus
    self.jobs = jobs
    self.isolation = isolation
    self.chunkSize = chunkSize
    self.rsyncable = rsyncable
    self.verbosity = verbosity
    self.progress = progress
    self.json = json
    self.dryRun = dryRun
    self.taskLog = taskLog
    self.sampleInterval = sampleInterval
    self.files = files
    self.selection = selection
    self.linksHardLinks = linksHardLinks
  }

  /// What the run does to each file.
  var operation: Operation { mode.operation }
  /// Where big files are cut into chunks.
  var chunking: Chunking { Chunking(chunkSize: chunkSize, rsyncable: rsyncable) }
  /// True when the run reads standard input: no path, or the single path `-`.
  package var readsStandardInput: Bool { paths.isEmpty || paths == ["-"] }
  /// The compression level.
  var level: CompressionLevel { files.level }
  /// The engine that compresses and restores.
  var engine: Engine { files.engine }
  /// True when the user asked to see how the run went inside (`--task-log`, an `--isolation`
  /// other than the default `nonisolated`, or `-v`): only then does the summary line speak
  /// of the main actor's lag and hangs. An everyday backup's summary keeps to files and
  /// bytes; `--json` has the numbers either way.
  var asksForDiagnostics: Bool {
    taskLog != nil || isolation != .nonisolated || verbosity == .verbose
  }

  /// True when the run reports the main actor's lag and hangs somewhere: the summary line
  /// (``asksForDiagnostics``, which includes `--task-log`) or `--json`. Only then does the
  /// main-actor heartbeat run (``RunDiagnostics``).
  var readsMainActorLag: Bool { asksForDiagnostics || json }

  /// The settings of every file once the mirror's folder is open as `mirrorBase` (-1: a
  /// dry run into a mirror that does not exist yet); ``files`` as they are beside the
  /// sources.
  func settings(mirrorBase: Int?) -> FileSettings {
    guard case .mirror(_, let path) = files.plan.destination, let mirrorBase else { return files }
    var settings = files
    var plan = OutputPlan(
      destination: .mirror(base: mirrorBase, path: path), naming: files.plan.naming)
    plan.besideSymlinks = files.plan.besideSymlinks
    settings.plan = plan
    return settings
  }

  /// What discovery selects, leaving out the mirror's folder (when it lies inside an input)
  /// and the run's task log (likewise).
  func discovery(excludingFolder folder: FileIdentity?, file: FileIdentity?) -> DiscoveryOptions {
    var options = selection
    if let folder { options.excludedFolders.insert(folder) }
    if let file { options.excludedFiles.insert(file) }
    return options
  }
}
