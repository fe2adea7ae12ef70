import SqueezeSystem

/// Removing a source once its output is durable (`--rm`): the output is on disk under
/// its final name with its folder synced and has been verified by decompressing it; the
/// source is removed only if it is still the file that was read, and not while other hard
/// links share it (removing one name frees nothing and surprises), unless `-f`.
enum SourceRemoval {
  /// What became of a source.
  enum Result: Sendable, Equatable {
    /// Removed.
    case removed
    /// Kept: it has this many hard links (use `-f`).
    case keptHardLinked(UInt64)
    /// Kept: it changed (identity, size or modification time) after it was read.
    case keptChanged
    /// Already gone (another run removed it): nothing to do.
    case alreadyGone
    /// Removing it failed.
    case failed(SystemError)
  }

  /// Removes `removal.source` if it is unchanged.
  static func remove(_ removal: Removal, force: Bool) -> Result {
    let now: FileStatus
    do {
      now = try removal.source.status()
    } catch  where error == .noSuchFile {
      return .alreadyGone
    } catch {
      return .failed(error)
    }
    let before = removal.status
    guard now.isSameFile(as: before), now.size == before.size,
      now.modificationTime == before.modificationTime
    else { return .keptChanged }
    if now.linkCount > 1 && !force { return .keptHardLinked(now.linkCount) }
    do {
      try removal.source.remove()
      return .removed
    } catch  where error == .noSuchFile {
      return .alreadyGone
    } catch {
      return .failed(error)
    }
  }
}
