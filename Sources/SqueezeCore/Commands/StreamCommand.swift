import Glibc

/// `squeeze -c` and standard input (spec §3): compress, decompress or test standard input or
/// the named files (folders walked) into standard output, as gzip does
/// (`tar c dir | squeeze > dir.tar.gz`, `squeeze -dc x.gz | less`). Files are written one
/// after another as concatenated members; each is compressed block-parallel.
struct StreamCommand {
  let options: Options

  /// Runs the stream and returns the exit status; re-raises a stopping signal.
  @MainActor
  func run() async -> ExitStatus {
    let stderr = TextOutput.standardError
    let stop = AtomicFlag()
    let slots = CompressionSlots(width: options.jobs ?? RunCommand.activeProcessorCount)
    let signals = SignalHandling { _ in
      stop.set()
      slots.close()
    }
    if options.mode == .compress && isatty(1) == 1 && !options.force {
      stderr.write("squeeze: compressed data not written to a terminal; use -f to force\n")
      return .failure
    }
    if options.mode != .compress && options.readsStandardInput && isatty(0) == 1 && !options.force {
      stderr.write("squeeze: compressed data not read from a terminal; use -f to force\n")
      return .failure
    }
    var failed = false
    let inputs = try? await inputsToRead()
    guard let inputs else { return .failure }
    for input in inputs {
      if stop.isSet { break }
      let display = input.display
      var failure: FileFailure? = nil
      do throws(FileFailure) {
        try await process(input, slots: slots, stop: stop)
      } catch {
        failure = error
      }
      if input.descriptor > 0 { close(input.descriptor) }
      if let failure, failure != .interrupted {
        failed = true
        stderr.write("squeeze: \(display.displayString): \(failure)\n")
      }
      if case .failed(let message) = input.problem {
        failed = true
        stderr.write("squeeze: \(display.displayString): \(message)\n")
      }
    }
    if let number = signals.receivedSignal { SignalHandling.reraise(number) }
    return failed ? .failure : .success
  }

  /// One input: standard input or an open file.
  struct Input {
    var descriptor: Int32
    var display: RawPath
    /// The name and time for the gzip header (files only).
    var name: RawPath?
    var modificationTime: Timestamp?
    /// Set when the input could not be opened.
    var problem: Problem = .none

    enum Problem {
      case none
      case failed(String)
    }
  }

  /// Standard input, or the named files (folders walked, as discovery selects them).
  private func inputsToRead() async throws -> [Input] {
    if options.readsStandardInput {
      return [Input(descriptor: 0, display: "(standard input)", name: nil, modificationTime: nil)]
    }
    var inputs: [Input] = []
    let bases = BaseDirectories()
    for path in options.paths {
      if path == "-" {
        inputs.append(
          Input(descriptor: 0, display: "(standard input)", name: nil, modificationTime: nil))
        continue
      }
      var discoveryOptions = DiscoveryOptions()
      // As gzip -c: every file named is compressed, a .gz one too.
      discoveryOptions.wanted = options.mode == .compress ? .anything : .compressedOrNamed
      discoveryOptions.suffix = options.suffix
      discoveryOptions.followSymlinks = options.followSymlinks
      discoveryOptions.oneFileSystem = options.oneFileSystem
      discoveryOptions.selection = RunCommand.selection(from: options)
      discoveryOptions.removesStaleTemporaries = false
      let found = await RunCommand.discover(
        [path], options: discoveryOptions, bases: bases, namer: TemporaryNamer())
      for failure in found.failures {
        inputs.append(Input(descriptor: -1, display: failure.path, problem: .failed(failure.cause)))
      }
      for warning in found.warnings where options.verbosity > .quiet {
        TextOutput.standardError.write("squeeze: \(warning)\n")
      }
      for index in found.files.files.indices {
        let display = found.files.displayPath(of: found.files.files[index])
        do throws(FileFailure) {
          let source = try SourceFile.open(
            index: index, list: found.files, bases: bases,
            symlinks: options.followSymlinks ? .always : .never)
          // Reading blocks sequentially: the descriptor was opened non-blocking for safety.
          _ = fcntl(source.descriptor, F_SETFL, O_RDONLY)
          inputs.append(
            Input(
              descriptor: source.descriptor, display: display,
              name: found.files.name(of: found.files.files[index]),
              modificationTime: source.status.modificationTime))
        } catch {
          inputs.append(
            Input(descriptor: -1, display: display, problem: .failed(error.description)))
        }
      }
    }
    return inputs
  }

  /// Reads the first two bytes of `descriptor` (fewer at its end), consuming them, for
  /// `-dcf` to tell gzip data from data it passes through.
  ///
  /// - Throws: ``FileFailure/cannotRead(_:)``.
  static func readHead(_ descriptor: Int32) throws(FileFailure) -> [UInt8] {
    var head: [UInt8] = []
    var byte: UInt8 = 0
    while head.count < 2 {
      let count = read(descriptor, &byte, 1)
      if count < 0 {
        if errno == EINTR { continue }
        throw .cannotRead(SystemError.current)
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
      let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
      if count < 0 {
        if errno == EINTR { continue }
        throw .cannotRead(SystemError.current)
      }
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
  private func process(_ input: Input, slots: CompressionSlots, stop: AtomicFlag)
    async throws(FileFailure)
  {
    guard input.descriptor >= 0 else { return }
    let stdout: RawPath = "(standard output)"
    switch options.mode {
    case .compress, .list:
      let storesName = options.headerNameAndTime ?? true
      let header = GzipHeader(
        name: storesName ? input.name?.bytes : nil,
        modificationTime: storesName ? input.modificationTime : nil, level: options.level)
      _ = try await StreamCompressor.compress(
        from: input.descriptor, to: 1, outputName: stdout, header: header.encoded,
        blockSize: options.blockSize,
        workspaces: WorkspacePool(level: options.level, blockSize: options.blockSize), slots: slots,
        window: (options.jobs ?? RunCommand.activeProcessorCount) + 1, stop: stop)
    case .decompress, .test:
      let writer = DescriptorWriter(descriptor: 1, display: stdout)
      let writes = options.mode == .decompress
      var head: [UInt8] = []
      if writes && options.force {
        // As zcat -f: data that is not gzip, and empty input, pass through unchanged. The
        // head is read, not peeked, so pipes work too; gzip data decodes it first.
        head = try Self.readHead(input.descriptor)
        if head != [0x1F, 0x8B] {
          try writer.write(head)
          try Self.copy(input.descriptor, to: writer)
          return
        }
      }
      _ = try DecoderPool().withWorkspace { (workspace) throws(FileFailure) in
        try GzipFileReader.decode(
          input.descriptor, prefix: head, workspace: workspace, stop: stop, progress: { _ in }
        ) {
          (chunk) throws(FileFailure) in
          if writes { try writer.write(chunk) }
        }
      }
      if options.mode == .test && options.verbosity == .verbose {
        TextOutput.standardError.write("\(input.display.displayString): OK\n")
      }
    }
  }
}
