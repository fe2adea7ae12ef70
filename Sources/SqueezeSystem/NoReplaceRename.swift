import CSystem
import Glibc

/// Naming a file under a name that must not exist yet, on file systems that refuse
/// `renameat2(RENAME_NOREPLACE)`.
///
/// FUSE file systems (bindfs, sshfs, most user-space mounts) and many network file systems
/// refuse the flag with `EINVAL` (`ENOSYS` from kernels or servers that lack the call).
/// There the entry is given its new name as coreutils and rsync do: `linkat(2)` of the old
/// name under the new one, which fails with `EEXIST` exactly where `RENAME_NOREPLACE` would
/// (so nothing is ever replaced, even by a file created a moment before), then `unlinkat(2)`
/// of the old name. The file is whole under either name throughout; a crash between the two
/// calls leaves the old (temporary) name as a second name of the same whole file.
///
/// A file system that refuses hard links too (`EPERM`, `EOPNOTSUPP`, `ENOSYS`: some FUSE and
/// SMB mounts) offers no way to name a file without risking replacing one created meanwhile
/// (a check for the name followed by a plain `rename` races with any other writer), so the
/// entry keeps its old name and the call fails with `EOPNOTSUPP`, which `renameat2` and
/// `linkat` never return otherwise for a file.
///
/// The refusal is remembered per file system (`st_dev`) for the rest of the process, so only
/// the first rename there pays for the failed `renameat2`; later ones cost one `fstat(2)` of
/// their folder to see which file system they are on.
package enum NoReplaceRename {
  /// What to do after `renameat2(RENAME_NOREPLACE)` failed.
  package enum AfterRename: Equatable, Sendable {
    /// The file system refuses the flag: link and unlink instead, and remember it.
    case linkInstead
    /// A real failure (`EEXIST`, `ENOENT`, `EACCES`, ...): report it.
    case fail
  }

  /// What to do after the fallback's `linkat(2)` failed.
  package enum AfterLink: Equatable, Sendable {
    /// The file system refuses hard links: no safe way to name the file; fail with
    /// `EOPNOTSUPP`.
    case refuseSafely
    /// A real failure (`EEXIST` where the name is taken, `ENOSPC`, ...): report it.
    case fail
  }

  /// Decides after `renameat2(RENAME_NOREPLACE)` failed with `code`: `EINVAL` (the flag is
  /// not supported by the file system) and `ENOSYS` (no such call) mean use a link.
  package static func afterRename(failedWith code: Int32) -> AfterRename {
    code == EINVAL || code == ENOSYS ? .linkInstead : .fail
  }

  /// Decides after the fallback's `linkat(2)` failed with `code`: `EPERM` (file systems
  /// without hard links, as linkat(2) documents), `EOPNOTSUPP` and `ENOSYS` mean the file
  /// system cannot link.
  package static func afterLink(failedWith code: Int32) -> AfterLink {
    code == EPERM || code == EOPNOTSUPP || code == ENOSYS ? .refuseSafely : .fail
  }

  /// The error thrown when the file system refuses both `RENAME_NOREPLACE` and hard links:
  /// `EOPNOTSUPP`.
  package static let refused = SystemError(code: EOPNOTSUPP)

  /// The file systems (`st_dev`) seen to refuse `RENAME_NOREPLACE` in this process.
  private static let refusingDevices = Lock<Set<UInt64>>([])
  /// Set once any file system has refused the flag: until then no rename asks which file
  /// system it is on.
  private static let anyRefused = AtomicFlag()

  /// Whether the file system of the open folder `folder` is known to refuse
  /// `RENAME_NOREPLACE` (one `fstat(2)`, only once some file system has refused it).
  static func isKnownToRefuse(folder: Int32) -> Bool {
    guard anyRefused.isSet, let status = try? Descriptor.status(folder) else { return false }
    return refusingDevices.withLock { $0.contains(status.device) }
  }

  /// Remembers that the file system of the open folder `folder` refuses `RENAME_NOREPLACE`.
  static func rememberRefusal(folder: Int32) {
    guard let status = try? Descriptor.status(folder) else { return }
    refusingDevices.withLock { _ = $0.insert(status.device) }
    anyRefused.set()
  }

  /// Whether any file system has refused `RENAME_NOREPLACE` in this process (for tests).
  package static var hasSeenRefusal: Bool { anyRefused.isSet }

  /// Names `fromName` in `fromFolder` as `toName` in `toFolder`, failing with `EEXIST` when
  /// that name exists: `renameat2(RENAME_NOREPLACE)`, or where the file system refuses the
  /// flag, `linkat(2)` then `unlinkat(2)` of the old name.
  ///
  /// - Throws: ``SystemError``: `EEXIST` when `toName` exists (nothing replaced, the entry
  ///   keeps its old name); ``refused`` (`EOPNOTSUPP`) when the file system refuses both the
  ///   flag and hard links; what `renameat2(2)`, `linkat(2)` or `unlinkat(2)` report
  ///   otherwise. When `unlinkat` fails, the entry has both names.
  package static func rename(
    _ fromName: UnsafePointer<CChar>, in fromFolder: Int32, to toName: UnsafePointer<CChar>,
    in toFolder: Int32
  ) throws(SystemError) {
    if !isKnownToRefuse(folder: toFolder) {
      do throws(SystemError) {
        _ = try retryingOnInterrupt {
          squeeze_renameat2(fromFolder, fromName, toFolder, toName, SQUEEZE_RENAME_NOREPLACE)
        }
        return
      } catch {
        guard afterRename(failedWith: error.code) == .linkInstead else { throw error }
        rememberRefusal(folder: toFolder)
      }
    }
    do throws(SystemError) {
      _ = try retryingOnInterrupt { linkat(fromFolder, fromName, toFolder, toName, 0) }
    } catch {
      guard afterLink(failedWith: error.code) == .refuseSafely else { throw error }
      throw refused
    }
    _ = try retryingOnInterrupt { unlinkat(fromFolder, fromName, 0) }
  }
}
