/// Where each file's output goes (spec §4, "Output" and "Mirror").
///
/// Beside the sources, `dir/a.txt` becomes `dir/a.txt.gz`. With `-o OUT`, each argument is
/// mirrored relative to itself: `squeeze -o OUT a b` puts `a/x/y` at `OUT/x/y.gz` and
/// `b/z` at `OUT/z.gz`; a file argument `a/f` lands at `OUT/f.gz`. Two sources that map to
/// the same output are a per-file error for the later one.
struct OutputPlan: Sendable {
  /// Where outputs are written.
  enum Destination: Sendable, Equatable {
    /// In each source's own folder.
    case besideSources
    /// Below a folder (`-o`): the index of its open descriptor in ``BaseDirectories``, and the
    /// path as the user gave it (for messages).
    case mirror(base: Int, path: RawPath)
  }

  /// Where outputs go.
  let destination: Destination
  /// The output suffix (`-S`, default `.gz`).
  let suffix: RawPath

  /// The final output of `file`: the folder descriptor it is relative to, the folder below
  /// it, and the name (source name + suffix).
  func target(of file: FileList.File, in list: FileList, bases: BaseDirectories)
    -> RelativeLocation
  {
    let folder = list.relativePath(ofDirectory: file.directory)
    let name = list.name(of: file).addingSuffix(suffix)
    switch destination {
    case .besideSources:
      return RelativeLocation(
        base: bases.descriptor(list.root(of: file).base), directory: folder, name: name)
    case .mirror(let base, _):
      return RelativeLocation(base: bases.descriptor(base), directory: folder, name: name)
    }
  }

  /// The output path as the user would write it, for messages.
  func displayPath(of file: FileList.File, in list: FileList) -> RawPath {
    switch destination {
    case .besideSources:
      return list.displayPath(of: file).addingSuffix(suffix)
    case .mirror(_, let path):
      return path.trimmingTrailingSlashes.appending(list.relativePath(of: file)).addingSuffix(
        suffix)
    }
  }

  /// Finds files whose output path is already taken by an earlier file.
  ///
  /// - Returns: for each such file (by index), the display path of the earlier source. Beside
  ///   the sources two entries can only collide when the same file was named twice; those
  ///   are reported in `duplicates` instead, to be dropped silently.
  func collisions(in list: FileList) -> (collisions: [Int: RawPath], duplicates: Set<Int>) {
    // One root cannot collide with itself: names within a folder are unique.
    guard list.roots.count > 1 else { return ([:], []) }
    var firstByKey: [OutputKey: Int] = [:]
    var collisions: [Int: RawPath] = [:]
    var duplicates: Set<Int> = []
    for (index, file) in list.files.enumerated() {
      let base: Int
      switch destination {
      case .besideSources: base = list.root(of: file).base
      case .mirror(let mirrorBase, _): base = mirrorBase
      }
      let key = OutputKey(base: base, path: list.relativePath(of: file))
      if let first = firstByKey[key] {
        let earlier = list.files[first]
        if earlier.device == file.device && earlier.inode == file.inode
          && destination == .besideSources
        {
          duplicates.insert(index)
        } else {
          collisions[index] = list.displayPath(of: earlier)
        }
      } else {
        firstByKey[key] = index
      }
    }
    return (collisions, duplicates)
  }

  private struct OutputKey: Hashable {
    var base: Int
    var path: RawPath
  }
}
