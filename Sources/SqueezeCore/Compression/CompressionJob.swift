import CZlib
import Glibc

/// One file being compressed: its open source, its temporary output, and what is known about
/// both. Owned by the one task compressing the file; never shared.
///
/// Opening (``open(index:context:)``): open the source without following links and without
/// blocking on a FIFO, check it is the file discovery listed, decide what the existing
/// output (if any) means, and create the temporary in the output's folder. Finishing
/// (``finish(bytesRead:crc:)``): write the trailer, check the source did not change while it
/// was read, copy permission bits, times and (as root) owner, and close. On any failure, and
/// if the job is dropped unfinished, the temporary is removed: no partial output is ever left
/// under any name. Publishing the finished temporary is the ``Publisher``'s job.
final class CompressionJob {
  /// The run's shared, immutable state a compression reads.
  struct Context: Sendable {
    let list: FileList
    let bases: BaseDirectories
    let settings: CompressionSettings
    let namer: TemporaryNamer
    let publisher: Publisher
    let workspaces: WorkspacePool
    let stop: AtomicFlag
  }

  /// A finished temporary, ready to publish.
  struct Prepared: Sendable {
    /// What to hand the publisher.
    var request: Publisher.Request
    /// Source bytes read.
    var bytesIn: Int64
    /// Output bytes written (the whole gzip member).
    var bytesOut: Int64
  }

  /// What opening a file came to.
  enum Opening {
    /// The existing output is current: nothing to do.
    case upToDate(bytes: Int64)
    /// A job, ready to compress.
    case job(CompressionJob)
  }

  /// The source, open for reading.
  let input: Int32
  /// The source's status when it was opened; its size fixes the block layout.
  let before: FileStatus
  /// How the source is cut into blocks.
  let layout: BlockLayout
  /// The gzip header to write first.
  let header: [UInt8]
  /// The output path, for messages.
  let outputDisplay: RawPath
  private let temporary: RelativeLocation
  private let target: RelativeLocation
  private let replacesExisting: Bool
  /// The run's shared state.
  let context: Context
  /// The temporary, open for writing; -1 once closed.
  private var output: Int32
  /// Bytes written to the temporary so far.
  private(set) var bytesOut: Int64 = 0
  private var finished = false

  private init(
    input: Int32, before: FileStatus, layout: BlockLayout, header: [UInt8], outputDisplay: RawPath,
    temporary: RelativeLocation, target: RelativeLocation, replacesExisting: Bool, context: Context,
    output: Int32
  ) {
    self.input = input
    self.before = before
    self.layout = layout
    self.header = header
    self.outputDisplay = outputDisplay
    self.temporary = temporary
    self.target = target
    self.replacesExisting = replacesExisting
    self.context = context
    self.output = output
  }

  deinit {
    close(input)
    if output >= 0 { close(output) }
    if !finished { try? temporary.remove() }
  }

  /// Opens file `index` of the run's list for compression.
  ///
  /// - Returns: `.upToDate` when the existing output is current (and `--force` is off),
  ///   otherwise a job with its temporary created.
  /// - Throws: ``FileFailure`` naming the step and cause.
  static func open(index: Int, context: Context) throws(FileFailure) -> Opening {
    let list = context.list
    let file = list.files[index]
    let name = list.name(of: file)
    let settings = context.settings
    let source = RelativeLocation(
      base: context.bases.descriptor(list.root(of: file).base),
      directory: list.relativePath(ofDirectory: file.directory), name: name)
    let input = try openSource(source)
    var keepInput = false
    defer { if !keepInput { close(input) } }
    let before: FileStatus
    do {
      before = try statusOf(input)
    } catch {
      throw .cannotRead(error)
    }
    guard before.kind == .regular else { throw .notRegularFile(before.kind) }
    guard before.device == file.device && before.inode == file.inode else { throw .replaced }

    let target = settings.plan.target(of: file, in: list, bases: context.bases)
    let outputDisplay = settings.plan.displayPath(of: file, in: list)
    guard target.name.count <= 255 else {
      throw .outputNameTooLong(outputDisplay, bytes: target.name.count)
    }
    let existing: ExistingOutput
    do {
      existing = try ExistingOutput.inspect(target, sourceName: name, source: before)
    } catch {
      throw .cannotCreateOutput(outputDisplay, error)
    }
    switch existing {
    case .upToDate where !settings.force: return .upToDate(bytes: before.size)
    case .foreign where !settings.force: throw .outputExists(outputDisplay)
    default: break
    }

    let temporary = target.sibling(named: context.namer.next())
    let output = try createTemporary(
      temporary, folderPermissions: list.permissions(ofDirectory: file.directory),
      display: outputDisplay)
    let header = GzipHeader(
      name: settings.storesNameAndTime ? name.bytes : nil,
      modificationTime: settings.storesNameAndTime ? before.modificationTime : nil,
      level: settings.level)
    keepInput = true
    return .job(
      CompressionJob(
        input: input, before: before,
        layout: BlockLayout(blockSize: context.workspaces.blockSize, length: before.size),
        header: header.encoded, outputDisplay: outputDisplay, temporary: temporary, target: target,
        replacesExisting: existing != .absent, context: context, output: output))
  }

  /// Opens the source without following a link that replaced it and without blocking on a
  /// FIFO that did.
  private static func openSource(_ source: RelativeLocation) throws(FileFailure) -> Int32 {
    do {
      return try source.open(flags: O_RDONLY | O_NOCTTY | O_NONBLOCK).release()
    } catch {
      switch error.code {
      case ENOENT: throw .vanished
      case ELOOP: throw .becameSymbolicLink
      default: throw .cannotOpen(error)
      }
    }
  }

  private static func statusOf(_ descriptor: Int32) throws(SystemError) -> FileStatus {
    var raw = stat()
    _ = try retryingOnInterrupt { fstat(descriptor, &raw) }
    return FileStatus(raw)
  }

  /// Creates `temporary` exclusively with mode 0600 (nobody reads a partial output),
  /// creating missing folders of a mirror with the source folder's permission bits.
  static func createTemporary(
    _ temporary: RelativeLocation, folderPermissions: UInt16, display: RawPath
  ) throws(FileFailure) -> Int32 {
    let flags = O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY
    do {
      do throws(SystemError) {
        return try temporary.open(flags: flags, permissions: 0o600).release()
      } catch  where error.code == ENOENT && !temporary.directory.isEmpty {
        try temporary.createDirectories(permissions: mode_t(folderPermissions & 0o777) | 0o700)
        return try temporary.open(flags: flags, permissions: 0o600).release()
      }
    } catch {
      throw .cannotCreateOutput(display, error)
    }
  }

  /// Appends `bytes` to the temporary.
  ///
  /// - Throws: ``FileFailure/cannotWriteOutput(_:_:)`` (a full disk, a file-size limit).
  func write(_ bytes: UnsafeRawBufferPointer) throws(FileFailure) {
    var offset = 0
    while offset < bytes.count {
      let count = Glibc.write(output, bytes.baseAddress! + offset, bytes.count - offset)
      if count < 0 {
        if errno == EINTR { continue }
        throw .cannotWriteOutput(outputDisplay, SystemError.current)
      }
      offset += count
    }
    bytesOut += Int64(bytes.count)
  }

  /// Appends `bytes` to the temporary.
  ///
  /// - Throws: ``FileFailure/cannotWriteOutput(_:_:)``.
  func write(_ bytes: [UInt8]) throws(FileFailure) {
    // Array.withUnsafeBytes rethrows untyped: carry the typed error out by hand.
    var failure: FileFailure? = nil
    bytes.withUnsafeBytes { raw in
      do throws(FileFailure) { try write(raw) } catch { failure = error }
    }
    if let failure { throw failure }
  }

  /// Fails when the source grew past the length it had when opened: reading at that
  /// offset must find the end of the file.
  func checkNoGrowth() throws(FileFailure) {
    var probe: UInt8 = 0
    let count = pread(input, &probe, 1, off_t(layout.length))
    if count > 0 {
      throw .changedWhileReading("it grew past \(layout.length) bytes while being read")
    }
  }

  /// Writes the trailer, checks the source did not change, copies its metadata to the
  /// temporary and closes it.
  ///
  /// - Parameters:
  ///   - bytesRead: source bytes compressed.
  ///   - crc: their CRC-32.
  /// - Returns: what to hand the publisher.
  /// - Throws: ``FileFailure`` when the source changed or the temporary cannot be written.
  func finish(bytesRead: Int64, crc: UInt32) throws(FileFailure) -> Prepared {
    let trailer = GzipTrailer(crc: crc, uncompressedSize: bytesRead).encoded
    try write(trailer)
    try checkUnchanged(bytesRead: bytesRead)
    let settings = context.settings
    if settings.copiesOwnership { _ = fchown(output, before.userID, before.groupID) }
    // Failures to copy metadata are not fatal (gzip only warns): a wrong time only makes
    // the next run treat the output as stale.
    _ = fchmod(output, mode_t(before.permissions & 0o1777))
    var times = [before.accessTime.timespec, before.modificationTime.timespec]
    _ = futimens(output, &times)
    let device: UInt64
    do {
      device = try CompressionJob.statusOf(output).device
    } catch {
      throw .cannotWriteOutput(outputDisplay, error)
    }
    context.publisher.registerFileSystem(device, using: output)
    let descriptor = output
    output = -1
    if close(descriptor) != 0 && errno != EINTR {
      throw .cannotWriteOutput(outputDisplay, SystemError.current)
    }
    finished = true
    let request = Publisher.Request(
      temporary: temporary, final: target, replacesExisting: replacesExisting, device: device)
    return Prepared(request: request, bytesIn: bytesRead, bytesOut: bytesOut)
  }

  /// Fails when the source changed while it was read: its size or modification time now
  /// differ from when it was opened, or the bytes read differ from its size then.
  private func checkUnchanged(bytesRead: Int64) throws(FileFailure) {
    let after: FileStatus
    do {
      after = try CompressionJob.statusOf(input)
    } catch {
      throw .cannotRead(error)
    }
    if bytesRead != before.size {
      throw .changedWhileReading(
        "it was \(before.size) bytes when opened, \(bytesRead) bytes could be read")
    }
    if after.size != before.size {
      throw .changedWhileReading("its size went from \(before.size) to \(after.size) bytes")
    }
    if after.modificationTime != before.modificationTime {
      throw .changedWhileReading("it was modified during compression")
    }
  }
}
