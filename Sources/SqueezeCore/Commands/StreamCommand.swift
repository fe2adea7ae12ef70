import SqueezeGzip
import SqueezeSystem

/// `squeeze -c` and standard input: compress, decompress or test standard input or
/// the named files (folders walked) into standard output, as gzip does
/// (`tar c dir | squeeze > dir.tar.gz`, `squeeze -dc x.gz | less`). Files are written one
/// after another as concatenated members; each is compressed chunk-parallel. A regular file
/// (named, or standard input redirected from one) restores or tests chunk-parallel too
/// (`ChunkedFileRestore`); a pipe is read once, front to back, on one core.
package struct StreamCommand {
  /// The run's configuration, resolved once.
  let configuration: RunConfiguration
  /// The folders discovery opened, shared by every input.
  private let bases = BaseDirectories()
  /// The inflaters restores and tests use, shared by every input.
  private let decoders: DecoderPool
  /// The capped buffers of chunks restored ahead of their turn, shared by every input.
  private let chunkBuffers: ChunkBufferPool

  /// The stream command of a run configured as `configuration`.
  package init(configuration: RunConfiguration) {
    self.configuration = configuration
    decoders = DecoderPool(engine: configuration.engine)
    chunkBuffers = ChunkBufferPool(
      capacity: ParallelCompressor.restoredChunkCap(chunkSize: configuration.chunkSize))
  }

  /// Runs the stream and returns the exit status; re-raises a stopping signal.
  @MainActor
  package func run() async -> ExitStatus {
    let stderr = TextOutput.standardError
    let stop = AtomicFlag()
    let slots = WorkSlots(width: configuration.jobs)
    let signals = SignalHandling { _ in
      stop.set()
      slots.close()
    }
    if configuration.mode == .compress && Descriptor.isTerminal(1) && !configuration.files.force {
      stderr.write("squeeze: compressed data not written to a terminal; use -f to force\n")
      return .failure
    }
    if configuration.mode != .compress && configuration.readsStandardInput
      && Descriptor.isTerminal(0)
      && !configuration.files.force
    {
      stderr.write("squeeze: compressed data not read from a terminal; use -f to force\n")
      return .failure
    }
    var failed = false
    // Standard output failed (full disk, I/O error): every later input would fail alike.
    var outputFailed: FileFailure? = nil
    let inputs = await inputsToRead()
    for (position, input) in inputs.enumerated() {
      if stop.isSet { break }
      let display = input.display
      if case .failed(let message) = input.source {
        failed = true
        stderr.write("squeeze: \(display.displayString): \(message)\n")
        continue
      }
      var failure: FileFailure? = nil
      do throws(FileFailure) {
        // Opened only now, and closed before the next: one descriptor whatever the count.
        if let opened = try open(input, stop: stop) {
          defer { if opened.descriptor > 0 { Descriptor.close(opened.descriptor) } }
          try await process(opened, display: display, slots: slots, stop: stop)
        }
      } catch {
        failure = error
      }
      if let failure, failure != .interrupted {
        failed = true
        guard case .cannotWriteOutput = failure else {
          stderr.write("squeeze: \(display.displayString): \(failure)\n")
          continue
        }
        // Only standard output is written: it takes no more, so stop here, once, as gzip
        // -c and pigz -c do, rather than fail each later input the same way.
        let rest = inputs.count - position - 1
        let notDone = rest > 0 ? "; stopped, \(ByteFormat.count(rest, "more input")) not done" : ""
        stderr.write("squeeze: \(display.displayString): \(failure)\(notDone)\n")
        outputFailed = failure
        break
      }
    }
    if let number = signals.receivedSignal { SignalHandling.reraise(number) }
    if outputFailed?.outOfSpaceOutput != nil { return .outOfSpace }
    return failed ? .failure : .success
  }

  /// One input, opened when its turn comes.
  struct Input {
    enum Source {
      /// Standard input (no path, or `-`).
      case standardInput
      /// File `index` of a list discovery made.
      case listed(FileList, index: Int)
      /// A named pipe or character device named on the command line (`squeeze -c <(cmd)`):
      /// read as it is, as `gzip -c` does.
      case special(RawPath)
      /// A path discovery could not use, and why.
      case failed(String)
    }
    var source: Source
    /// How the input is named in messages.
    var display: RawPath
  }

  /// An input ready to read.
  struct Opened {
    var descriptor: Int32
    /// The name and time for the gzip header: a file's; a pipe's name with time 0, as gzip.
    var name: RawPath?
    var modificationTime: Timestamp?
  }

  /// Standard input, or the named files (folders walked, as discovery selects them), in
  /// order; nothing is opened yet.
  private func inputsToRead() async -> [Input] {
    if configuration.readsStandardInput {
      return [Input(source: .standardInput, display: "(standard input)")]
    }
    var inputs: [Input] = []
    for path in configuration.paths {
      if path == "-" {
        inputs.append(Input(source: .standardInput, display: "(standard input)"))
        continue
      }
      // Named pipes and devices, and a link to a file named directly (`/dev/stdin`,
      // `<(cmd)`), are read as they are, as gzip -c reads them: -c writes nothing beside
      // them, so following the link the user named is safe.
      if let status = try? FileStatus.of(
        path, in: Descriptor.currentDirectory, followingSymlinks: true),
        status.kind == .fifo || status.kind == .characterDevice
          || (status.kind == .regular
            && (try? FileStatus.of(path, in: Descriptor.currentDirectory))?.kind == .symbolicLink)
      {
        inputs.append(Input(source: .special(path), display: path))
        continue
      }
      let found = await RunCommand.discover(
        [path], options: configuration.selection, bases: bases, namer: TemporaryNamer())
      for failure in found.failures {
        inputs.append(Input(source: .failed(failure.cause), display: failure.path))
      }
      for warning in found.warnings where configuration.verbosity > .quiet {
        TextOutput.standardError.write("squeeze: \(warning)\n")
      }
      for index in found.files.files.indices {
        inputs.append(
          Input(
            source: .listed(found.files, index: index),
            display: found.files.displayPath(of: found.files.files[index])))
      }
    }
    return inputs
  }

  /// Opens `input`.
  ///
  /// - Returns: the open input, or nil for one discovery failed on (reported by the caller).
  /// - Throws: ``FileFailure`` when it cannot be opened.
  private func open(_ input: Input, stop: AtomicFlag) throws(FileFailure) -> Opened? {
    switch input.source {
    case .standardInput:
      return Opened(descriptor: 0)
    case .failed:
      return nil
    case .special(let path):
      let descriptor: Int32
      do throws(SystemError) {
        // Non-blocking, so waiting for a pipe's writer can be cut short by a signal.
        descriptor = try FileDescriptor.open(
          path, flags: .source, symlinks: .always
        ).release()
      } catch {
        throw .cannotOpen(error)
      }
      while !Descriptor.waitUntilReadable(descriptor, milliseconds: 100) {
        if stop.isSet {
          Descriptor.close(descriptor)
          throw .interrupted
        }
      }
      Descriptor.clearStatusFlags(descriptor)
      return Opened(descriptor: descriptor, name: path.lastComponent)
    case .listed(let list, let index):
      let source = try SourceFile.open(
        index: index, list: list, bases: bases,
        symlinks: configuration.files.sourceSymlinks)
      // Reading blocks sequentially: the descriptor was opened non-blocking for safety.
      Descriptor.clearStatusFlags(source.descriptor)
      return Opened(
        descriptor: source.descriptor, name: list.name(of: list.files[index]),
        modificationTime: source.status.modificationTime)
    }
  }

  /// Reads the first two bytes of `descriptor` (fewer at its end) for `-dcf` to tell gzip
  /// data from data it passes through: consuming them, or with `peeking` reading them with
  /// `pread(2)` at offsets 0 and 1, so the position stays.
  ///
  /// - Throws: ``FileFailure/cannotRead(_:)``.
  static func readHead(_ descriptor: Int32, peeking: Bool = false) throws(FileFailure) -> [UInt8] {
    var head: [UInt8] = []
    var byte: UInt8 = 0
    while head.count < 2 {
      let count: Int
      let offset = Int64(head.count)
      do throws(SystemError) {
        count = try withUnsafeMutableBytes(of: &byte) { (raw) throws(SystemError) in
          peeking
            ? try Descriptor.read(descriptor, into: raw, at: offset)
            : try Descriptor.read(descriptor, into: raw)
        }
      } catch {
        throw .cannotRead(error)
      }
      if count == 0 { break }
      head.append(byte)
    }
    return head
  }

  /// Copies `input` to `writer` unchanged.
  static func copy(_ input: Int32, to writer: DescriptorWriter) throws(FileFailure) {
    var buffer = [UInt8](repeating: 0, count: 128 * 1024)
    while true {
      var failed: SystemError? = nil
      let count = buffer.withUnsafeMutableBytes { raw -> Int in
        do throws(SystemError) { return try Descriptor.read(input, into: raw) } catch {
          failed = error
          return 0
        }
      }
      if let failed { throw .cannotRead(failed) }
      if count == 0 { return }
      var failure: FileFailure? = nil
      buffer.withUnsafeBytes { raw in
        do throws(FileFailure) {
          try writer.write(UnsafeRawBufferPointer(rebasing: raw[..<count]))
        } catch {
          failure = error
        }
      }
      if let failure { throw failure }
    }
  }

  /// Compresses, decompresses or tests one input into standard output.
  private func process(
    _ input: Opened, display: RawPath, slots: WorkSlots, stop: AtomicFlag
  ) async throws(FileFailure) {
    let stdout: RawPath = "(standard output)"
    switch configuration.mode {
    case .compress, .list:
      let storesName = configuration.files.usesHeaderNameAndTime
      let header = GzipHeader(
        name: storesName ? input.name?.bytes : nil,
        modificationTime: storesName ? input.modificationTime : nil, level: configuration.level)
      _ = try await StreamCompressor.compress(
        from: input.descriptor, to: 1, outputName: stdout, header: header.encoded,
        chunking: configuration.chunking,
        workspaces: WorkspacePool(
          engine: configuration.engine, level: configuration.level,
          chunking: configuration.chunking),
        slots: slots, window: configuration.jobs + 1, stop: stop)
    case .decompress, .test:
      let writer = DescriptorWriter(descriptor: 1, display: stdout)
      let writes = configuration.mode == .decompress
      // As zcat -f: -dcf passes through what is not gzip, before and after the members.
      let passesThrough = writes && configuration.files.force
      if let size = Self.seekableSize(input.descriptor) {
        if passesThrough, try Self.readHead(input.descriptor, peeking: true) != [0x1F, 0x8B] {
          try Self.copy(input.descriptor, to: writer)
          return
        }
        let restore = ChunkedFileRestore(
          decoders: decoders, buffers: chunkBuffers, width: configuration.jobs + 1,
          slots: slots, stop: stop, task: nil)
        _ = try await restore.restore(
          input.descriptor, size: size, gate: nil, passesTrailingDataThrough: passesThrough,
          // Data sent to standard output stays sent; testing keeps nothing to forget.
          redo: writes ? .skipGiven : .restart {}, progress: { _ in },
          sink: { (chunk) throws(FileFailure) in if writes { try writer.write(chunk) } })
      } else {
        try decodeSerially(
          input.descriptor, passesThrough: passesThrough, to: writes ? writer : nil, stop: stop)
      }
      if configuration.mode == .test && configuration.verbosity == .verbose {
        TextOutput.standardError.write("\(display.displayString): OK\n")
      }
    }
  }

  /// The size of the regular file open at `descriptor` when it is read from its start (so
  /// it can be read at several places at once), or nil: a pipe, a device, or a file whose
  /// position is not 0 (standard input a caller already read from), read as it comes.
  static func seekableSize(_ descriptor: Int32) -> Int64? {
    guard let status = try? Descriptor.status(descriptor), status.kind == .regular,
      (try? Descriptor.position(descriptor)) == 0
    else { return nil }
    return status.size
  }

  /// Decodes an input that can only be read once, front to back, on one core, writing to
  /// `writer` (nil: testing).
  ///
  /// - Parameter passesThrough: as zcat -f, data that is not gzip passes through.
  private func decodeSerially(
    _ descriptor: Int32, passesThrough: Bool, to writer: DescriptorWriter?, stop: AtomicFlag
  ) throws(FileFailure) {
    var head: [UInt8] = []
    let writes = writer != nil
    if let writer, passesThrough {
      // As zcat -f: data that is not gzip, and empty input, pass through unchanged. The
      // head is read, not peeked, so pipes work too; gzip data decodes it first.
      head = try Self.readHead(descriptor)
      if head != [0x1F, 0x8B] {
        try writer.write(head)
        try Self.copy(descriptor, to: writer)
        return
      }
    }
    _ = try decoders.withWorkspace { (workspace) throws(FileFailure) in
      try GzipFileReader.decode(
        descriptor, prefix: head, passesTrailingDataThrough: passesThrough,
        workspace: workspace, stop: stop, progress: { _ in },
        // Testing writes nothing: zlib may redo it. Data sent to standard output stays sent.
        restart: writes ? nil : {}
      ) {
        (chunk) throws(FileFailure) in
        try writer?.write(chunk)
      }
    }
  }
}
