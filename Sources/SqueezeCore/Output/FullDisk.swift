import SqueezeSystem

/// A run stopped by a full file system: the first output that could not be written because
/// its file system had no space left (`ENOSPC`) or its user's quota was used up (`EDQUOT`).
///
/// On a full disk every further file fails the same way: going on through the tree prints a
/// line per file (8,379 on a 2 MiB tmpfs) and hides the one fact that matters, so the first
/// such failure stops the run (``ParallelCompressor/stopStarting()``): no new file starts,
/// the files still being written stop at their next chunk and their temporaries are
/// removed, `--rm` removes no original whose output is not whole. Unlike a signal's stop,
/// the outputs already whole are published as usual (``Publisher``), so the files finished
/// before the disk filled are done, as `gzip -r` keeps them. The run then says it once
/// (``message(notDone:)``), prints its summary as an interrupted run does, and exits with
/// ``ExitStatus/outOfSpace``. gzip and pigz also stop at their first failed write; rsync
/// stops with its status 11. With `--rm` the run first lets the files in flight remove
/// their sources, as `gzip -r` frees room as it goes, and tries the file once more
/// (``ParallelCompressor``); it stops only when that file does not fit even then.
struct FullDisk: Sendable {
  /// The first file whose output failed, as the user would write it; nil when what could
  /// not be written is the run's own (the task log, a marker, `--json`, `-l`).
  var file: RawPath?
  /// Its output (or temporary, or folder, or the run's own file) that could not be
  /// written, as displayed.
  var output: RawPath
  /// `ENOSPC` or `EDQUOT`.
  var error: SystemError
  /// The failure as its own message says it: `cannot write 'a.gz': No space left on device
  /// (errno 28)`.
  var cause: String
  /// Files that failed because their file system was full, this one included (files in
  /// flight when the first failed can fail the same way before they see the stop).
  var failedFiles = 1
  /// Mirror entries that are not files (symbolic links) not made because the run stopped
  /// while it made them: counted with the files not done.
  var entriesNotDone = 0

  /// The first out-of-space failure of `failure` on file `file`, or nil when `failure` is
  /// not one (``FileFailure/outOfSpaceOutput``).
  init?(file: RawPath, failure: FileFailure) {
    guard let (output, error) = failure.outOfSpaceOutput else { return nil }
    self.file = file
    self.output = output
    self.error = error
    cause = failure.description
  }

  /// A write of the run's own that found no room (the task log, a marker, `--json` or
  /// `-l` to a file), or nil when `error` is not ``SystemError/isOutOfSpace``.
  ///
  /// - Parameters:
  ///   - path: the file that could not be written, as displayed; its file system is the
  ///     one named.
  ///   - error: why.
  ///   - cause: the failure in words, as its message would say it (`cannot write task log
  ///     '/l.jsonl': No space left on device (errno 28)`).
  init?(path: RawPath, error: SystemError, cause: String) {
    guard error.isOutOfSpace else { return nil }
    file = nil
    output = path
    self.error = error
    self.cause = cause
    failedFiles = 0
  }

  /// The one line that reports the stop (without the `squeeze: ` prefix):
  /// `/mnt/x: no space left on device: the run stopped; 198 files not done, their sources
  /// kept (first: 'a/b': cannot write 'a/b.gz': No space left on device (errno 28))`.
  /// When what found no room is the run's own file and every file was done (a task log
  /// written last), the line says only that: `/mnt/x: no space left on device: cannot
  /// write task log '/mnt/x/l.jsonl': No space left on device (errno 28)`.
  ///
  /// - Parameter notDone: the files not done (``RunResults/notDone(selected:)``).
  func message(notDone: Int) -> String {
    let what = error == .quotaExceeded ? "disk quota exceeded" : "no space left on device"
    guard let file else {
      if notDone == 0 { return "\(fileSystem): \(what): \(cause)" }
      return
        "\(fileSystem): \(what): the run stopped; \(Self.notDonePhrase(notDone)) (first: \(cause))"
    }
    return
      "\(fileSystem): \(what): the run stopped; \(Self.notDonePhrase(notDone)) (first: '\(file.displayString)': \(cause))"
  }

  /// `198 files not done, their sources kept`.
  private static func notDonePhrase(_ notDone: Int) -> String {
    "\(ByteFormat.count(notDone, "file")) not done, \(notDone == 1 ? "its source" : "their sources") kept"
  }

  /// The mount point of the file system that had no room, when known apart from
  /// ``output`` (standard output: its descriptor's file system).
  var mountPoint: String? = nil

  /// The mount point named in the line and in `--json`'s `diskFull.fileSystem`.
  var fileSystem: String { mountPoint ?? Self.fileSystem(of: output) }

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

/// What writing results (`--json`, `-l`) to standard output came to.
enum ResultsWrite: Equatable {
  /// Written whole.
  case written
  /// Not written; said on stderr.
  case failed
  /// Not written because standard output's file system is full or over quota
  /// (``FullDisk``): the run ends with ``ExitStatus/outOfSpace``.
  case outOfSpace

  /// False when the results were not written.
  var succeeded: Bool { self == .written }
}

extension TextOutput {
  /// Writes results (`--json`, `-l`) to this output. When that fails, says so in one line
  /// on stderr: `squeeze: cannot write the list to standard output: Broken pipe (errno
  /// 32)`, or for a full file system the full-disk line naming its mount point
  /// (`squeeze: /mnt: no space left on device: cannot write the list to standard output:
  /// No space left on device (errno 28)`). With `quietWhenFull` a full file system says
  /// nothing: the run has already said, in its one line, that a disk was full.
  ///
  /// - Parameters:
  ///   - text: the results.
  ///   - what: what they are, for the message (`the --json summary`).
  ///   - quietWhenFull: say nothing when the write fails for a full file system.
  func writeResults(_ text: String, what: String, quietWhenFull: Bool = false) -> ResultsWrite {
    do throws(SystemError) {
      try writeChecked(text)
      return .written
    } catch {
      let cause = "cannot write \(what) to standard output: \(error)"
      guard var full = FullDisk(path: "(standard output)", error: error, cause: cause) else {
        TextOutput.standardError.write("squeeze: \(cause)\n")
        return .failed
      }
      full.mountPoint = (try? Descriptor.status(descriptor)).flatMap {
        MountTable.read().mountPoint(of: $0.device)
      }
      if !quietWhenFull { TextOutput.standardError.write("squeeze: \(full.message(notDone: 0))\n") }
      return .outOfSpace
    }
  }
}
