import SqueezeEngines
import SqueezeGzip
import SqueezeSystem

/// What a run does to each file.
package enum Operation: String, Sendable {
  /// Compress into a gzip file (the default).
  case compress
  /// Restore the original from a gzip file (`-d`).
  case decompress
  /// Check every member of a gzip file, writing nothing (`-t`).
  case test
}

/// The choices that are the same for every file of a run.
package struct FileSettings: Sendable {
  /// What the run does.
  package var operation: Operation = .compress
  /// The compression level (`-1`…`-12`, `--level`), one the engine accepts.
  package var level: CompressionLevel = .default
  /// Which libraries compress and restore (`--engine`).
  package var engine: Engine = .default
  /// Where outputs go and how they are named (`-o`, `-S`).
  var plan: OutputPlan
  /// Replace outputs squeeze would otherwise leave alone, and remove hard-linked originals
  /// with `--rm` (`-f`).
  package var force = false
  /// Compressing: store the source's name and modification time in the header (the
  /// default; `-n` turns it off). Decompressing: take the output's name and modification
  /// time from the header (`-N`; off by default, as in gzip).
  package var usesHeaderNameAndTime = true
  /// Give outputs the source's owner and group (only possible as root, as gzip does).
  var copiesOwnership = ProcessControl.effectiveUserID == 0
  /// Remove each source once its output is durable and verified (`--rm`).
  package var removesSources = false
  /// Follow symbolic links to sources (`--follow-symlinks`), and through linked folders to
  /// outputs written beside them.
  package var followsSymlinks = false

  /// In a mirror (`-o`), wrap sources that already have a compressed name as stored
  /// deflate blocks (`x.gz` → `x.gz.gz`), so a restore gives them back as they were.
  package var wrapsCompressedNames = false
  /// `--delete`: prune the mirror of entries whose source is gone.
  package var deletes = false
  /// `--max-delete=N`: `--delete` removes at most this many entries (outputs, links and
  /// folders) and keeps the rest, as rsync's option does; nil for no limit.
  package var maxDeletions: Int? = nil
  /// The `-o` folder is an unfinished snapshot (``SnapshotMarker``) this run resumes: it was
  /// empty when its marker was written, so every link, folder and gzip output in it is
  /// squeeze's work, recorded in the mirror's manifest or not, and the run prunes it as
  /// `--delete` does.
  var resumesSnapshot = false
  /// `--link-dest`: the earlier snapshots, open, in the order given (empty without it, and
  /// until the run has opened them).
  var linkDestinations: [LinkDestination] = []

  /// Which links opening a source may follow.
  var sourceSymlinks: SymlinkPolicy { followsSymlinks ? .always : .never }

  /// True when outputs go to a mirror (`-o`).
  var inMirror: Bool {
    if case .mirror = plan.destination { return true }
    return false
  }

  /// True when file `name` is copied into its member as stored blocks rather than deflated.
  ///
  /// `name` is made only when names are wrapped (a mirror): beside the sources the answer is
  /// false without it, and making a listed file's name costs an allocation.
  func stores(_ name: @autoclosure () -> RawPath) -> Bool {
    wrapsCompressedNames && GzipNaming.hasCompressedSuffix(name(), suffix: plan.naming.suffix)
  }

  /// The file system of `file`'s output when the listing already says it, or nil: beside
  /// the source with links not followed, the output is in the source's own folder, whose
  /// device discovery recorded (saves an `fstat` of each temporary).
  func knownOutputDevice(of file: FileList.File, in list: FileList) -> UInt64? {
    plan.destination == .besideSources && !followsSymlinks
      ? list.folderIdentity(of: file).device : nil
  }

  /// Settings with outputs placed and named by `plan`, and every other choice at its default.
  package init(plan: OutputPlan) {
    self.plan = plan
  }
}

extension FileSettings {
  /// Why a file fails when something squeeze may not replace without `--force` sits where
  /// its output goes (``ExistingOutput/foreign``): restoring, an existing file; compressing,
  /// a file that is not squeeze's output of this source, and with `-n` one that is not an
  /// up-to-date output of it (no header names its file, so an out-of-date output of this
  /// file cannot be told from another's).
  func foreignOutputFailure(_ path: RawPath) -> FileFailure {
    switch operation {
    case .decompress, .test: .outputAlreadyExists(path)
    case .compress: usesHeaderNameAndTime ? .outputExists(path) : .outputExistsNameless(path)
    }
  }
}
