import SqueezeSystem

/// A run stopped by a full file system: the first output that could not be written because
/// its file system had no space left (`ENOSPC`) or its user's quota was used up (`EDQUOT`).
///
/// On a full disk every further file fails the same way: going on through the tree prints a
/// line per file (8,379 on a 2 MiB tmpfs) and hides the one fact that matters, so the first
/// such failure stops the run as a signal does (``ParallelCompressor/requestStop()``): no
/// new file starts, the files in flight end and their temporaries are removed, `--rm`
/// removes no original whose output is not whole. The run then says it once (``message(notDone:)``),
/// prints its summary as an interrupted run does, and exits with
/// ``ExitStatus/outOfSpace``. gzip and pigz also stop at their first failed write; rsync
/// stops with its status 11.
struct FullDisk: Sendable {
  /// The first file whose output failed, as the user would write it.
  var file: RawPath
  /// Its output (or temporary, or folder) that could not be written, as displayed.
  var output: RawPath
  /// `ENOSPC` or `EDQUOT`.
  var error: SystemError
  /// The failure as the file's own message says it.
  var failure: FileFailure
  /// Files that failed because their file system was full, this one included (files in
  /// flight when the first failed can fail the same way before they see the stop).
  var failedFiles = 1

  /// The first out-of-space failure of `failure` on file `file`, or nil when `failure` is
  /// not one (``FileFailure/outOfSpaceOutput``).
  init?(file: RawPath, failure: FileFailure) {
    guard let (output, error) = failure.outOfSpaceOutput else { return nil }
    self.file = file
    self.output = output
    self.error = error
    self.failure = failure
  }

  /// Files not done when the run stopped: selected files neither done, up to date, linked,
  /// nor failed for a reason of their own.
  ///
  /// - Parameters:
  ///   - selected: the files the run set out to do.
  ///   - results: what became of them.
  static func notDone(selected: Int, results: RunResults) -> Int {
    let failedOnTheirOwn = results.failedFiles.count - (results.fullDisk?.failedFiles ?? 0)
    return max(
      0, selected - results.done - results.upToDate - results.linked - max(0, failedOnTheirOwn))
  }

  /// The one line that reports the stop (without the `squeeze: ` prefix):
  /// `/mnt/x: no space left on device: the run stopped; 198 files not done, their sources
  /// kept (first: 'a/b': cannot write 'a/b.gz': No space left on device (errno 28))`.
  ///
  /// - Parameter notDone: the files not done (``notDone(selected:results:)``).
  func message(notDone: Int) -> String {
    let fileSystem = Self.fileSystem(of: output)
    let what = error == .quotaExceeded ? "disk quota exceeded" : "no space left on device"
    return
      "\(fileSystem): \(what): the run stopped; \(ByteFormat.count(notDone, "file")) not done, \(notDone == 1 ? "its source" : "their sources") kept (first: '\(file.displayString)': \(failure))"
  }

  /// The mount point of the file system `output` is on (its nearest folder that exists),
  /// or that folder when the mount table cannot say.
  static func fileSystem(of output: RawPath) -> String {
    var folder = output.parent
    for _ in 0..<64 {
      if let status = try? FileStatus.of(
        folder, in: Descriptor.currentDirectory, followingSymlinks: true)
      {
        return MountTable.read().mountPoint(of: status.device) ?? folder.displayString
      }
      let up = folder.parent
      if up == folder { break }
      folder = up
    }
    return output.parent.displayString
  }
}

extension FileFailure {
  /// The output (or temporary, or folder) and the error when this failure is its file
  /// system having no room left (``SystemError/isOutOfSpace``: `ENOSPC`, `EDQUOT`) while
  /// creating, writing, finishing or publishing it; nil for any other failure.
  var outOfSpaceOutput: (RawPath, SystemError)? {
    switch self {
    case .cannotCreateOutput(let path, let error), .cannotWriteOutput(let path, let error),
      .cannotSetMetadata(let path, _, let error), .cannotPublish(let path, _, let error):
      error.isOutOfSpace ? (path, error) : nil
    default: nil
    }
  }
}
