import SqueezeSystem
import Synchronization

/// Removes the temporaries killed runs left behind: in every folder discovery
/// walks, and in every output folder the first time a run writes there (so the mirror of a
/// `-o` backup is cleaned too). A temporary is removed only when ``TemporaryNamer/isStale``
/// says its writer is gone, never one a live run is still writing.
final class TemporaryCleaner: Sendable {
  private let namer: TemporaryNamer
  /// Output folders already cleaned in this run, by identity.
  private let cleaned = Lock<Set<FileIdentity>>([])
  /// How many stale temporaries were removed.
  private let removedCount = Atomic<Int>(0)

  init(namer: TemporaryNamer) {
    self.namer = namer
  }

  /// Stale temporaries removed so far.
  var removed: Int { removedCount.load(ordering: .relaxed) }

  /// Cleans the folder of `location` unless this run already did.
  func cleanOnce(folderOf location: RelativeLocation) {
    guard
      let folder = try? FileDescriptor.open(
        location.directory.isEmpty ? "." : location.directory, in: location.base,
        flags: .folder, symlinks: location.symlinks.forFolders),
      let status = try? folder.status()
    else { return }
    let first = cleaned.withLock { $0.insert(FileIdentity(status)).inserted }
    guard first, let entries = try? DirectoryReader.entries(of: folder.rawValue) else { return }
    for entry in entries where TemporaryNamer.isTemporary(entry.name) {
      if TemporaryCleaner.removeIfStale(entry.name, in: folder.rawValue, namer: namer) {
        removedCount.add(1, ordering: .relaxed)
      }
    }
  }

  /// Removes the temporary `name` in `folder` when it is stale.
  ///
  /// - Returns: true when it was removed.
  static func removeIfStale(_ name: RawPath, in folder: Int32, namer: TemporaryNamer) -> Bool {
    guard isStale(name, in: folder, namer: namer) else { return false }
    return (try? RelativeLocation(base: folder, directory: "", name: name).removeEntry()) != nil
  }

  /// True when `name` in `folder` is a regular file whose writer is gone
  /// (``TemporaryNamer/isStale(_:modified:now:)``).
  static func isStale(_ name: RawPath, in folder: Int32, namer: TemporaryNamer) -> Bool {
    guard let status = try? FileStatus.of(name, in: folder), status.kind == .regular else {
      return false
    }
    return namer.isStale(name, modified: status.modificationTime)
  }
}
