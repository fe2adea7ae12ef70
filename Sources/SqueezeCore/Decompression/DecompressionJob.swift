import SqueezeGzip
import SqueezeSystem

/// Restores one gzip file (`-d`): every member decoded in turn into a temporary beside the
/// output, checked (CRC-32 and ISIZE of each member), given the `.gz` file's permission bits
/// and times (or, with `-N`, the name and time stored in the header, as gzip does), and
/// handed to the publisher. Corrupt or truncated input fails with a clear error and leaves no
/// output. An existing file is never overwritten without `-f`.
enum DecompressionJob {
  /// A file opened for restoring: its source, open for reading, and its temporary output.
  /// The caller closes ``source``'s descriptor.
  struct Opened {
    /// The `.gz` file, open.
    let source: SourceFile
    /// Where the restored bytes go.
    let output: TemporaryOutput
    /// The output's modification time from the header (`-N`), or nil for the `.gz` file's.
    let headerTime: Timestamp?
    /// The output, for messages.
    let display: MessagePath
    /// A folder is in the way of the output: it is made durable under its temporary name
    /// and takes the folder's place later (``HeldReplacement``).
    let holds: Bool
    /// The output's file system when it is known without asking (beside the source, links
    /// not followed: the source folder's device), or nil.
    let outputDevice: UInt64?
  }

  /// Decompresses file `index` of the run's list into a temporary, serially.
  ///
  /// - Parameter progress: called with each count of compressed bytes read.
  /// - Returns: what to hand the publisher.
  /// - Throws: ``FileFailure`` naming the step and cause.
  static func run(index: Int, context: JobContext, progress: (Int) -> Void) throws(FileFailure)
    -> PreparedOutput
  {
    let opened = try open(index: index, context: context)
    defer { Descriptor.close(opened.source.descriptor) }
    let decoded = try context.decoders.withWorkspace { (workspace) throws(FileFailure) in
      try GzipFileReader.decodeFile(
        opened.source.descriptor, knownSize: opened.source.status.size, workspace: workspace,
        stop: context.stop, progress: progress,
        restart: { () throws(FileFailure) in try opened.output.rewind() }
      ) { (chunk) throws(FileFailure) in
        try opened.output.write(chunk)
      }
    }
    return try finish(
      opened, bytesIn: decoded.decoder.offset, bytesOut: decoded.decoder.totalOutput,
      readAtOnce: decoded.readAtOnce, context: context)
  }

  /// Opens file `index` for restoring: the source, the output's name (from the suffix, or
  /// with `-N` from the header), the check for an existing file, and the temporary.
  ///
  /// - Throws: ``FileFailure`` naming the step and cause; nothing is left open then.
  static func open(index: Int, context: JobContext) throws(FileFailure) -> Opened {
    let list = context.list
    let file = list.files[index]
    let settings = context.settings
    let source = try SourceFile.open(
      index: index, list: list, bases: context.bases, symlinks: settings.sourceSymlinks)
    var keep = false
    defer { if !keep { Descriptor.close(source.descriptor) } }
    guard var outputName = settings.plan.outputName(for: list.name(of: file)) else {
      throw .unknownSuffix
    }
    var headerTime: Timestamp? = nil
    if settings.usesHeaderNameAndTime {
      let header = try readHeader(source.descriptor)
      if let stored = try storedName(in: header) { outputName = stored }
      if header.modificationTime != 0 {
        headerTime = Timestamp(seconds: Int64(header.modificationTime), nanoseconds: 0)
      }
    }
    let target = settings.plan.target(named: outputName, of: file, in: list, bases: context.bases)
    let display = MessagePath(outputNamed: outputName, ofFile: index, context: context)
    guard !outputName.isEmpty else { throw .unknownSuffix }
    let existing = try existingRestore(
      at: target, of: index, source: FileIdentity(source.status), display: display,
      context: context)
    let holds: Bool
    if case .folderInTheWay = existing { holds = true } else { holds = false }
    // Created with the restored file's final mode when open(2) gives exactly that, as
    // compression does: no fchmod per file.
    let output = try context.temporaryOutput(
      for: target, display: display, replacesExisting: existing != .absent && !holds,
      folderPermissions: list.permissions(ofDirectory: file.directory),
      permissions: CreationPermissions.forOutput(
        final: source.status.permissions, directory: file.directory, of: list,
        plan: settings.plan), holds: holds)
    keep = true
    return Opened(
      source: source, output: output, headerTime: headerTime, display: display, holds: holds,
      outputDevice: settings.knownOutputDevice(of: file, in: list))
  }

  /// Finishes a restored file: checks the `.gz` file did not change while it was read,
  /// gives the output its metadata, and says what to publish (and remove, with `--rm`).
  ///
  /// - Parameters:
  ///   - bytesIn: compressed bytes read.
  ///   - bytesOut: bytes restored.
  ///   - readAtOnce: one `read(2)` returned the whole file, exactly its size when opened:
  ///     one state of the file, so its size and time are not checked again.
  /// - Throws: ``FileFailure`` when the source changed or the output cannot be finished.
  static func finish(
    _ opened: Opened, bytesIn: Int64, bytesOut: Int64, readAtOnce: Bool = false,
    context: JobContext
  ) throws(FileFailure) -> PreparedOutput {
    let source = opened.source
    let settings = context.settings
    if !readAtOnce, let after = try? Descriptor.status(source.descriptor),
      after.size != source.status.size
        || after.modificationTime != source.status.modificationTime
    {
      throw .changedWhileReading("it was modified during decompression")
    }
    // With --rm the new name must be on disk before the source goes: a second commit
    // after the rename.
    let request = try opened.output.finish(
      metadataFrom: source.status,
      modificationTime: opened.headerTime ?? source.status.modificationTime,
      copiesOwnership: settings.copiesOwnership, publisher: context.publisher,
      knownDevice: opened.outputDevice, syncsAfterRename: settings.removesSources,
      holdsTemporary: opened.holds)
    var removal: Removal? = nil
    if settings.removesSources {
      // Decoding checked every member's CRC-32 and ISIZE: the output is verified.
      removal = Removal(source: source.location, status: source.status)
    }
    // Another restore into the same folder (an overlapping run) may publish this file
    // first: it is as good as this one when a restore re-run would keep it.
    let restored = FileStatus(
      device: 0, inode: 0, mode: FileStatus.regularFileType | source.status.permissions,
      linkCount: 1, size: bytesOut,
      modificationTime: opened.headerTime ?? source.status.modificationTime)
    let owner =
      settings.copiesOwnership
      ? Recheck.Owner(user: source.status.userID, group: source.status.groupID) : nil
    return PreparedOutput(
      request: request, bytesIn: bytesIn, bytesOut: bytesOut,
      outputDisplay: opened.display, removal: removal,
      recheck: Recheck(
        target: opened.output.target, expected: .restored(status: restored, owner: owner)),
      held: opened.holds
        ? HeldReplacement(
          temporary: request.temporary, final: request.final, display: opened.display.path,
          removal: removal)
        : nil)
  }

  /// What sits where file `index` is restored, and whether the restore may go on: the
  /// plan's finding (``OutputInspection``), or without one (`-N`, where the name comes from
  /// the header), any file there unless `--force`. An up-to-date file only reaches here
  /// with `--rm` (whose quick check is never trusted: the file is written again, so the
  /// `.gz` is removed only after decoded bytes are published). Whatever is there, it is never
  /// the `.gz` file `source` itself (``ExistingOutput/isSource(_:source:)``), not even with
  /// `--force`.
  ///
  /// - Throws: ``FileFailure`` for a file left alone: ``FileFailure/outputIsSource(_:)``
  ///   when the output path is the source.
  private static func existingRestore(
    at target: RelativeLocation, of index: Int, source: FileIdentity, display: MessagePath,
    context: JobContext
  ) throws(FileFailure) -> ExistingOutput {
    let settings = context.settings
    let existing: ExistingOutput
    if case .work(let planned?) = context.plan?.dispositions[index] {
      existing = planned
    } else {
      do throws(SystemError) {
        existing = try ExistingOutput.inspectUnplannedRestore(target, inMirror: settings.inMirror)
      } catch {
        throw .cannotCreateOutput(display.path, error)
      }
    }
    if existing != .absent, ExistingOutput.isSource(target, source: source) {
      throw .outputIsSource(display.path)
    }
    switch existing {
    case .foreign where !settings.force: throw .outputAlreadyExists(display.path)
    case .inTheWay(let kind): throw .outputInTheWay(display.path, kind)
    case .folderInTheWay(empty: false): throw .folderNotEmpty(display.path)
    default: return existing
    }
  }

  /// The name in file `index`'s header that `-d -N` restores it under (``storedName(in:)``),
  /// read from the file as ``open(index:context:)`` reads it, or nil when the header gives
  /// none that can name a file (the name without the suffix is used then). The plan reads it
  /// to find two files whose headers name one file, and a dry run to name the output.
  ///
  /// - Throws: ``FileFailure`` when the file cannot be opened, its header read, or its name
  ///   is too long: what the run fails the file with.
  static func headerName(
    of index: Int, list: FileList, bases: BaseDirectories, settings: FileSettings
  ) throws(FileFailure) -> RawPath? {
    let source = try SourceFile.open(
      index: index, list: list, bases: bases, symlinks: settings.sourceSymlinks)
    defer { Descriptor.close(source.descriptor) }
    return try storedName(in: readHeader(source.descriptor))
  }

  /// The first member's header, read with `pread` (the file position stays at 0).
  static func readHeader(_ descriptor: Int32) throws(FileFailure) -> GzipHeader {
    try readHeaderAndLength(descriptor).header
  }

  /// The first member's header and its length in bytes (where its deflate data starts),
  /// read with `pread` (the file position stays at 0) in 64 KiB pieces, so a header of any
  /// length is read in bounded memory (``GzipHeaderReader``).
  ///
  /// - Throws: ``FileFailure/badGzip(_:)`` for an empty, truncated or invalid header,
  ///   ``FileFailure/cannotRead(_:)``.
  static func readHeaderAndLength(_ descriptor: Int32) throws(FileFailure) -> (
    header: GzipHeader, length: Int
  ) {
    var reader = GzipHeaderReader()
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    var offset: Int64 = 0
    while true {
      // Array.withUnsafeMutableBytes rethrows untyped: carry the typed error out by hand.
      var failure: SystemError? = nil
      let count = buffer.withUnsafeMutableBytes { raw -> Int in
        do throws(SystemError) {
          return try Descriptor.read(descriptor, into: raw, at: offset)
        } catch {
          failure = error
          return 0
        }
      }
      if let failure { throw .cannotRead(failure) }
      guard count > 0 else { throw .badGzip(offset == 0 ? .empty : .truncated(offset: offset)) }
      let (parsed, _) = buffer.withUnsafeBytes {
        reader.read(UnsafeRawBufferPointer(rebasing: $0[..<count]))
      }
      switch parsed {
      case .header(let header, let length): return (header, length)
      case .needMoreData: offset += Int64(count)
      case .invalid(let error): throw .badGzip(error)
      }
    }
  }

  /// The header's name for `-N`, when it can name a file: its last component, as gzip and
  /// pigz take it (`../../x` and `/tmp/x` restore as `x` where the `.gz` file's own output
  /// would go; a header never steers output into another folder). Nil when there is none, or when that
  /// component cannot name a file (``isSafeName(_:)``: empty, as in `x/`, or `.` or `..`),
  /// and the `.gz` file's own name is used then.
  ///
  /// - Throws: ``FileFailure/storedNameTooLong(bytes:)`` for a name longer than a file name
  ///   can be (``GzipHeader/longestKeptName``).
  static func storedName(in header: GzipHeader) throws(FileFailure) -> RawPath? {
    guard header.nameLength <= GzipHeader.longestKeptName else {
      throw .storedNameTooLong(bytes: header.nameLength)
    }
    guard let name = header.name else { return nil }
    // What follows the last slash: the whole name when it has none.
    let start = name.lastIndex(of: UInt8(ascii: "/")).map { $0 + 1 } ?? name.startIndex
    let last = RawPath(bytes: Array(name[start...]))
    return isSafeName(last) ? last : nil
  }

  /// Whether `component` (a stored name's last component, so it has no `/`, and no longer
  /// than the name ``storedName(in:)`` has already held to 255 bytes) can name a restored
  /// file: not empty, not `.` or `..`.
  static func isSafeName(_ component: RawPath) -> Bool {
    !component.isEmpty && component != "." && component != ".."
  }
}

/// Checks one gzip file (`-t`): every member's header, deflate data, CRC-32 and ISIZE,
/// writing nothing.
enum TestJob {
  /// Tests file `index` of the run's list.
  ///
  /// - Returns: compressed and uncompressed byte counts.
  /// - Throws: ``FileFailure`` naming the fault.
  static func run(index: Int, context: JobContext, progress: (Int) -> Void) throws(FileFailure)
    -> (bytesIn: Int64, bytesOut: Int64)
  {
    let source = try SourceFile.open(
      index: index, list: context.list, bases: context.bases,
      symlinks: context.settings.sourceSymlinks, stop: context.stop)
    defer { Descriptor.close(source.descriptor) }
    let decoder = try context.decoders.withWorkspace { (workspace) throws(FileFailure) in
      try GzipFileReader.decode(
        source.descriptor, workspace: workspace, stop: context.stop, progress: progress,
        restart: {}
      ) { _ in }
    }
    return (decoder.offset, decoder.totalOutput)
  }
}
