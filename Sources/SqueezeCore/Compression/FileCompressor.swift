import CZlib
import Glibc

/// Compresses one file into a finished temporary beside its output: synchronous,
/// `nonisolated` work with `Sendable` inputs and outputs, run by whichever task the
/// isolation mode chooses (spec §2, "Compression").
///
/// Steps: open the source without following links, check it is the file that was listed,
/// decide what the existing output (if any) means, stream the source through deflate into
/// a temporary in the output's folder with bounded buffers (a gzip member: RFC 1952 header,
/// raw deflate stream, CRC-32 and ISIZE trailer), check the source did not change while it
/// was read, copy its permission bits, times and (as root) owner, and close. Publishing the
/// temporary under its final name is the ``Publisher``'s job. On any failure the temporary is
/// removed before the error is thrown: no partial output is left under any name.
enum FileCompressor {
  /// A compressed temporary, ready to publish.
  struct Prepared: Sendable {
    /// What to hand the publisher.
    var request: Publisher.Request
    /// Source bytes read.
    var bytesIn: Int64
    /// Output bytes written (the whole gzip member).
    var bytesOut: Int64
  }

  /// What preparing a file came to.
  enum Result: Sendable {
    /// A temporary is ready to publish.
    case prepared(Prepared)
    /// The existing output is current: nothing written.
    case upToDate(bytes: Int64)
  }

  /// The per-run things a compression reads.
  struct Context: Sendable {
    let list: FileList
    let bases: BaseDirectories
    let settings: CompressionSettings
    let namer: TemporaryNamer
    let publisher: Publisher
    let workspaces: WorkspacePool
    let stop: AtomicFlag
  }

  /// Compresses file `index` of the list into a temporary.
  ///
  /// - Parameters:
  ///   - index: the file's index in `context.list.files`.
  ///   - context: the run's shared state.
  ///   - progress: called with each count of source bytes consumed.
  /// - Returns: the temporary to publish, or `.upToDate`.
  /// - Throws: ``FileFailure`` naming the step and cause; no temporary remains.
  static func prepare(
    index: Int, context: Context, progress: (Int) -> Void
  ) throws(FileFailure) -> Result {
    let list = context.list
    let file = list.files[index]
    let name = list.name(of: file)
    let root = list.root(of: file)
    let source = RelativeLocation(
      base: context.bases.descriptor(root.base),
      directory: list.relativePath(ofDirectory: file.directory),
      name: name)
    let settings = context.settings

    let input = try openSource(source)
    let before: FileStatus
    do {
      before = try input.status()
    } catch {
      throw .cannotRead(error)
    }
    guard before.kind == .regular else { throw .notRegularFile(before.kind) }
    guard before.device == file.device && before.inode == file.inode else { throw .replaced }

    // The output's name and what is there now.
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

    // The temporary, in the output's folder (created for a mirror when missing).
    let temporary = target.sibling(named: context.namer.next())
    let output = try createTemporary(
      temporary, permissionsOfFolder: list.permissions(ofDirectory: file.directory),
      display: outputDisplay)
    let header = GzipHeader(
      name: settings.storesNameAndTime ? name.bytes : nil,
      modificationTime: settings.storesNameAndTime ? before.modificationTime : nil,
      level: settings.level)
    do throws(FileFailure) {
      let (bytesIn, bytesOut, device) = try writeMember(
        from: input, before: before, to: output, header: header, context: context,
        outputDisplay: outputDisplay, progress: progress)
      let request = Publisher.Request(
        temporary: temporary, final: target, replacesExisting: existing != .absent, device: device)
      return .prepared(Prepared(request: request, bytesIn: bytesIn, bytesOut: bytesOut))
    } catch {
      try? temporary.remove()
      throw error
    }
  }

  /// Opens the source without following a link that replaced it and without blocking on a
  /// FIFO that did.
  static func openSource(_ source: RelativeLocation) throws(FileFailure) -> FileDescriptor {
    do {
      return try source.open(flags: O_RDONLY | O_NOCTTY | O_NONBLOCK)
    } catch {
      switch error.code {
      case ENOENT: throw .vanished
      case ELOOP: throw .becameSymbolicLink
      default: throw .cannotOpen(error)
      }
    }
  }

  /// Compresses the open source into the open temporary, checks the source did not change,
  /// copies metadata and closes the temporary (consumed on every path).
  ///
  /// - Returns: bytes read, bytes written, and the temporary's device.
  static func writeMember(
    from input: borrowing FileDescriptor, before: FileStatus, to output: consuming FileDescriptor,
    header: GzipHeader, context: Context, outputDisplay: RawPath, progress: (Int) -> Void
  ) throws(FileFailure) -> (bytesIn: Int64, bytesOut: Int64, device: UInt64) {
    let (bytesIn, bytesOut) = try context.workspaces.withWorkspace {
      (workspace) throws(FileFailure) in
      try compressStream(
        from: input, to: output, header: header.encoded, workspace: workspace,
        outputDisplay: outputDisplay, stop: context.stop, progress: progress)
    }
    try checkUnchanged(input: input, before: before, bytesRead: bytesIn)
    let device = try copyMetadata(
      from: before, to: output, settings: context.settings, outputDisplay: outputDisplay)
    context.publisher.registerFileSystem(device, using: output.rawValue)
    do {
      try output.close()
    } catch {
      throw .cannotWriteOutput(outputDisplay, error)
    }
    return (bytesIn, bytesOut, device)
  }

  /// Creates `temporary` exclusively with mode 0600 (nobody reads a partial output),
  /// creating missing folders of a mirror with the source folder's permission bits.
  static func createTemporary(
    _ temporary: RelativeLocation, permissionsOfFolder: UInt16, display: RawPath
  ) throws(FileFailure) -> FileDescriptor {
    let flags = O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY
    do {
      do throws(SystemError) {
        return try temporary.open(flags: flags, permissions: 0o600)
      } catch  where error.code == ENOENT && !temporary.directory.isEmpty {
        try temporary.createDirectories(permissions: mode_t(permissionsOfFolder & 0o777) | 0o700)
        return try temporary.open(flags: flags, permissions: 0o600)
      }
    } catch {
      throw .cannotCreateOutput(display, error)
    }
  }

  /// Streams `input` through deflate into `output` as one gzip member, in buffers of
  /// ``CompressionWorkspace/inputCapacity`` bytes: memory does not grow with the file.
  ///
  /// - Returns: source bytes read and member bytes written.
  /// - Throws: ``FileFailure`` for read, write and zlib errors, and `.interrupted` when
  ///   `stop` is set between buffers.
  static func compressStream(
    from input: borrowing FileDescriptor, to output: borrowing FileDescriptor, header: [UInt8],
    workspace: CompressionWorkspace, outputDisplay: RawPath, stop: AtomicFlag,
    progress: (Int) -> Void
  ) throws(FileFailure) -> (bytesIn: Int64, bytesOut: Int64) {
    let buffer = workspace.output
    var used = 0
    var bytesOut: Int64 = 0
    func flush() throws(FileFailure) {
      do {
        try output.writeAll(UnsafeRawBufferPointer(rebasing: buffer[..<used]))
      } catch {
        throw .cannotWriteOutput(outputDisplay, error)
      }
      bytesOut += Int64(used)
      used = 0
    }
    func append(_ bytes: [UInt8]) throws(FileFailure) {
      if buffer.count - used < bytes.count { try flush() }
      bytes.withUnsafeBytes { raw in
        UnsafeMutableRawBufferPointer(rebasing: buffer[used..<(used + raw.count)]).copyMemory(
          from: raw)
      }
      used += bytes.count
    }
    try append(header)
    var crc = CRC32()
    var bytesIn: Int64 = 0
    var finished = false
    while !finished {
      if stop.isSet || Task.isCancelled { throw .interrupted }
      let count: Int
      do {
        count = try input.readFully(into: workspace.input)
      } catch {
        throw .cannotRead(error)
      }
      let chunk = UnsafeRawBufferPointer(rebasing: workspace.input[..<count])
      crc.update(chunk)
      bytesIn += Int64(count)
      let mode = count < workspace.input.count ? Z_FINISH : Z_NO_FLUSH
      var consumed = 0
      while true {
        if buffer.count - used < 1024 { try flush() }
        let step: (consumed: Int, produced: Int, finished: Bool)
        do {
          step = try workspace.deflater.deflate(
            input: UnsafeRawBufferPointer(rebasing: chunk[consumed...]),
            output: UnsafeMutableRawBufferPointer(rebasing: buffer[used...]), flush: mode)
        } catch {
          throw .zlib(error)
        }
        consumed += step.consumed
        used += step.produced
        if step.finished {
          finished = true
          break
        }
        if mode == Z_NO_FLUSH && consumed == count { break }
      }
      if count > 0 { progress(count) }
    }
    try append(GzipTrailer(crc: crc.value, uncompressedSize: bytesIn).encoded)
    try flush()
    return (bytesIn, bytesOut)
  }

  /// Fails when the source changed while it was read: its size or modification time now
  /// differ from when it was opened, or the bytes read differ from its size then.
  static func checkUnchanged(
    input: borrowing FileDescriptor, before: FileStatus, bytesRead: Int64
  ) throws(FileFailure) {
    let after: FileStatus
    do {
      after = try input.status()
    } catch {
      throw .cannotRead(error)
    }
    if bytesRead != before.size {
      throw .changedWhileReading(
        "size was \(before.size) bytes when opened, \(bytesRead) bytes were read")
    }
    if after.size != before.size {
      throw .changedWhileReading("size went from \(before.size) to \(after.size) bytes")
    }
    if after.modificationTime != before.modificationTime {
      throw .changedWhileReading("it was modified during compression")
    }
  }

  /// Gives the output the source's owner and group (as root), permission bits without
  /// setuid and setgid, and access and modification times (nanoseconds), as gzip does.
  /// Failures to copy metadata are not fatal (gzip only warns); a wrong time only makes the
  /// next run treat the output as stale.
  ///
  /// - Returns: the output's device, for the publisher's sync.
  static func copyMetadata(
    from source: FileStatus, to output: borrowing FileDescriptor, settings: CompressionSettings,
    outputDisplay: RawPath
  ) throws(FileFailure) -> UInt64 {
    if settings.copiesOwnership {
      _ = fchown(output.rawValue, source.userID, source.groupID)
    }
    _ = fchmod(output.rawValue, mode_t(source.permissions & 0o1777))
    var times = [source.accessTime.timespec, source.modificationTime.timespec]
    _ = futimens(output.rawValue, &times)
    do {
      return try output.status().device
    } catch {
      throw .cannotWriteOutput(outputDisplay, error)
    }
  }
}
