import SqueezeSystem

/// A small file squeeze leaves in a folder to say something about it (the archive marker of
/// an output folder, the marker of an unfinished snapshot), written so that the name only
/// ever holds the whole text.
enum MarkerFile {
  /// Writes `text` as `name` in the folder open as `folder`, durably: to a temporary made
  /// through the folder's descriptor, synced, renamed into place without replacing (a marker
  /// another run left first is kept and the temporary removed), then the folder synced. On
  /// failure the temporary is removed.
  ///
  /// - Throws: ``SystemError`` from the first step that fails.
  static func write(
    _ text: String, as name: RawPath, in folder: Int32, namer: TemporaryNamer
  ) throws(SystemError) {
    let (temporary, raw) = try TemporaryEntry.file(
      in: FolderHandle(borrowing: folder), namer: namer, permissions: 0o644)
    let descriptor = FileDescriptor(owning: raw)
    do throws(SystemError) {
      try descriptor.writeAll(Array(text.utf8))
      try descriptor.sync()
      try descriptor.close()
      do throws(SystemError) {
        try temporary.rename(to: name, .noReplace)
      } catch  where error == .fileExists {
        // Another run left it first.
        try? temporary.remove()
      }
      try Descriptor.sync(folder)
    } catch {
      try? temporary.remove()
      throw error
    }
  }
}
