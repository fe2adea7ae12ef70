import SqueezeSystem

/// The read-only file systems a run has met, so each is reported once.
///
/// In place on a read-only mount (`squeeze ro/`), every file fails the same way
/// (`EROFS` creating its output, or removing its original with `--rm`); fifty identical
/// errors hide the one thing to know. The first failure on each file system is reported as
/// one message naming the mount point; the later ones still fail (status 1, counted in the
/// summary, listed in `--json`) without a line each, and the run goes on with the files of
/// other file systems.
struct ReadOnlyFileSystems {
  /// What to print for one failure.
  enum Report: Equatable {
    /// Not about a read-only file system: print the failure as usual.
    case notReadOnly
    /// The first failure on this read-only file system: print this message instead.
    case first(String)
    /// This file system has been reported already: print nothing.
    case alreadyReported
  }

  /// Devices (`st_dev`) already reported.
  private var reported: Set<UInt64> = []
  /// The mount table, read at the first read-only failure.
  private var mounts: MountTable? = nil

  /// How to report `failure` of the file at `path` on device `sourceDevice`.
  ///
  /// - Parameter sourceDevice: the source's device (`st_dev`): the output's too when it is
  ///   written beside it; an output elsewhere is looked up by its folder.
  mutating func report(_ failure: FileFailure, path: RawPath, sourceDevice: UInt64) -> Report {
    let device: UInt64
    let consequence: String
    switch failure {
    case .cannotCreateOutput(let output, let error) where error == .readOnlyFileSystem:
      device =
        (try? FileStatus.of(output.parent, in: Descriptor.currentDirectory, followingSymlinks: true))?
        .device
        ?? sourceDevice
      consequence = "no output can be written there; its files are not done"
    case .cannotRemove(let error) where error == .readOnlyFileSystem:
      device = sourceDevice
      consequence = "originals there cannot be removed; they are kept"
    default:
      return .notReadOnly
    }
    guard reported.insert(device).inserted else { return .alreadyReported }
    if mounts == nil { mounts = MountTable.read() }
    let mountPoint = mounts?.mountPoint(of: device) ?? path.parent.displayString
    return .first(
      "squeeze: \(mountPoint): read-only file system: \(consequence) "
        + "(first: \(path.displayString): \(failure))")
  }
}
