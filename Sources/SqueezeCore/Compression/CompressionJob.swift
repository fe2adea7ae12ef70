import SqueezeEngines
import SqueezeGzip
import SqueezeSystem

/// The run's shared, immutable state every file job reads. A class, so handing it to a
/// job costs one reference count rather than a copy of every field.
final class JobContext: Sendable {
  let list: FileList
  let bases: BaseDirectories
  let settings: FileSettings
  let namer: TemporaryNamer
  let publisher: Publisher
  let workspaces: WorkspacePool
  let decoders: DecoderPool
  let stop: AtomicFlag
  /// Removes stale temporaries from output folders of a mirror.
  let cleaner: TemporaryCleaner
  /// The open folders outputs are written in.
  let outputFolders = FolderHandleCache()
  /// What the plan found at each file's output path (``FileDisposition/work(existing:)``),
  /// or nil when each job inspects for itself.
  let plan: RunPlan?

  init(
    list: FileList, bases: BaseDirectories, settings: FileSettings,
    namer: TemporaryNamer, publisher: Publisher, workspaces: WorkspacePool,
    decoders: DecoderPool, stop: AtomicFlag, cleaner: TemporaryCleaner, plan: RunPlan? = nil
  ) {
    self.plan = plan
    self.list = list
    self.bases = bases
    self.settings = settings
    self.namer = namer
    self.publisher = publisher
    self.workspaces = workspaces
    self.decoders = decoders
    self.stop = stop
    self.cleaner = cleaner
  }

  /// What sits at file `index`'s output path `target`: the plan's finding, or (without a
  /// plan) the file system's now.
  ///
  /// - Throws: ``SystemError`` when it cannot be examined.
  func existing(
    at target: RelativeLocation, of index: Int, sourceName: RawPath, source: FileStatus
  ) throws(SystemError) -> ExistingOutput {
    if case .work(let existing?) = plan?.dispositions[index] { return existing }
    return try ExistingOutput.inspect(
      target, sourceName: sourceName, source: source, inMirror: settings.inMirror,
      sourceOwner: settings.copiesOwnership ? { (source.userID, source.groupID) } : nil,
      nameless: !settings.usesHeaderNameAndTime)
  }

  /// Creates the temporary for `target` (after cleaning the folder of a mirror of stale
  /// temporaries, once per folder and run).
  func temporaryOutput(
    for target: RelativeLocation, display: MessagePath, replacesExisting: Bool,
    folderPermissions: UInt16, permissions: UInt32 = CreationPermissions.ownerOnly,
    holds: Bool = false
  ) throws(FileFailure) -> TemporaryOutput {
    if case .mirror = settings.plan.destination { cleaner.cleanOnce(folderOf: target) }
    // Unnamed (O_TMPFILE) where it is linked straight under its final name: not when it
    // waits under a temporary name for a folder's place (held), and not with --rm, whose
    // check reads the output back by name before the source goes.
    return try TemporaryOutput(
      target: target, display: display, replacesExisting: replacesExisting, namer: namer,
      folders: outputFolders, folderPermissions: folderPermissions, permissions: permissions,
      unnamed: !holds && !settings.removesSources)
  }
}

/// One file being compressed: its open source and its temporary output. Owned by the one
/// task compressing the file; never shared.
///
/// Opening (``open(index:context:)``): open the source safely (``SourceFile``), decide what
/// the existing output (if any) means (``ExistingOutput``), create the temporary
/// (``TemporaryOutput``). Finishing (``finish(bytesRead:crc:)``): write the trailer, check
/// the source did not change while it was read, give the output the source's metadata,
/// close it. The compression itself is ``compressSerially(workspace:progress:)`` or, chunk
/// by chunk, ``compressChunk(index:range:isLast:of:descriptor:workspace:)``.
final class CompressionJob {
  /// What opening a file came to.
  enum Opening {
    /// The existing output is current: nothing to do.
    case upToDate(bytes: Int64)
    /// A job, ready to compress.
    case job(CompressionJob)
  }

  /// The source, open for reading.
  let input: Int32
  /// The source's status when it was opened; its size fixes the chunk layout.
  let before: FileStatus
  /// Where the source is (for `--rm`).
  let source: RelativeLocation
  /// How the source is cut into chunks.
  let layout: ChunkLayout
  /// The gzip header to write first.
  let gzipHeader: GzipHeader
  /// Its bytes (serial compression writes them straight into its output buffer instead).
  var header: [UInt8] { gzipHeader.encoded }
  /// The output being written.
  let output: TemporaryOutput
  /// The output's file system when it is known without asking (beside the source: the
  /// source folder's), or nil.
  let outputDevice: UInt64?
  /// A folder is in the way of the output: it is made durable under its temporary name and
  /// takes the folder's place later (``HeldReplacement``).
  let holdsOutput: Bool
  /// The source is copied as stored blocks (a compressed name in a mirror), not deflated.
  let storesOnly: Bool
  /// The run's shared state.
  let context: JobContext

  private init(
    source: SourceFile, layout: ChunkLayout, header: GzipHeader, output: TemporaryOutput,
    outputDevice: UInt64?, context: JobContext, holdsOutput: Bool, storesOnly: Bool
  ) {
    self.outputDevice = outputDevice
    self.holdsOutput = holdsOutput
    self.storesOnly = storesOnly
    input = source.descriptor
    before = source.status
    self.source = source.location
    self.layout = layout
    gzipHeader = header
    self.output = output
    self.context = context
  }

  deinit {
    Descriptor.close(input)
  }

  /// The output path, for messages.
  var outputDisplay: RawPath { output.display.path }

  /// Opens file `index` of the run's list for compression.
  ///
  /// - Returns: `.upToDate` when the existing output is current (and `--force` is off),
  ///   otherwise a job with its temporary created.
  /// - Throws: ``FileFailure`` naming the step and cause.
  static func open(index: Int, context: JobContext) throws(FileFailure) -> Opening {
    let list = context.list
    let file = list.files[index]
    let name = list.name(of: file)
    let settings = context.settings
    let outputName = name.addingSuffix(settings.plan.naming.suffix)
    let target = settings.plan.target(named: outputName, of: file, in: list, bases: context.bases)
    let source: SourceFile
    do {
      source = try SourceFile.open(
        index: index, list: list, bases: context.bases, symlinks: settings.sourceSymlinks,
        name: name)
    } catch .vanished where settings.removesSources {
      // Two --rm runs at once (a cron job overlapping the last one): the other run
      // compressed this file and removed it. Its output, naming this source, is the proof.
      if ExistingOutput.namesSource(target, sourceName: name) { return .upToDate(bytes: 0) }
      throw .vanished
    }
    var keepInput = false
    defer { if !keepInput { Descriptor.close(source.descriptor) } }

    let display = MessagePath(outputNamed: outputName, ofFile: index, context: context)
    guard outputName.count <= 255 else {
      throw .outputNameTooLong(display.path, bytes: outputName.count)
    }
    let existing: ExistingOutput
    if case .besideSources = settings.plan.destination, !file.outputListedBeside {
      // Not there when the folder was listed; if it appears meanwhile, publishing (with
      // RENAME_NOREPLACE) finds it and judges it then.
      existing = .absent
    } else {
      do {
        existing = try context.existing(
          at: target, of: index, sourceName: name, source: source.status)
      } catch {
        throw .cannotCreateOutput(display.path, error)
      }
    }
    switch existing {
    // With --rm an up-to-date output is written again, so the source is removed only after an
    // output this run made durable and verified.
    case .upToDate where !settings.force && !settings.removesSources:
      return .upToDate(bytes: source.status.size)
    case .foreign where !settings.force: throw settings.foreignOutputFailure(display.path)
    case .inTheWay(let kind): throw .outputInTheWay(display.path, kind)
    case .folderInTheWay(empty: false) where !settings.deletes:
      throw .folderNotEmpty(display.path)
    default: break
    }
    let holds: Bool
    if case .folderInTheWay = existing { holds = true } else { holds = false }
    let output = try context.temporaryOutput(
      for: target, display: display, replacesExisting: existing != .absent && !holds,
      folderPermissions: list.permissions(ofDirectory: file.directory),
      permissions: CreationPermissions.forOutput(
        final: source.status.permissions, directory: file.directory, of: list,
        plan: settings.plan), holds: holds)
    let header = GzipHeader(
      name: settings.usesHeaderNameAndTime ? name.bytes : nil,
      modificationTime: settings.usesHeaderNameAndTime ? source.status.modificationTime : nil,
      level: settings.level)
    keepInput = true
    return .job(
      CompressionJob(
        source: source,
        layout: ChunkLayout(
          chunking: context.workspaces.chunking, length: source.status.size,
          dictionarySize: context.workspaces.engine.chunkDictionarySize),
        header: header, output: output,
        outputDevice: settings.knownOutputDevice(of: file, in: list),
        context: context, holdsOutput: holds, storesOnly: settings.stores(name)))
  }

  /// Fails when the source grew past the length it had when opened: reading at that
  /// offset must find the end of the file.
  func checkNoGrowth() throws(FileFailure) {
    var probe: UInt8 = 0
    let found = withUnsafeMutableBytes(of: &probe) { raw in
      (try? Descriptor.read(input, into: raw, at: layout.length)) ?? 0
    }
    if found > 0 {
      throw .changedWhileReading("it grew past \(layout.length) bytes while being read")
    }
  }

  /// Writes the trailer (unless the caller did), checks the source did not change (unless it
  /// was read whole by one `read`, which is one state of the file), verifies the output by
  /// decompressing it when the source is to be removed (`--rm`), and closes it with the
  /// source's metadata.
  ///
  /// - Parameters:
  ///   - bytesRead: source bytes compressed.
  ///   - crc: their CRC-32.
  /// - Returns: what to hand the publisher.
  /// - Throws: ``FileFailure`` when the source changed or the output cannot be written or
  ///   does not verify.
  func finish(
    bytesRead: Int64, crc: UInt32, trailerWritten: Bool = false, readAtOnce: Bool = false
  ) throws(FileFailure) -> PreparedOutput {
    if !trailerWritten {
      try output.write(GzipTrailer(crc: crc, uncompressedSize: bytesRead).encoded)
    }
    if !readAtOnce { try checkUnchanged(bytesRead: bytesRead) }
    let settings = context.settings
    // With --rm the new name must be on disk before the source goes: a second commit
    // after the rename.
    let request = try output.finish(
      metadataFrom: before, modificationTime: before.modificationTime,
      copiesOwnership: settings.copiesOwnership, publisher: context.publisher,
      knownDevice: outputDevice, syncsAfterRename: settings.removesSources,
      holdsTemporary: holdsOutput)
    var removal: Removal? = nil
    if settings.removesSources {
      do throws(FileFailure) {
        try Verification.verify(
          request.temporary, expectedLength: bytesRead, expectedCRC: crc,
          display: output.display.path,
          decoders: context.decoders)
      } catch {
        // The output was handed over (closed, its metadata set) but will not be published:
        // nobody else removes its temporary.
        try? request.temporary.remove()
        throw error
      }
      removal = Removal(source: source, status: before)
    }
    return PreparedOutput(
      request: request, bytesIn: bytesRead, bytesOut: output.bytesWritten,
      outputDisplay: output.display, removal: removal,
      recheck: Recheck(
        target: output.target,
        expected: .output(
          sourceName: source.name, source: before, nameless: !settings.usesHeaderNameAndTime)),
      held: holdsOutput
        ? HeldReplacement(
          temporary: request.temporary, final: request.final, display: output.display.path,
          removal: removal)
        : nil)
  }

  /// Fails when the source changed while it was read: its size or modification time now
  /// differ from when it was opened, or the bytes read differ from its size then.
  private func checkUnchanged(bytesRead: Int64) throws(FileFailure) {
    let after: FileStatus
    do throws(SystemError) {
      after = try Descriptor.status(input)
    } catch {
      throw .cannotRead(error)
    }
    // A size of 0 with content is a file whose size the kernel does not know (/proc); any
    // other difference means the file changed.
    if bytesRead != before.size && !(before.size == 0 && after.size == 0) {
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
