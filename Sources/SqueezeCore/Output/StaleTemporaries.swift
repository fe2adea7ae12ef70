import SqueezeSystem

/// Removes the stale temporaries discovery found (``DiscoveryResult/staleTemporaries``):
/// the first step of a run's work, since discovery changes nothing. Each is judged again
/// when its folder is opened (``TemporaryCleaner/removeIfStale(_:in:namer:)``), so a name
/// another run has taken since is left alone.
enum StaleTemporaries {
  /// Removes `found` (folder records of `list` and names), each folder opened relative to
  /// its argument's open folder as discovery opened it (`symlinks`).
  ///
  /// - Returns: how many were removed.
  @discardableResult
  static func remove(
    _ found: [(directory: Int32, name: RawPath)], in list: FileList, bases: BaseDirectories,
    symlinks: SymlinkPolicy, namer: TemporaryNamer
  ) -> Int {
    var removed = 0
    var index = found.startIndex
    while index < found.endIndex {
      // A folder's temporaries are consecutive: it is opened once for all of them.
      let directory = found[index].directory
      var end = index
      while end < found.endIndex && found[end].directory == directory { end += 1 }
      let relative = list.relativePath(ofDirectory: directory)
      let base = bases.descriptor(list.roots[Int(list.directories[Int(directory)].root)].base)
      if let folder = try? FileDescriptor.open(
        relative.isEmpty ? "." : relative, in: base, flags: .folder,
        symlinks: symlinks)
      {
        for (_, name) in found[index..<end]
        where TemporaryCleaner.removeIfStale(name, in: folder.rawValue, namer: namer) {
          removed += 1
        }
      }
      index = end
    }
    return removed
  }
}
