import SqueezeSystem

/// A new entry of a mirror (an output or a symbolic link) that a folder is in the way of:
/// made durable under a temporary name in the same folder, it takes the folder's place only
/// once the folder is empty (an entry whose type changed is replaced only after the new one
/// is durable, so a crash never leaves neither). An empty folder gives way at once, after the run's writes; a
/// non-empty one only with `--delete`, once pruning has emptied it. Every step goes through
/// the temporary's folder descriptor (``TemporaryEntry``): the folder in the way is the
/// entry ``final``'s name names in the folder the temporary was made in.
///
/// A class: every file's outcome carries an optional one, and an optional reference is
/// copied with one retain (none when nil), not field by field.
final class HeldReplacement: Sendable {
  /// The new entry, durable, under its temporary name.
  let temporary: TemporaryEntry
  /// Where it goes: a folder is there now (its path, for messages; the name is looked up in
  /// the temporary's folder).
  let final: RelativeLocation
  /// `final` as displayed.
  let display: RawPath
  /// The source to remove once the replacement is done (`--rm`), or nil.
  let removal: Removal?

  init(temporary: TemporaryEntry, final: RelativeLocation, display: RawPath, removal: Removal?) {
    self.temporary = temporary
    self.final = final
    self.display = display
    self.removal = removal
  }

  /// What completing came to.
  enum Outcome: Sendable, Equatable {
    /// The new entry is in place and the folder is gone.
    case replaced
    /// The folder still holds entries: kept, and the new entry removed.
    case folderKept
    /// A step failed: the new entry removed.
    case failed(SystemError)
  }

  /// Puts the new entry in place if the folder at ``final`` is empty or gone: swapped in
  /// with `RENAME_EXCHANGE` and the emptied folder removed, or renamed into a place now
  /// free (`RENAME_NOREPLACE`). Otherwise removes the new entry.
  func complete() -> Outcome {
    let place = temporary.sibling(named: final.name)
    do throws(SystemError) {
      let status: FileStatus
      do throws(SystemError) {
        status = try place.entryStatus()
      } catch  where error == .noSuchFile {
        try temporary.rename(to: final.name, .noReplace)
        return .replaced
      }
      guard status.kind == .directory, place.isEmptyFolder() else {
        try? temporary.remove()
        return .folderKept
      }
      try temporary.rename(to: final.name, .exchange)
      // The temporary name now holds the empty folder.
      do throws(SystemError) {
        try temporary.remove()
      } catch  where error == .directoryNotEmpty {
        // Something was written into it meanwhile: put it back rather than lose it.
        try? temporary.rename(to: final.name, .exchange)
        try? temporary.remove()
        return .folderKept
      }
      return .replaced
    } catch {
      try? temporary.remove()
      return .failed(error)
    }
  }

  /// Removes the new entry and leaves the folder in the way alone: the run stopped before
  /// it could take the folder's place.
  func abandon() {
    try? temporary.remove()
  }
}
