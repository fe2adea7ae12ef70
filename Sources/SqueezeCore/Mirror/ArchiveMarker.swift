import SqueezeSystem

/// The file `--rm -o M` leaves at M's top: M has had sources moved into it, so it is an
/// archive (the only copy of files whose originals are gone), not a mirror to prune.
/// `--delete` refuses to run on a marked folder (a daily `--rm` and a weekly `--delete` would
/// otherwise wipe the archive); restores ignore the file.
enum ArchiveMarker {
  /// The marker's name at the output folder's top. It is not a squeeze temporary
  /// (`.squeeze-*.tmp`) and has no compressed suffix, so no run takes it for either.
  static let name: RawPath = ".squeeze-archive"

  /// What the marker says, for whoever finds it.
  static let text = """
    This folder is a squeeze archive: 'squeeze --rm -o' moved files into it (their originals
    were removed once their .gz here was verified). 'squeeze --delete' refuses to prune it,
    since that would delete the only copy of those files. Restores ignore this file. Remove
    it only if no file here is the only copy of its original.

    """

  /// True when the folder open as `folder` holds the marker (any kind of entry by that name).
  ///
  /// - Throws: ``SystemError`` from `fstatat(2)` when the entry cannot be examined for a
  ///   reason other than not existing (`ENOENT`): then whether the folder is an archive is
  ///   not known.
  static func isPresent(in folder: Int32) throws(SystemError) -> Bool {
    do throws(SystemError) {
      _ = try FileStatus.of(name, in: folder)
      return true
    } catch  where error == .noSuchFile {
      return false
    }
  }

  /// Leaves the marker in the folder open as `folder`, durably: written to a temporary,
  /// synced, renamed into place, and the folder synced, before any source is removed. An
  /// existing marker is kept as it is.
  ///
  /// - Throws: ``SystemError`` from the first step that fails.
  static func leave(in folder: Int32, namer: TemporaryNamer) throws(SystemError) {
    // One that cannot be examined is written again: renaming it into place finds it there.
    if (try? isPresent(in: folder)) == true { return }
    try MarkerFile.write(text, as: name, in: folder, namer: namer)
  }
}
