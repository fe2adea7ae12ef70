import SqueezeEngines
import SqueezeGzip
import SqueezeSystem

/// Why one file could not be compressed (or decompressed). The run goes on with the other
/// files (one bad file never stops a backup); the exit status becomes 1. An output's file
/// system with no room left stops the run instead (``FullDisk``, status 74).
///
/// Messages are lowercase without a final period, name other paths in single quotes and keep
/// the system's cause, and are printed as `squeeze: <path>: <message>`.
enum FileFailure: Error, Sendable, Equatable, CustomStringConvertible {
  /// `open(2)` of the source failed.
  case cannotOpen(SystemError)
  /// The source no longer exists (it vanished after it was listed).
  case vanished
  /// The source is now a symbolic link (`ELOOP` from an `O_NOFOLLOW` open); never followed.
  case becameSymbolicLink
  /// The source is not a regular file (any more).
  case notRegularFile(FileKind)
  /// A different file now has the source's name (its device and inode changed).
  case replaced
  /// `read(2)` of the source failed.
  case cannotRead(SystemError)
  /// The source changed size or was modified while it was read, so the output would not
  /// match any state of the file.
  case changedWhileReading(String)
  /// The output's name would exceed the file system's limit of 255 bytes (`NAME_MAX`).
  case outputNameTooLong(RawPath, bytes: Int)
  /// Something that is not squeeze's output of this file sits at the output path.
  case outputExists(RawPath)
  /// A run with `-n` (no name in the header) found a file at the output path that is not an
  /// up-to-date output of this file: with no name in a header, an out-of-date output of this
  /// file cannot be told from another file's.
  case outputExistsNameless(RawPath)
  /// Something else appeared at the output path while the output was being written.
  case outputAppeared(RawPath)
  /// A folder (or device, pipe, socket) sits at the output path: never replaced.
  case outputInTheWay(RawPath, FileKind)
  /// Two selected files map to the same output path (with `-o` and several arguments).
  case outputCollision(RawPath, otherSource: RawPath)
  /// `-d`: the output path is another file this run restores (`a.gz` whose header names
  /// `b.gz`, both listed): not written, so that file is never replaced before it is read.
  case outputIsAnotherInput(RawPath)
  /// In a mirror, the output path is where a folder or link of another source is mirrored
  /// (file `a` and a folder or link named `a.gz`).
  case nameClash(RawPath, otherSource: RawPath)
  /// In a mirror, a non-empty folder is where the output goes; kept (`--delete` replaces it
  /// once it mirrors nothing).
  case folderNotEmpty(RawPath)
  /// A hard-link group's output failed, so this further name was not linked to it.
  case groupOutputFailed(RawPath)
  /// The temporary output could not be created (or its folder).
  case cannotCreateOutput(RawPath, SystemError)
  /// Writing the temporary output failed (full disk, file-size limit, I/O error).
  case cannotWriteOutput(RawPath, SystemError)
  /// The output's owner, permission bits or times could not be set to the source's
  /// (`fchown(2)`, `fchmod(2)`, `futimens(2)`); it is not published.
  case cannotSetMetadata(RawPath, Metadata, SystemError)
  /// The finished output could not be made durable or renamed into place.
  case cannotPublish(RawPath, Publisher.Step, SystemError)
  /// The compression library failed (it could not allocate its state, or its output did not
  /// check out).
  case engine(EngineError)
  /// The input is not valid gzip data (`-d`, `-t`): the fault and where.
  case badGzip(GzipFormatError)
  /// `-d` on a name without a known compressed suffix.
  case unknownSuffix
  /// `-N`: the name stored in the gzip header (FNAME) is longer than a file name can be
  /// (255 bytes, `NAME_MAX`), so it cannot name the output.
  case storedNameTooLong(bytes: Int)
  /// `-d`: the output path is the `.gz` file being restored (its header names the file
  /// itself, with `-N`), or a hard link of it, or a symbolic link to it: never replaced,
  /// even with `-f`, so the source is never lost.
  case outputIsSource(RawPath)
  /// A file already exists where `-d` would write; not overwritten without `-f`.
  case outputAlreadyExists(RawPath)
  /// The output did not decompress back to the source (`--rm` checks before removing).
  case verificationFailed(RawPath, String)
  /// The source could not be removed after its output was published (`--rm`).
  case cannotRemove(SystemError)
  /// The run was interrupted (SIGINT, SIGTERM or SIGHUP) before this file was done.
  case interrupted

  var description: String {
    switch self {
    case .cannotOpen(let error): "cannot open: \(error)"
    case .vanished: "vanished after it was listed (no such file now)"
    case .becameSymbolicLink: "became a symbolic link after it was listed; not followed"
    case .notRegularFile(let kind): "is no longer a regular file (now \(kind))"
    case .replaced: "was replaced by a different file after it was listed"
    case .cannotRead(let error): "cannot read: \(error)"
    case .changedWhileReading(let detail): "changed while being read (\(detail)); not compressed"
    case .outputNameTooLong(let path, let bytes):
      "output name '\(path.displayString)' would be \(bytes) bytes, over the 255-byte limit of the file system"
    case .outputExists(let path):
      "'\(path.displayString)' already exists and is not squeeze's output of this file; not overwritten (use --force)"
    case .outputInTheWay(let path, let kind): "'\(path.displayString)' is \(kind); not replaced"
    case .outputExistsNameless(let path):
      "'\(path.displayString)' already exists and is not an up-to-date output of this file; with -n no header names its file, so an out-of-date output cannot be told from another file's; not overwritten (use --force)"
    case .outputAppeared(let path):
      "'\(path.displayString)' appeared while this output was being written and is not an up-to-date output of this file; not overwritten"
    case .cannotCreateOutput(let path, let error) where error == .symbolicLinkLoop:
      "a folder on the way to '\(path.displayString)' is a symbolic link; squeeze does not write through links"
    case .outputCollision(let path, let other):
      "output '\(path.displayString)' is also the output of '\(other.displayString)'; not written"
    case .outputIsAnotherInput(let path):
      "output '\(path.displayString)' is another file this run restores; not written (it would replace it)"
    case .nameClash(let path, let other):
      "output '\(path.displayString)' is also where '\(other.displayString)' is mirrored; not written"
    case .folderNotEmpty(let path):
      "'\(path.displayString)' is a folder that is not empty; kept (--delete replaces it once nothing in it is mirrored)"
    case .groupOutputFailed(let path):
      "not linked: the output of its hard-link group, '\(path.displayString)', was not written"
    case .cannotCreateOutput(let path, let error): "cannot create '\(path.displayString)': \(error)"
    case .cannotWriteOutput(let path, let error): "cannot write '\(path.displayString)': \(error)"
    case .cannotSetMetadata(let path, let what, let error):
      "cannot set the \(what.rawValue) of '\(path.displayString)': \(error)"
    case .cannotPublish(let path, let step, let error):
      "\(step.rawValue) '\(path.displayString)': \(error)"
    case .engine(let error): "\(error.library.rawValue) failed: \(error)"
    case .badGzip(let error): "\(error)"
    case .unknownSuffix: "unknown suffix; not decompressed"
    case .storedNameTooLong(let bytes):
      "the name stored in its gzip header is \(ByteFormat.count(bytes)) bytes, longer than a file name can be (\(GzipHeader.longestKeptName) bytes); not used (-N)"
    case .outputIsSource(let path):
      "its output '\(path.displayString)' is this file itself; not restored, even with --force (it would replace its own source)"
    case .outputAlreadyExists(let path):
      "'\(path.displayString)' already exists; not overwritten (use --force)"
    case .verificationFailed(let path, let detail):
      "'\(path.displayString)' did not verify, source kept: \(detail)"
    case .cannotRemove(let error): "compressed, but cannot remove the original: \(error)"
    case .interrupted: "interrupted before it was done"
    }
  }
}

extension FileFailure {
  /// The metadata an output takes from its source.
  enum Metadata: String, Sendable {
    /// Owner and group (`fchown(2)`).
    case owner = "owner"
    /// Permission bits (`fchmod(2)`).
    case permissions = "permissions"
    /// Access and modification times (`futimens(2)`).
    case times = "times"
  }
}
