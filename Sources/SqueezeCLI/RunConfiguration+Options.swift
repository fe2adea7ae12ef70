import SqueezeCore
import SqueezeSystem

extension RunConfiguration {
  /// The configuration the command line `options` asks for, resolved once: the width from
  /// `--jobs` or the CPUs this process may use, the selection's patterns and cut-off time,
  /// the files' settings and what discovery selects, for the command the options name (a
  /// run of files, a stream with `-c` or standard input, a list with `-l`).
  ///
  /// - Parameters:
  ///   - cpus: the CPUs this process may use (``CPUAllowance/current``; tests hand others).
  ///   - now: the time `--older-than` counts back from.
  init(options: Options, cpus: CPUAllowance = .current, now: Timestamp = .now) {
    let operation = options.mode.operation
    let jobs = options.jobs ?? cpus.count
    var plan = OutputPlan(
      destination: options.output.map { .mirror(base: -1, path: $0) } ?? .besideSources,
      naming: operation == .compress ? .addSuffix(options.suffix) : .removeSuffix(options.suffix))
    plan.besideSymlinks = options.followSymlinks ? .inFolders : .never
    var files = FileSettings(plan: plan)
    files.followsSymlinks = options.followSymlinks
    files.operation = operation
    files.level = options.level
    files.engine = options.engine
    files.force = options.force
    // Stored when compressing; used when restoring or listing only with -N.
    files.usesHeaderNameAndTime = options.headerNameAndTime ?? (options.mode == .compress)
    files.removesSources = options.removeSources
    files.deletes = options.deletes
    files.maxDeletions = options.maxDeletions
    files.wrapsCompressedNames = options.output != nil && operation == .compress

    var selection = DiscoveryOptions()
    selection.suffix = options.suffix
    selection.followSymlinks = options.followSymlinks
    selection.oneFileSystem = options.oneFileSystem
    selection.selection = Self.selection(from: options, now: now)
    if options.mode == .list {
      selection.wanted = .compressedOrNamed
      selection.findsStaleTemporaries = false
    } else if options.toStandardOutput || options.readsStandardInput {
      // As gzip -c: every file named is compressed, a .gz one too.
      selection.wanted = options.mode == .compress ? .anything : .compressedOrNamed
      selection.findsStaleTemporaries = false
    } else {
      selection.wanted =
        operation == .compress
        ? .uncompressed : (operation == .test ? .compressedOrNamed : .compressedByName)
      selection.recordsSkippedPaths = options.verbosity == .verbose || options.dryRun
      // A dry run and a check change nothing, not even a killed run's temporaries.
      selection.findsStaleTemporaries = !options.dryRun && !options.check
      selection.listingThreads = min(jobs, cpus.count)
      if options.output != nil {
        // A mirror: arguments map as rsync's, the tree's links and compressed names go in
        // too, and a restore leaves out the archive marker.
        selection.mirrorsTree = operation != .test
        selection.skipsArchiveMarker = operation == .decompress
        if operation == .compress { selection.wanted = .anything }
      }
    }

    self.init(
      mode: options.mode, paths: options.paths, output: options.output,
      toStandardOutput: options.toStandardOutput, cpus: cpus, jobs: jobs,
      isolation: options.isolation, chunkSize: options.chunkSize, rsyncable: options.rsyncable,
      verbosity: options.verbosity, progress: options.progress, json: options.json,
      dryRun: options.dryRun, taskLog: options.taskLog, sampleInterval: options.sampleInterval,
      files: files, selection: selection,
      linksHardLinks: options.shard == nil && !options.removeSources)
    linkDestinations = options.linkDestinations
    checksBackup = options.check
  }

  /// The `--include`, `--exclude`, `--older-than` and `--shard` selection, `--older-than`
  /// counted back from `now`.
  static func selection(from options: Options, now: Timestamp) -> Selection {
    var selection = Selection()
    selection.includes = options.includes.compactMap(Glob.init)
    selection.excludes = options.excludes.compactMap(Glob.init)
    if let olderThan = options.olderThan {
      selection.modifiedBefore = now.subtracting(seconds: olderThan)
    }
    selection.shard = options.shard
    return selection
  }
}
