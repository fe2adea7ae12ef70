import SqueezeGzip
import SqueezeSystem

/// Where each file's output goes and what it is called.
///
/// Beside the sources, `dir/a.txt` becomes `dir/a.txt.gz` (and back with `-d`). With
/// `-o OUT`, arguments map as rsync's and cp's (`ArgumentMapping`): `squeeze -o OUT a b/`
/// puts `a/x/y` at `OUT/a/x/y.gz` and `b/z` at `OUT/z.gz`; a file argument `c/f` lands at
/// `OUT/f.gz`. Two sources that map to the same output are a per-file error for the later
/// one.
package struct OutputPlan: Sendable {
  /// Where outputs are written.
  package enum Destination: Sendable, Equatable {
    /// In each source's own folder.
    case besideSources
    /// Below a folder (`-o`): the index of its open descriptor in `BaseDirectories`, and the
    /// path as the user gave it (for messages).
    case mirror(base: Int, path: RawPath)
  }

  /// How an output is named from its source.
  package enum Naming: Sendable, Equatable {
    /// Compression: the source's name plus the suffix (`-S`, default `.gz`).
    case addSuffix(RawPath)
    /// Decompression: the source's name without its compressed suffix (the `-S` suffix,
    /// `.gz`, `-gz`, `.z`, `-z`, `_z`; `.tgz` and `.taz` become `.tar`, as gzip does).
    case removeSuffix(RawPath)
  }

  /// Where outputs go.
  let destination: Destination
  /// How outputs are named.
  let naming: Naming
  /// Which links resolving an output beside its source may follow: `.inFolders` with
  /// `--follow-symlinks` (the source's folder may have been reached through a link), never
  /// otherwise. A mirror (`-o`) is squeeze's own tree and is never written through links.
  package var besideSymlinks: SymlinkPolicy = .never

  /// Outputs written to `destination`, named by `naming`.
  package init(destination: Destination, naming: Naming) {
    self.destination = destination
    self.naming = naming
  }

  /// The output name for a source named `name`; nil when decompressing a name without a
  /// known compressed suffix.
  func outputName(for name: RawPath) -> RawPath? {
    switch naming {
    case .addSuffix(let suffix):
      return name.addingSuffix(suffix)
    case .removeSuffix(let suffix):
      return GzipNaming.decompressedName(of: name, suffix: suffix)
    }
  }

  /// The output named `name` of `file`: the folder descriptor it is relative to, the folder
  /// below it, and the name.
  func target(
    named name: RawPath, of file: FileList.File, in list: FileList, bases: BaseDirectories
  )
    -> RelativeLocation
  {
    let folder = list.relativePath(ofDirectory: file.directory)
    // The root's fields are read in place: a copy of the root (`list.root(of:)`) retained and
    // released its paths for every file.
    let root = list.rootIndex(of: file)
    switch destination {
    case .besideSources:
      return RelativeLocation(
        base: bases.descriptor(list.roots[root].base), directory: folder, name: name,
        symlinks: besideSymlinks)
    case .mirror(let base, _):
      return RelativeLocation(
        base: bases.descriptor(base), directory: list.roots[root].destination.appending(folder),
        name: name)
    }
  }

  /// Where entry `name` of the listed folder `directory` goes in the mirror (links keep
  /// their names); nil beside the sources.
  func mirrorLocation(
    named name: RawPath, inDirectory directory: Int32, of list: FileList, bases: BaseDirectories
  ) -> RelativeLocation? {
    guard case .mirror(let base, _) = destination, base >= 0 else { return nil }
    return RelativeLocation(
      base: bases.descriptor(base), directory: list.mirrorPath(ofDirectory: directory),
      name: name)
  }

  /// The mirror path `relative` (below the mirror) as the user would write it.
  func mirrorDisplay(_ relative: RawPath) -> RawPath {
    guard case .mirror(_, let path) = destination else { return relative }
    return relative.isEmpty ? path : path.trimmingTrailingSlashes.appending(relative)
  }

  /// The output named `name` of `file` as the user would write its path, for messages.
  func displayPath(named name: RawPath, of file: FileList.File, in list: FileList) -> RawPath {
    switch destination {
    case .besideSources:
      return list.displayPath(of: file).parent(unlessFileArgumentWithoutFolder: list.root(of: file))
        .appending(name)
    case .mirror(_, let path):
      return path.trimmingTrailingSlashes.appending(list.mirrorPath(ofDirectory: file.directory))
        .appending(name)
    }
  }

  /// The default output of `file` (by ``naming``), as displayed; the source's own path when
  /// it has no output name.
  func displayPath(of file: FileList.File, in list: FileList) -> RawPath {
    guard let name = outputName(for: list.name(of: file)) else { return list.displayPath(of: file) }
    return displayPath(named: name, of: file, in: list)
  }

  /// Finds files whose output is already taken by an earlier file.
  ///
  /// Beside the sources, an output is identified by its folder's identity (device and
  /// inode) and its name, so `squeeze dir dir/`, `squeeze dir ./dir` or `squeeze dir
  /// dir/sub` name each output once; in a mirror, by its path below the mirror.
  ///
  /// - Parameter names: output names that replace the ones ``naming`` gives, by file index
  ///   (`-d -N`: the names in the headers).
  /// - Returns: for each such file (by index), the display path of the earlier source; the
  ///   same source file reached twice is listed in `duplicates` instead, to be dropped
  ///   silently.
  func collisions(
    in list: FileList, leavingOut leftOutRoots: Set<Int> = [], names: [Int: RawPath] = [:]
  ) -> (collisions: [Int: RawPath], duplicates: Set<Int>) {
    if names.isEmpty && cannotCollide(in: list) { return ([:], []) }
    var firstByKey: [OutputKey: Int] = [:]
    firstByKey.reserveCapacity(list.files.count)
    var collisions: [Int: RawPath] = [:]
    var duplicates: Set<Int> = []
    for (index, file) in list.files.enumerated()
    where !leftOutRoots.contains(Int(list.directories[Int(file.directory)].root)) {
      guard let name = names[index] ?? outputName(for: list.name(of: file)) else { continue }
      let key: OutputKey
      switch destination {
      case .besideSources:
        key = .beside(folder: list.folderIdentity(of: file), name: name)
      case .mirror:
        key = .mirror(path: list.mirrorPath(ofDirectory: file.directory).appending(name))
      }
      if let first = firstByKey[key] {
        let earlier = list.files[first]
        if earlier.device == file.device && earlier.inode == file.inode {
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

  /// The restores beside the sources whose output path is another file of `list`: `a.gz`
  /// whose header names `b.gz` (`-N`, `names`), or `a.gz.gz` listed with `a.gz`. With
  /// `--force` such an output would replace a file this run has still to read; without it,
  /// the file would be reported as if an earlier run's output were in the way. By index,
  /// the display path of the file the output would be (a file whose output is its own name
  /// is not listed here: the restore refuses it when it finds it,
  /// ``ExistingOutput/isSource(_:source:)``).
  ///
  /// - Complexity: O(n) in the files listed. Every file a restore lists has a compressed
  ///   suffix, so only outputs with one can be another input: the files are looked up by
  ///   name only when some output has one (`x.gz.gz`, or a header naming `b.gz`), which a
  ///   restore of ordinary backups never has. Nothing when restoring into a mirror, whose
  ///   outputs are never where its sources are (the output folder is not walked).
  func outputsOnOtherInputs(in list: FileList, names: [Int: RawPath]) -> [Int: RawPath] {
    guard case .besideSources = destination, case .removeSuffix = naming else { return [:] }
    var candidates: [(index: Int, name: RawPath)] = []
    for (index, file) in list.files.enumerated() {
      guard let name = names[index] ?? outputName(for: list.name(of: file)),
        outputName(for: name) != nil
      else { continue }
      candidates.append((index, name))
    }
    guard !candidates.isEmpty else { return [:] }
    var inputs: [OutputKey: Int] = [:]
    inputs.reserveCapacity(list.files.count)
    for (index, file) in list.files.enumerated() {
      inputs[.beside(folder: list.folderIdentity(of: file), name: list.name(of: file))] = index
    }
    var found: [Int: RawPath] = [:]
    for (index, name) in candidates {
      let file = list.files[index]
      guard let other = inputs[.beside(folder: list.folderIdentity(of: file), name: name)],
        other != index
      else { continue }
      found[index] = list.displayPath(of: list.files[other])
    }
    return found
  }

  /// True when no two files of `list` can have the same output, without looking at each
  /// file: adding a suffix maps the distinct names of one listed folder to distinct names,
  /// so outputs can only meet when one folder was listed twice (beside the sources: two
  /// entries with the same identity, as overlapping arguments give) or when several
  /// arguments share a mirror.
  private func cannotCollide(in list: FileList) -> Bool {
    guard case .addSuffix = naming else { return false }
    switch destination {
    case .besideSources:
      var seen = Set<FileIdentity>(minimumCapacity: list.directories.count)
      return list.directories.allSatisfy { seen.insert($0.identity).inserted }
    case .mirror:
      return list.roots.count <= 1
    }
  }

  private enum OutputKey: Hashable {
    case beside(folder: FileIdentity, name: RawPath)
    case mirror(path: RawPath)
  }
}

extension OutputPlan.Naming {
  /// The suffix in play.
  var suffix: RawPath {
    switch self {
    case .addSuffix(let suffix), .removeSuffix(let suffix): suffix
    }
  }
}

extension RawPath {
  /// The folder part of a displayed source path: its parent, or nothing for a bare file
  /// name given as an argument (so `a.txt` maps to `a.txt.gz`, not `./a.txt.gz`).
  fileprivate func parent(unlessFileArgumentWithoutFolder root: FileList.Root) -> RawPath {
    if root.isFileArgument && !bytes.contains(UInt8(ascii: "/")) { return "" }
    return parent
  }
}
