/// Where each file's output goes and what it is called (spec §4, "Output" and "Mirror").
///
/// Beside the sources, `dir/a.txt` becomes `dir/a.txt.gz` (and back with `-d`). With
/// `-o OUT`, arguments map as rsync's and cp's (``ArgumentMapping``): `squeeze -o OUT a b/`
/// puts `a/x/y` at `OUT/a/x/y.gz` and `b/z` at `OUT/z.gz`; a file argument `c/f` lands at
/// `OUT/f.gz`. Two sources that map to the same output are a per-file error for the later
/// one.
struct OutputPlan: Sendable {
  /// Where outputs are written.
  enum Destination: Sendable, Equatable {
    /// In each source's own folder.
    case besideSources
    /// Below a folder (`-o`): the index of its open descriptor in ``BaseDirectories``, and the
    /// path as the user gave it (for messages).
    case mirror(base: Int, path: RawPath)
  }

  /// How an output is named from its source.
  enum Naming: Sendable, Equatable {
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
  var besideSymlinks: SymlinkPolicy = .never

  /// The output name for a source named `name`; nil when decompressing a name without a
  /// known compressed suffix.
  func outputName(for name: RawPath) -> RawPath? {
    switch naming {
    case .addSuffix(let suffix):
      return name.addingSuffix(suffix)
    case .removeSuffix(let suffix):
      return OutputPlan.decompressedName(of: name, suffix: suffix)
    }
  }

  /// `name` without its compressed suffix, gzip's rules; nil for an unknown suffix.
  ///
  /// Suffixes match whatever their ASCII letter case, as gzip's (`x.GZ` becomes `x`,
  /// `y.TGZ` becomes `y.tar`).
  static func decompressedName(of name: RawPath, suffix: RawPath) -> RawPath? {
    let bytes = name.bytes
    // Called for every file of a restore (several times): the suffix tables are built once.
    if !suffix.isEmpty && hasSuffixIgnoringCase(bytes, suffix.bytes) {
      return RawPath(bytes: bytes.dropLast(suffix.count))
    }
    for known in strippedSuffixes where hasSuffixIgnoringCase(bytes, known) {
      return RawPath(bytes: bytes.dropLast(known.count))
    }
    for tar in tarSuffixes where hasSuffixIgnoringCase(bytes, tar) {
      return RawPath(bytes: bytes.dropLast(4) + tarExtension)
    }
    return nil
  }

  /// The suffixes a restore strips after the `-S` one, in gzip's order of trying them.
  private static let strippedSuffixes = ["-gz", ".z", "-z", "_z", ".gz"].map { Array($0.utf8) }
  /// The suffixes a restore turns into `.tar`.
  private static let tarSuffixes = [".tgz", ".taz"].map { Array($0.utf8) }
  private static let tarExtension = Array(".tar".utf8)

  /// True when `name` ends in a suffix gzip treats as compressed (`.gz`, `.tgz`, `.taz`,
  /// `.z`, `-gz`, `-z`, `_z`) or in the `-S` suffix, whatever their ASCII letter case.
  static func hasCompressedSuffix(_ name: RawPath, suffix: RawPath) -> Bool {
    if !suffix.isEmpty && hasSuffixIgnoringCase(name.bytes, suffix.bytes) { return true }
    return compressedSuffixes.contains { hasSuffixIgnoringCase(name.bytes, $0) }
  }

  /// The suffixes gzip treats as compressed, as bytes.
  private static let compressedSuffixes = [".gz", ".tgz", ".taz", ".z", "-gz", "-z", "_z"].map {
    Array($0.utf8)
  }

  /// True when `bytes` ends in `suffix`, ASCII letters compared without case (gzip lowers
  /// a name's tail before comparing suffixes); other bytes compare exactly.
  static func hasSuffixIgnoringCase(_ bytes: [UInt8], _ suffix: [UInt8]) -> Bool {
    guard bytes.count >= suffix.count else { return false }
    func lower(_ byte: UInt8) -> UInt8 {
      byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }
    var index = bytes.count - suffix.count
    for byte in suffix {
      if lower(bytes[index]) != lower(byte) { return false }
      index += 1
    }
    return true
  }

  /// The output named `name` of `file`: the folder descriptor it is relative to, the folder
  /// below it, and the name.
  func target(
    named name: RawPath, of file: FileList.File, in list: FileList, bases: BaseDirectories
  )
    -> RelativeLocation
  {
    let folder = list.relativePath(ofDirectory: file.directory)
    switch destination {
    case .besideSources:
      return RelativeLocation(
        base: bases.descriptor(list.root(of: file).base), directory: folder, name: name,
        symlinks: besideSymlinks)
    case .mirror(let base, _):
      return RelativeLocation(
        base: bases.descriptor(base), directory: list.root(of: file).destination.appending(folder),
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
  /// - Returns: for each such file (by index), the display path of the earlier source; the
  ///   same source file reached twice is listed in `duplicates` instead, to be dropped
  ///   silently.
  func collisions(in list: FileList) -> (collisions: [Int: RawPath], duplicates: Set<Int>) {
    if cannotCollide(in: list) { return ([:], []) }
    var firstByKey: [OutputKey: Int] = [:]
    firstByKey.reserveCapacity(list.files.count)
    var collisions: [Int: RawPath] = [:]
    var duplicates: Set<Int> = []
    for (index, file) in list.files.enumerated() where !list.root(of: file).isDropped {
      guard let name = outputName(for: list.name(of: file)) else { continue }
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
