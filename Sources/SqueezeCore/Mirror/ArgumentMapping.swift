import SqueezeSystem

/// How a command-line argument maps into a mirror (`-o M`), as rsync and cp map them.
///
/// - `a/x` (a folder, no trailing slash) lands in `M/x/`: the folder itself is mirrored;
/// - `a/x/` (a trailing slash; also `a/x/.`, `.`, `..` and `/`) puts x's contents directly in
///   `M`, as `rsync -a a/x/ M` does;
/// - a file argument `a/f` lands at `M/f.gz`; a symbolic-link argument without a slash is
///   stored as a link `M/l` (with a slash, the kernel resolves it and the folder it leads to
///   is mirrored as its contents).
///
/// Restores (`-d -o R`) map the same way. The `--shard` hash stays over the path below the
/// argument, so the mapping never moves a file from one shard to another.
enum ArgumentMapping {
  /// The folder below the mirror that `argument`'s entries land in: "" for the mirror's top.
  ///
  /// - Parameters:
  ///   - argument: the argument as typed.
  ///   - isFolder: true when it is walked as a folder (file and link arguments land at the
  ///     top under their own names).
  static func destination(of argument: RawPath, isFolder: Bool) -> RawPath {
    guard isFolder, !namesContents(argument) else { return "" }
    return argument.lastComponent
  }

  /// True when `argument` names a folder's contents rather than the folder: it ends in `/`,
  /// or its last component is `.` or `..`.
  static func namesContents(_ argument: RawPath) -> Bool {
    if argument.bytes.last == UInt8(ascii: "/") { return true }
    let last = argument.bytes.split(separator: UInt8(ascii: "/")).last.map(Array.init) ?? []
    return last == [UInt8(ascii: ".")] || last == [UInt8(ascii: "."), UInt8(ascii: ".")]
  }
}

/// Arguments that land on the same name of a mirror (`a/x b/x`, or a link argument and a
/// folder argument of one name): an error for the later one, which is then left out whole
/// (as `cp -r a/x b/x M` refuses to merge the second into the first).
enum ArgumentCollisions {
  /// Finds the later of each two colliding arguments; `list` is not changed.
  ///
  /// - Returns: the arguments to leave out, by root index, and one failure per such
  ///   argument; the same folder named twice (`x ./x`) is left out silently, as any source
  ///   reached twice is.
  static func colliding(
    in list: FileList, plan: OutputPlan
  ) -> (leftOut: Set<Int>, failures: [DiscoveryFailure]) {
    guard case .mirror = plan.destination else { return ([], []) }
    var first: [RawPath: Int] = [:]
    var leftOut: Set<Int> = []
    var failures: [DiscoveryFailure] = []
    for index in list.roots.indices {
      let root = list.roots[index]
      let name: RawPath
      if root.isLinkArgument {
        name = root.argument.lastComponent
      } else if !root.isFileArgument && !root.destination.isEmpty {
        name = root.destination
      } else {
        continue
      }
      guard let earlier = first[name] else {
        first[name] = index
        continue
      }
      leftOut.insert(index)
      let other = list.roots[earlier]
      if other.identity == root.identity && other.isLinkArgument == root.isLinkArgument {
        continue
      }
      failures.append(
        DiscoveryFailure(
          path: root.argument,
          cause:
            "would be mirrored to '\(plan.mirrorDisplay(name).displayString)', as '\(other.argument.displayString)' is; not done (name one with a trailing '/' to merge its contents, or mirror it elsewhere)"
        ))
    }
    return (leftOut, failures)
  }
}
