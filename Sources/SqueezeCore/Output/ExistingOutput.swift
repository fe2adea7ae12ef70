import Glibc

/// What sits at an output path before squeeze writes it, and what to do about it
/// (spec §4, "Re-runs").
enum ExistingOutput: Sendable, Equatable {
  /// Nothing: publish without replacing anything.
  case absent
  /// squeeze's (or gzip's) output of this very source, still current: its header names
  /// the source (FNAME), its MTIME and ISIZE match the source, and the output's own
  /// modification time equals the source's to the nanosecond. Nothing to do.
  case upToDate
  /// An output of this source (FNAME matches) that no longer matches it: replace it.
  case stale
  /// Another file, or a symbolic link: left alone with an error unless `--force`.
  case foreign
  /// A folder, device, pipe or socket: never replaced, even with `--force`.
  case inTheWay(FileKind)

  /// Inspects the file at `target` against the source.
  ///
  /// - Parameters:
  ///   - target: the output path.
  ///   - sourceName: the source's base name, as written in FNAME.
  ///   - source: the source's status.
  /// - Throws: ``SystemError`` when the output path cannot be examined for a reason other
  ///   than not existing.
  static func inspect(
    _ target: RelativeLocation, sourceName: RawPath, source: FileStatus
  ) throws(SystemError) -> ExistingOutput {
    let output: FileDescriptor
    do throws(SystemError) {
      output = try target.open(flags: O_RDONLY | O_NONBLOCK | O_NOCTTY)
    } catch  where error.code == ENOENT {
      return .absent
    } catch  where error.code == ELOOP {
      // A link at the output path is never ours (and `--force` replaces the link itself);
      // a link on the way to it is never written through.
      if (try? target.status())?.kind == .symbolicLink { return .foreign }
      throw error
    }
    let status = try output.status()
    guard status.kind == .regular else { return .inTheWay(status.kind) }
    guard let header = try gzipHeader(of: output, size: status.size),
      header.name == sourceName.bytes
    else {
      return .foreign
    }
    var tail = [UInt8](repeating: 0, count: 8)
    let tailCount = try output.readFully(into: &tail, at: status.size - 8)
    guard tailCount == 8, let trailer = tail.withUnsafeBytes({ GzipTrailer($0) }) else {
      return .stale
    }
    let expectedHeaderTime = GzipHeader(
      name: nil, modificationTime: source.modificationTime, level: .default
    )
    .modificationTime
    let current =
      trailer.size == UInt32(truncatingIfNeeded: source.size)
      && header.modificationTime == expectedHeaderTime
      && status.modificationTime == source.modificationTime
    return current ? .upToDate : .stale
  }

  /// True when a regular file at `target` is a gzip file whose header names `sourceName`
  /// (FNAME): the output of that source, by this or another run.
  ///
  /// Used when a source vanished after it was listed: with `--rm`, an overlapping run that
  /// compressed and removed it leaves exactly this behind.
  static func namesSource(_ target: RelativeLocation, sourceName: RawPath) -> Bool {
    guard let output = try? target.open(flags: O_RDONLY | O_NONBLOCK | O_NOCTTY),
      let status = try? output.status(), status.kind == .regular,
      let header = try? gzipHeader(of: output, size: status.size)
    else { return false }
    return header.name == sourceName.bytes
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
