import SqueezeSystem

/// A snapshot run's part of the phases (`-o NEW --link-dest DIR`): before discovery, the
/// earlier snapshots are opened and NEW checked and marked unfinished; after the mirror's
/// work, the marker goes once everything is in place.
extension RunCommand {
  /// Opens the `--link-dest` folders, checks that the `-o` folder may take a snapshot (empty,
  /// or a snapshot a stopped run left unfinished) and, unless this is a dry run, leaves the
  /// marker of an unfinished snapshot in it before anything else is written.
  ///
  /// - Parameters:
  ///   - output: the `-o` folder as given.
  ///   - mirror: its open descriptor, or nil in a dry run into a folder not made yet.
  ///   - opened: the earlier snapshots when ``openLinkDestinations(output:mirror:environment:)``
  ///     already opened them (before the `-o` folder was made); nil to open them here.
  /// - Returns: the open earlier snapshots, in the order given, and whether the `-o` folder
  ///   is an unfinished snapshot this run resumes.
  /// - Throws: ``SnapshotError`` when the run cannot start (nothing was written then).
  @MainActor
  func prepareSnapshot(
    output: RawPath, mirror: Int32?, environment: RunEnvironment,
    opened: [LinkDestination]? = nil
  ) throws(SnapshotError) -> (destinations: [LinkDestination], resumes: Bool) {
    var resumes = false
    if let mirror {
      resumes = try SnapshotMarker.state(of: mirror, display: output) == .unfinished
    }
    let destinations: [LinkDestination]
    if let opened {
      destinations = opened
    } else {
      destinations = try openLinkDestinations(
        output: output, mirror: mirror, environment: environment)
    }
    if let mirror, !configuration.dryRun {
      // What a run killed while it wrote the marker left: its temporary, not to be kept in
      // the snapshot.
      TemporaryCleaner(namer: environment.namer).cleanOnce(
        folderOf: RelativeLocation(base: mirror, directory: "", name: SnapshotMarker.name))
      do throws(SystemError) {
        try SnapshotMarker.leave(in: mirror, namer: environment.namer)
      } catch {
        throw .cannotMark(output, error)
      }
    }
    return (destinations, resumes)
  }

  /// Opens the `--link-dest` folders and checks each: it opens, it is not the `-o` folder,
  /// and it does not lie inside a source argument. A run refused here writes nothing, so a
  /// run into an `-o` folder not made yet calls this before making it.
  ///
  /// A relative `--link-dest` is relative to the `-o` folder, as rsync's is (rsync(1),
  /// `--link-dest`): `--link-dest ../2026-11-30` next to `-o /backup/2026-12-01`. When the
  /// `-o` folder exists it is opened through it, so `..` means its parent on disk (as rsync,
  /// which changes into it first); when it does not, through the deepest part of its path
  /// that exists (``openingPathBeforeCreation(of:output:)``).
  ///
  /// - Parameters:
  ///   - output: the `-o` folder as given.
  ///   - mirror: its open descriptor, or nil when it does not exist (yet).
  /// - Returns: the open earlier snapshots, in the order given.
  /// - Throws: ``SnapshotError`` when one cannot be opened or cannot be linked from.
  @MainActor
  func openLinkDestinations(
    output: RawPath, mirror: Int32?, environment: RunEnvironment
  ) throws(SnapshotError) -> [LinkDestination] {
    let outputIdentity = mirror.flatMap { try? FileStatus.of(".", in: $0) }.map {
      FileIdentity($0)
    }
    var destinations: [LinkDestination] = []
    var sourceFolders: [FileIdentity: RawPath] = [:]
    for path in configuration.paths {
      if let status = try? FileStatus.of(
        path, in: Descriptor.currentDirectory, followingSymlinks: true),
        status.kind == .directory
      {
        sourceFolders[FileIdentity(status)] = path
      }
    }
    for given in configuration.linkDestinations {
      let display = given.isAbsolute ? given : Self.lexicallyJoined(output, given)
      // A folder not made yet has no identity to compare: its path says it.
      if mirror == nil, Self.lexicallyNormal(display) == Self.lexicallyNormal(output) {
        throw .isOutputFolder(display)
      }
      let opened =
        if given.isAbsolute {
          display
        } else if mirror != nil {
          output.appending(given)
        } else {
          Self.openingPathBeforeCreation(of: given, output: output) ?? display
        }
      let base: Int
      do throws(SystemError) {
        base = try environment.bases.open(opened)
      } catch {
        throw .cannotOpen(display, error)
      }
      let identity = (try? FileStatus.of(".", in: environment.bases.descriptor(base))).map {
        FileIdentity($0)
      }
      if let identity, identity == outputIdentity { throw .isOutputFolder(display) }
      if let source = Self.enclosingSource(
        of: environment.bases.descriptor(base), sources: sourceFolders)
      {
        throw .insideSource(display, source)
      }
      destinations.append(LinkDestination(base: base, display: display))
    }
    return destinations
  }

  /// Where the relative `--link-dest` `given` is to be opened while the `-o` folder
  /// `output` does not exist: the `..` that climb out of the folders still to be made are
  /// taken by the text (such a folder's `..` will be the folder it is made in), the rest on
  /// disk from the deepest part of `output` that exists, just as opening it through the
  /// folder once made would resolve it. Nil when `output` ends in `.` or `..` below what
  /// exists, where the text alone cannot say which folders will be made.
  ///
  /// `-o link/new --link-dest ../../old`, `link` a symbolic link to `/b/c`: `new` is missing,
  /// so the first `..` leaves it by the text and the second is opened on disk from `link`:
  /// `link/../old`, which is `/b/old`.
  static func openingPathBeforeCreation(of given: RawPath, output: RawPath) -> RawPath? {
    let slash = UInt8(ascii: "/")
    var existing = output.bytes.split(separator: slash).map(Array.init)
    var missing: [[UInt8]] = []
    func path(_ parts: [[UInt8]]) -> RawPath {
      let joined = parts.joined(separator: [slash])
      if output.isAbsolute { return RawPath(bytes: [slash] + joined) }
      return RawPath(bytes: parts.isEmpty ? [UInt8(ascii: ".")] : Array(joined))
    }
    while !existing.isEmpty,
      (try? FileStatus.of(
        path(existing), in: Descriptor.currentDirectory, followingSymlinks: true)) == nil
    {
      missing.insert(existing.removeLast(), at: 0)
    }
    let dot = UInt8(ascii: ".")
    if missing.contains([dot]) || missing.contains([dot, dot]) { return nil }
    let below = lexicallyJoined(RawPath(bytes: Array(missing.joined(separator: [slash]))), given)
    return path(existing).appending(below)
  }

  /// The source argument that the folder open at `folder` is, or lies below (its folder
  /// or one of its parents, up to `/`, is one of `sources`), or nil.
  ///
  /// A snapshot linked from inside its own source would be left out of the snapshot (the
  /// walk never enters the folders it links from, as it never enters the `-o` folder) and
  /// the older snapshots beside it copied into each new one: such a run is refused before
  /// anything is written.
  static func enclosingSource(of folder: Int32, sources: [FileIdentity: RawPath]) -> RawPath? {
    guard !sources.isEmpty else { return nil }
    var path: RawPath = "."
    var previous: FileIdentity? = nil
    // Up the `..` chain until `/` (whose `..` is itself); 4,096 levels at most.
    for _ in 0..<4096 {
      guard let status = try? FileStatus.of(path, in: folder, followingSymlinks: true) else {
        return nil
      }
      let identity = FileIdentity(status)
      if let source = sources[identity] { return source }
      if identity == previous { return nil }
      previous = identity
      path = path == "." ? ".." : path.appending("..")
    }
    return nil
  }

  /// The identities of the earlier snapshots' folders: discovery leaves them out when they
  /// lie inside an input, as it leaves out the `-o` folder.
  @MainActor
  static func identities(
    of destinations: [LinkDestination], bases: BaseDirectories
  ) -> [FileIdentity] {
    destinations.compactMap { destination in
      (try? FileStatus.of(".", in: bases.descriptor(destination.base))).map { FileIdentity($0) }
    }
  }

  /// Ends a snapshot run: once the mirror's work is on disk and nothing failed or was
  /// interrupted, the marker of an unfinished snapshot is removed; otherwise it stays and the
  /// next run into the folder resumes the snapshot.
  ///
  /// - Returns: the failure when the marker could not be removed.
  @MainActor
  func finishSnapshot(
    mirror: Int32, output: RawPath, results: RunResults, otherFailures: Int,
    namer: TemporaryNamer
  ) -> DiscoveryFailure? {
    guard !results.interrupted, results.failed == 0, otherFailures == 0 else { return nil }
    do throws(SystemError) {
      try SnapshotMarker.remove(from: mirror, namer: namer)
      return nil
    } catch {
      return DiscoveryFailure(
        path: output.trimmingTrailingSlashes.appending(SnapshotMarker.name),
        cause: "cannot remove the marker of an unfinished snapshot: \(error)")
    }
  }

  /// `path` with `.` and `..` taken away by the text alone (`a/./b/../c/` gives `a/c`), for
  /// comparing two spellings of one path.
  static func lexicallyNormal(_ path: RawPath) -> RawPath {
    lexicallyJoined(RawPath(bytes: path.isAbsolute ? [UInt8(ascii: "/")] : []), path)
  }

  /// `relative` below `folder`, with `.` and `..` taken away by the text alone
  /// (`/b/2026-12-01` and `../2026-11-30` give `/b/2026-11-30`): how a relative
  /// `--link-dest` is shown, and opened when the `-o` folder does not exist yet (a dry run).
  static func lexicallyJoined(_ folder: RawPath, _ relative: RawPath) -> RawPath {
    let slash = UInt8(ascii: "/")
    var parts = folder.bytes.split(separator: slash).map(Array.init)
    for part in relative.bytes.split(separator: slash).map(Array.init) {
      if part == [UInt8(ascii: ".")] { continue }
      if part == [UInt8(ascii: "."), UInt8(ascii: ".")] {
        if let last = parts.last, last != [UInt8(ascii: "."), UInt8(ascii: ".")],
          last != [UInt8(ascii: ".")]
        {
          parts.removeLast()
          continue
        }
        if folder.isAbsolute { continue }  // `..` at the root stays at the root
      }
      parts.append(part)
    }
    var bytes: [UInt8] = folder.isAbsolute ? [slash] : []
    for (index, part) in parts.enumerated() {
      if index > 0 { bytes.append(slash) }
      bytes += part
    }
    return RawPath(bytes: bytes.isEmpty ? [UInt8(ascii: ".")] : bytes)
  }
}
