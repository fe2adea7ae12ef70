import SqueezeSystem

/// What a run did with each file, owned by `ParallelCompressor` and handed out at the end.
struct RunResults: Sendable {
  /// Files written (compressed, decompressed) or checked (`-t`).
  var done = 0
  /// Files whose output was already current (re-runs).
  var upToDate = 0
  /// Files that failed, in the order they failed, with the cause.
  var failures: [(path: RawPath, failure: FileFailure)] = []
  /// Source bytes of the files done.
  var bytesIn: Int64 = 0
  /// Output bytes of the files done (uncompressed bytes for `-t`).
  var bytesOut: Int64 = 0
  /// Files whose output is larger than their (non-empty) source: incompressible or tiny
  /// files, compressing, and the non-empty files a mirror stored (``stored``). Counted in
  /// the summary (the stored ones apart) and named under `-v`.
  var grown = 0
  /// Mirrors: files already compressed, copied into stored members rather than deflated.
  var stored = StoredFiles()
  /// Source bytes of the up-to-date files.
  var bytesUpToDate: Int64 = 0
  /// `--link-dest`: files whose output is a hard link of an earlier snapshot's.
  var linked = 0
  /// `--link-dest`: source bytes of the linked files.
  var bytesLinked: Int64 = 0
  /// `--link-dest`: files planned as links whose link could not be made (`EMLINK`,
  /// `EXDEV`), compressed instead (and counted in ``done`` or ``failures`` too).
  var linkFallbacks = 0
  /// Sources removed (`--rm`).
  var removed = 0
  /// Sources kept because they have other hard links (`--rm` without `-f`).
  var keptHardLinked = 0
  /// Sources kept because they changed after they were read (`--rm`).
  var keptChanged = 0
  /// True when a signal, or a full file system (``fullDisk``), stopped the run early.
  var interrupted = false
  /// The full file system that stopped the run (`ENOSPC`, `EDQUOT`), or nil.
  var fullDisk: FullDisk? = nil
  /// The files that failed, by index (a hard-link group whose output failed is not linked).
  var failedFiles: Set<Int> = []
  /// Outputs waiting under their temporary name for a folder in the way to give way, by
  /// file index.
  var held: [(file: Int, replacement: HeldReplacement)] = []
  /// Mirrors: further names of hard-link groups made hard links of the group's output.
  var hardLinked = 0
  /// Mirrors: symbolic links written (created or replaced).
  var linksWritten = 0
  /// Mirrors: symbolic links already right.
  var linksUpToDate = 0
  /// Mirrors: folders below the top made by this run (``FolderState/made``).
  var foldersMade = 0
  /// Mirrors: folders below the top that were there with another owner, other permission
  /// bits or another time, given their source's again (``FolderState/updated``).
  var foldersUpdated = 0
  /// Mirrors: folders below the top that were there with their source's metadata
  /// (``FolderState/upToDate``).
  var foldersUpToDate = 0
  /// `--delete`: entries removed from the mirror (outputs, links, folders).
  var deleted = 0
  /// `--delete`: entries left alone because squeeze did not write them.
  var keptForeign = 0
  /// `--delete`: deletions were skipped because the walk met errors.
  var deletionsSkipped = false
  /// `--max-delete`: entries whose source is gone that were kept because the limit was
  /// reached (a failure of the run when not zero, as rsync exits non-zero).
  var deletionsOverLimit = 0

  /// Mirror entries that are not a file's and failed: folders whose metadata could not be
  /// set, entries `--delete` could not examine or remove.
  var entryFailures: [DiscoveryFailure] = []

  /// Files (and mirror entries) that failed.
  var failed: Int {
    failures.count + entryFailures.count + (deletionsSkipped ? 1 : 0)
      + (deletionsOverLimit > 0 ? 1 : 0)
  }

  /// Files not done when the run stopped (a signal, a full disk): of the `selected` files
  /// the run set out to do, those neither done, up to date, linked, nor failed for a reason
  /// of their own; a full disk's failures and the mirror entries it left unmade
  /// (``FullDisk/entriesNotDone``) count as not done.
  func notDone(selected: Int) -> Int {
    let failedOnTheirOwn = failedFiles.count - (fullDisk?.failedFiles ?? 0)
    let finished = done + upToDate + linked + hardLinked
    return max(0, selected - finished - max(0, failedOnTheirOwn)) + (fullDisk?.entriesNotDone ?? 0)
  }

  /// The run stopped before the outputs in ``held`` could take their folders' places: their
  /// temporaries are removed, the folders left, and those files are not done after all.
  mutating func abandonHeld() {
    for entry in held {
      entry.replacement.abandon()
      done -= 1
    }
    held = []
  }
}

/// The files a mirror copied into stored members because they were already compressed
/// (`x.gz` → `x.gz.gz`): each output is its source plus the gzip header and trailer and 5
/// bytes per stored block (RFC 1951 section 3.2.4), which is expected, not a loss.
struct StoredFiles: Sendable, Equatable {
  /// Files stored.
  var count = 0
  /// Of those, the non-empty ones (also counted in ``RunResults/grown``).
  var grown = 0
  /// The fewest and most bytes one stored file's output added to its source.
  var addedBytes: ClosedRange<Int64>? = nil

  /// Counts a file of `bytesIn` bytes stored as `bytesOut` bytes.
  mutating func add(bytesIn: Int64, bytesOut: Int64) {
    count += 1
    if bytesIn > 0 && bytesOut > bytesIn { grown += 1 }
    let added = max(0, bytesOut - bytesIn)
    addedBytes =
      addedBytes.map { min($0.lowerBound, added)...max($0.upperBound, added) }
      ?? added...added
  }

  /// `1,984 already compressed, stored (+23 B each)`, or with a range when the files added
  /// different amounts (`+23 B to 1.05 kB each`); nil when nothing was stored.
  var phrase: String? {
    guard count > 0, let addedBytes else { return nil }
    let added =
      addedBytes.lowerBound == addedBytes.upperBound
      ? ByteFormat.format(addedBytes.lowerBound)
      : "\(ByteFormat.format(addedBytes.lowerBound)) to \(ByteFormat.format(addedBytes.upperBound))"
    return "\(ByteFormat.count(count)) already compressed, stored (+\(added) each)"
  }
}

/// The outcome of one file, reported to `ParallelCompressor`.
enum FileOutcome: Sendable {
  /// Written and published; what became of the source with `--rm`.
  case done(
    bytesIn: Int64, bytesOut: Int64, output: MessagePath, removal: SourceRemoval.Result?,
    held: HeldReplacement?)
  /// The existing output is current.
  case upToDate(bytes: Int64)
  /// The plan found the output current before the run: not part of the progress totals.
  case alreadyCurrent
  /// The output is a hard link of an earlier snapshot's (`--link-dest`).
  case linked(LinkSource)
  /// The planned link could not be made (the error, when there was one): the file is
  /// compressed instead, and that is its outcome; this one only counts the fallback.
  case linkFellBack(SystemError?)
  /// Checked, nothing written (`-t`).
  case verified(bytesIn: Int64, bytesOut: Int64)
  /// Failed.
  case failed(FileFailure)

  /// True when the file's task ends `failed`: its work failed, or its source could not be
  /// removed (`--rm`), or the run stopped first.
  var isFailure: Bool {
    switch self {
    case .failed: true
    case .done(_, _, _, .failed?, _): true
    default: false
    }
  }
}
