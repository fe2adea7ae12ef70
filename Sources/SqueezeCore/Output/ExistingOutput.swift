import SqueezeGzip
import SqueezeSystem

/// What sits at an output path before squeeze writes it, and what to do about it (a re-run
/// skips outputs that are up to date and never overwrites a file squeeze did not make).
enum ExistingOutput: Sendable, Equatable {
  /// Nothing: publish without replacing anything.
  case absent
  /// squeeze's (or gzip's) output of this very source, still current: its header names
  /// the source (FNAME), its MTIME and ISIZE match the source, and the output's own
  /// modification time equals the source's to the nanosecond (for a run with `-n`, which
  /// writes no FNAME and no MTIME, also a header with neither whose ISIZE and own time
  /// match); in a mirror it also has the permission bits and (as root) the owner and group
  /// squeeze gives the output. Nothing to do.
  case upToDate
  /// An output of this source (FNAME matches) that no longer matches it: replace it.
  case stale
  /// Another file, or a symbolic link: left alone with an error unless `--force`.
  case foreign
  /// A device, pipe or socket (or, beside the sources, a folder): never replaced, even with
  /// `--force`.
  case inTheWay(FileKind)
  /// In a mirror, a folder where the output goes (the source was a folder and is now a
  /// file): an empty one is replaced once the new output is durable (`RENAME_EXCHANGE`,
  /// then the folder removed); a non-empty one only with `--delete`, once pruned.
  case folderInTheWay(empty: Bool)

  /// Inspects the file at `target` against the source.
  ///
  /// In a mirror (`inMirror`), the tree is squeeze's own: a symbolic link at the output
  /// path is a link squeeze mirrored there before (the source changed kind) and is
  /// replaced; a folder there is ``folderInTheWay(empty:)``; and an output also belongs to
  /// the source when its FNAME names another name of the source's hard-link group
  /// (`alsoNamed`), or when its header MTIME, ISIZE and its own nanosecond modification time
  /// all match the source (the output of a former name of the same file).
  ///
  /// A run with `-n` (`nameless`) writes headers with no FNAME and MTIME 0, so its outputs
  /// cannot name their source. For such a run, an output whose header has neither is judged
  /// by what it does carry: with the source's ISIZE (modulo 2^32) and the source's
  /// nanosecond modification time on the file itself it is current (a re-run leaves it, as
  /// gzip's and rsync's size-and-time rule would); otherwise, in a mirror (squeeze's own
  /// tree) it is ``stale`` and written anew, and beside the sources it is ``foreign``: it
  /// could be another file's `gzip -n` output, so only `--force` replaces it, as with gzip.
  ///
  /// A mirror restores modes and owners, so there a current output must also carry the
  /// attributes squeeze gives an output: the source's permission bits
  /// (``CreationPermissions/kept(_:keepsOwner:)``: all of them when `sourceOwner` is given,
  /// less set-user-ID and set-group-ID otherwise) and, when `sourceOwner` gives one (running
  /// as root), the source's owner and group. An output that differs only in them is ``stale`` and written anew (never
  /// changed in place: it may share its inode with an earlier snapshot). Beside the
  /// sources, as with gzip, only the contents and times are compared.
  ///
  /// - Parameters:
  ///   - target: the output path.
  ///   - sourceName: the source's base name, as written in FNAME.
  ///   - source: the source's status.
  ///   - inMirror: the output path is in a mirror (`-o`).
  ///   - alsoNamed: other names of the source's hard-link group.
  ///   - sourceOwner: the source's owner and group when outputs take them (as root); called
  ///     only for an output that is otherwise current, and nil when it cannot be read.
  ///   - nameless: the run writes no FNAME and no MTIME (`-n`).
  /// - Throws: ``SystemError`` when the output path cannot be examined for a reason other
  ///   than not existing.
  static func inspect(
    _ target: RelativeLocation, sourceName: RawPath, source: FileStatus, inMirror: Bool = false,
    alsoNamed: [RawPath] = [], sourceOwner: (() -> (user: UInt32, group: UInt32)?)? = nil,
    nameless: Bool = false
  ) throws(SystemError) -> ExistingOutput {
    try inspectWithStatus(
      target, sourceName: sourceName, source: source, inMirror: inMirror, alsoNamed: alsoNamed,
      sourceOwner: sourceOwner, nameless: nameless
    ).existing
  }

  /// ``inspect(_:sourceName:source:inMirror:alsoNamed:sourceOwner:nameless:)``, also returning the status of what
  /// was opened at `target` (`fstat(2)` of the open file, so the very file judged; nil when
  /// nothing could be opened): `--link-dest` planning compares it with the source's bits and
  /// times without a second `fstatat(2)`.
  ///
  /// - Throws: ``SystemError`` when the output path cannot be examined for a reason other
  ///   than not existing.
  static func inspectWithStatus(
    _ target: RelativeLocation, sourceName: RawPath, source: FileStatus, inMirror: Bool = false,
    alsoNamed: [RawPath] = [], sourceOwner: (() -> (user: UInt32, group: UInt32)?)? = nil,
    nameless: Bool = false
  ) throws(SystemError) -> (existing: ExistingOutput, status: FileStatus?) {
    let output: FileDescriptor
    do throws(SystemError) {
      output = try target.open(flags: .source)
    } catch  where error == .noSuchFile {
      return (.absent, nil)
    } catch  where error == .symbolicLinkLoop {
      // Beside the sources a link at the output path is never ours (and `--force` replaces
      // the link itself); a link on the way to it is never written through.
      if (try? target.entryStatus())?.kind == .symbolicLink {
        return (inMirror ? .stale : .foreign, nil)
      }
      throw error
    }
    let status = try output.status()
    if status.kind == .directory && inMirror {
      return (.folderInTheWay(empty: target.isEmptyFolder()), status)
    }
    guard status.kind == .regular else { return (.inTheWay(status.kind), status) }
    guard let header = try gzipHeader(of: output, size: status.size) else {
      return (.foreign, status)
    }
    if nameless && header.name == nil && header.modificationTime == 0 {
      let trailer = try trailer(of: output, size: status.size)
      let current =
        trailer?.size == UInt32(truncatingIfNeeded: source.size)
        && status.modificationTime == source.modificationTime
      guard current else { return (inMirror ? .stale : .foreign, status) }
      return (
        attributesJudged(status, source: source, inMirror: inMirror, sourceOwner: sourceOwner),
        status
      )
    }
    if header.name != sourceName.bytes {
      let named = header.name.map { RawPath(bytes: $0) }
      if inMirror, let named, alsoNamed.contains(named) { return (.stale, status) }
      if inMirror,
        try isOutput(of: source, header: header, output: output, outputStatus: status)
      {
        return (.stale, status)
      }
      return (.foreign, status)
    }
    guard let trailer = try trailer(of: output, size: status.size) else {
      return (.stale, status)
    }
    let expectedHeaderTime = GzipHeader(
      name: nil, modificationTime: source.modificationTime, level: .default
    )
    .modificationTime
    let current =
      trailer.size == UInt32(truncatingIfNeeded: source.size)
      && header.modificationTime == expectedHeaderTime
      && status.modificationTime == source.modificationTime
    guard current else { return (.stale, status) }
    return (
      attributesJudged(status, source: source, inMirror: inMirror, sourceOwner: sourceOwner), status
    )
  }

  /// An output whose contents and times are current: ``upToDate``, unless in a mirror its
  /// permission bits or (when `sourceOwner` gives one) its owner and group are not the ones
  /// squeeze gives the output, when it is ``stale``.
  private static func attributesJudged(
    _ status: FileStatus, source: FileStatus, inMirror: Bool,
    sourceOwner: (() -> (user: UInt32, group: UInt32)?)?
  ) -> ExistingOutput {
    guard inMirror else { return .upToDate }
    let bits = CreationPermissions.kept(source.permissions, keepsOwner: sourceOwner != nil)
    guard status.permissions == bits else { return .stale }
    if let sourceOwner {
      guard let owner = sourceOwner(), status.userID == owner.user, status.groupID == owner.group
      else { return .stale }
    }
    return .upToDate
  }

  /// The trailer (CRC-32 and ISIZE, RFC 1952 section 2.3.1) in the last 8 bytes of
  /// `output`, a file of `size` bytes, or nil when they cannot all be read.
  ///
  /// - Throws: ``SystemError`` from `pread(2)`.
  private static func trailer(
    of output: borrowing FileDescriptor, size: Int64
  ) throws(SystemError) -> GzipTrailer? {
    var tail = [UInt8](repeating: 0, count: 8)
    guard try output.readFully(into: &tail, at: size - 8) == 8 else { return nil }
    return tail.withUnsafeBytes { GzipTrailer($0) }
  }

  /// True when `output` (a gzip file whose FNAME names another file) carries exactly
  /// `source`'s header MTIME, ISIZE and, on the file itself, its nanosecond modification
  /// time: an output squeeze wrote from the same file under another of its names.
  private static func isOutput(
    of source: FileStatus, header: GzipHeader, output: borrowing FileDescriptor,
    outputStatus: FileStatus
  ) throws(SystemError) -> Bool {
    guard let trailer = try trailer(of: output, size: outputStatus.size) else { return false }
    let expectedTime = GzipHeader(
      name: nil, modificationTime: source.modificationTime, level: .default
    ).modificationTime
    return header.modificationTime == expectedTime && expectedTime != 0
      && trailer.size == UInt32(truncatingIfNeeded: source.size)
      && outputStatus.modificationTime == source.modificationTime
  }

  /// Inspects what sits where `-d` restores a file, against the `.gz` file `source`
  /// (restore re-runs are incremental): a regular file of the size the `.gz`
  /// file's trailer gives (ISIZE, modulo 2^32), with the `.gz` file's modification time to
  /// the nanosecond, its permission bits and, when restored files take the `.gz` file's
  /// owner (as root), that owner and group, is up to date; any other regular file is
  /// ``foreign`` (left alone with an error unless `--force`); a symbolic link is never
  /// written through: beside the sources it is ``foreign`` too (`--force` replaces the link
  /// itself, as `gzip -d -f` does), in a mirror ``stale`` (replaced); a folder is
  /// ``folderInTheWay(empty:)`` in a mirror and ``inTheWay(_:)`` beside the sources.
  ///
  /// - Parameters:
  ///   - target: where the restored file goes.
  ///   - source: the `.gz` file's status (size, modification time, permission bits).
  ///   - isize: the `.gz` file's ISIZE, read only when needed (nil when it cannot be read).
  ///   - inMirror: the target is in a mirror (`-o`).
  ///   - owner: the `.gz` file's owner and group when the restore gives them to the file
  ///     (as root), nil otherwise: a file with another owner is then not up to date, as a
  ///     mirror's output with another owner is not (a restore would give it that owner).
  ///     It also says which permission bits the file must have
  ///     (``CreationPermissions/kept(_:keepsOwner:)``).
  /// - Throws: ``SystemError`` when the target cannot be examined for a reason other than
  ///   not existing.
  static func inspectRestore(
    _ target: RelativeLocation, source: FileStatus, isize: () -> UInt32?, inMirror: Bool,
    owner: (user: UInt32, group: UInt32)? = nil
  ) throws(SystemError) -> ExistingOutput {
    guard let status = try presentStatus(of: target) else { return .absent }
    switch status.kind {
    case .regular:
      let current =
        status.modificationTime == source.modificationTime
        && status.permissions
          == CreationPermissions.kept(source.permissions, keepsOwner: owner != nil)
        && (owner.map { status.userID == $0.user && status.groupID == $0.group } ?? true)
        && UInt32(truncatingIfNeeded: status.size) == isize()
      return current ? .upToDate : .foreign
    // Beside the sources a link is the user's entry, as at a compressed output's path (left
    // alone unless `--force`, which replaces the link itself); in a mirror it is replaced.
    case .symbolicLink: return inMirror ? .stale : .foreign
    case .directory where inMirror: return .folderInTheWay(empty: target.isEmptyFolder())
    default: return .inTheWay(status.kind)
    }
  }

  /// `target`'s own status (a link's, not what it points to), nil when nothing is there.
  ///
  /// - Throws: ``SystemError`` when it cannot be examined for a reason other than not
  ///   existing.
  private static func presentStatus(of target: RelativeLocation) throws(SystemError)
    -> FileStatus?
  {
    do throws(SystemError) {
      return try target.entryStatus()
    } catch  where error == .noSuchFile {
      return nil
    }
  }

  /// What sits at a `-d -N` restore's `target`, whose name comes from a header and so had
  /// no plan: a file is another file's (``foreign``); a link is judged as
  /// ``inspectRestore(_:source:isize:inMirror:owner:)`` judges it (the user's entry beside
  /// the sources, replaced in a mirror); anything else is in the way. Shared by the run
  /// (``DecompressionJob``) and its dry run, so both judge alike.
  ///
  /// - Throws: ``SystemError`` when the target cannot be examined for a reason other than
  ///   not existing.
  static func inspectUnplannedRestore(_ target: RelativeLocation, inMirror: Bool)
    throws(SystemError) -> ExistingOutput
  {
    guard let status = try presentStatus(of: target) else { return .absent }
    switch status.kind {
    case .regular: return .foreign
    case .symbolicLink: return inMirror ? .stale : .foreign
    case let kind: return .inTheWay(kind)
    }
  }

  /// True when the entry at `target` is the file `source` itself: the same inode (the very
  /// name the source was opened by, reached again through `..` or a linked folder, or
  /// another hard link of it), or a symbolic link that leads to it. A restore must never
  /// publish its output there: with `--force` the output would replace the `.gz` file it
  /// is restored from, as `gzip -d -N -f` does when a header names its own file.
  ///
  /// An entry that cannot be examined is not the source (the caller judges it as it would
  /// any other entry).
  static func isSource(_ target: RelativeLocation, source: FileIdentity) -> Bool {
    guard let status = try? target.entryStatus() else { return false }
    if FileIdentity(status) == source { return true }
    guard status.kind == .symbolicLink, let resolved = try? target.resolvedStatus() else {
      return false
    }
    return FileIdentity(resolved) == source
  }

  /// The ISIZE of the gzip file at `location` (the last 4 bytes: its last member's length
  /// modulo 2^32, RFC 1952 section 2.3.1), or nil when it cannot be read.
  static func lastISIZE(of location: RelativeLocation, size: Int64) -> UInt32? {
    guard size >= 18, let file = try? location.open(flags: .source)
    else { return nil }
    var tail = [UInt8](repeating: 0, count: 8)
    guard (try? file.readFully(into: &tail, at: size - 8)) == 8 else { return nil }
    return tail.withUnsafeBytes { GzipTrailer($0) }?.size
  }

  /// True when a regular file at `target` is a gzip file whose header names `sourceName`
  /// (FNAME): the output of that source, by this or another run.
  ///
  /// Used when a source vanished after it was listed: with `--rm`, an overlapping run that
  /// compressed and removed it leaves exactly this behind.
  static func namesSource(_ target: RelativeLocation, sourceName: RawPath) -> Bool {
    guard let output = try? target.open(flags: .source),
      let status = try? output.status(), status.kind == .regular,
      let header = try? gzipHeader(of: output, size: status.size)
    else { return false }
    return header.name == sourceName.bytes
  }

  /// The gzip header and status of the regular file at `location` (a link is not
  /// followed), or nil when it is not a regular gzip file.
  static func header(at location: RelativeLocation) -> (GzipHeader, FileStatus)? {
    (try? readHeader(at: location)) ?? nil
  }

  /// The gzip header of the regular file at `location` and its status, as
  /// ``header(at:)``, but a file that cannot be opened or read is an error, not an answer.
  ///
  /// - Returns: nil when the file is gone (or a symbolic link now), or is not a regular file
  ///   starting with a gzip header.
  /// - Throws: ``SystemError`` from `open(2)`, `fstat(2)` or `pread(2)` (not `ENOENT` or
  ///   `ELOOP`).
  static func readHeader(at location: RelativeLocation) throws(SystemError) -> (
    GzipHeader, FileStatus
  )? {
    let output: FileDescriptor
    do {
      output = try location.open(flags: .source)
    } catch  where error == .noSuchFile || error == .symbolicLinkLoop {
      return nil
    }
    let status = try output.status()
    guard status.kind == .regular, let header = try gzipHeader(of: output, size: status.size)
    else { return nil }
    return (header, status)
  }

  /// The gzip header at the start of `output` (RFC 1952 section 2.3), or nil when the file
  /// is too short to be gzip or does not start with a header that fits in 512 bytes.
  ///
  /// - Throws: ``SystemError`` from `pread(2)`.
  private static func gzipHeader(
    of output: borrowing FileDescriptor, size: Int64
  ) throws(SystemError) -> GzipHeader? {
    guard size >= 18 else { return nil }
    var head = [UInt8](repeating: 0, count: 512)
    let headCount = try output.readFully(into: &head, at: 0)
    let parsed = head.withUnsafeBytes {
      GzipHeader.parse(UnsafeRawBufferPointer(rebasing: $0[..<headCount]))
    }
    guard case .header(let header, _) = parsed else { return nil }
    return header
  }
}
