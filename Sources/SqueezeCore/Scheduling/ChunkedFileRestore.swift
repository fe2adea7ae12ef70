import SqueezeEngines
import SqueezeGzip
import SqueezeSystem
import SqueezeTaskLog

/// Restores one seekable gzip file on every core where its layout allows (see
/// `Decompression/ChunkedRestore.swift`): finds candidate chunks, decodes them in a nested
/// task group, each taking a slot, hands the good ones to a sink in order, and at the first
/// chunk that is not good, and for everything after the first member, decodes serially.
///
/// The one restore routine of a file read from its start: `-d` and `-t` of a file
/// (``ParallelCompressor``), and `-dc`/`-tc` of a regular file or of standard input that is
/// one (``StreamCommand``). They differ only in what can be undone when zlib must decode
/// the file again (``Redo``).
struct ChunkedFileRestore {
  /// Lends the engine's inflaters, for chunks and for the serial part.
  let decoders: DecoderPool
  /// The capped buffers chunks are decoded into (their cap bounds a chunk decoded ahead).
  let buffers: ChunkBufferPool
  /// The most chunks in flight: `--jobs` + 1 (``OrderedChunkWindow``).
  let width: Int
  /// Slots each chunk, and the serial part, holds while it runs; nil for none.
  let slots: WorkSlots?
  /// The run's stop flag.
  let stop: AtomicFlag
  /// The file's task for the task-state log (its chunks are logged), or nil.
  let task: TrackedTask?

  /// What happens to what the sink was given when the fast engine refuses the file and
  /// zlib, the reference, decodes it again from the start (``GzipFileReader``).
  enum Redo {
    /// The sink's receiver forgets it first (a temporary output rewound; a test that keeps
    /// nothing), and zlib's bytes go to the sink from the first.
    case restart(() throws(FileFailure) -> Void)
    /// What was given stays given (standard output cannot be rewound): zlib's first bytes,
    /// as many as the sink was given, are dropped and the rest goes on. They are the same
    /// bytes: when zlib accepts the whole file every block of it is valid deflate, and both
    /// inflaters decode valid deflate exactly, so what the fast engine gave before it
    /// stopped is what zlib gives up to there.
    case skipGiven
  }

  /// Restores the gzip file open at `descriptor`, `size` bytes long, from its start (the
  /// descriptor's position is moved), writing every restored byte to `sink` in order.
  ///
  /// - Parameters:
  ///   - gate: released once no chunk is left to start (the big-file gate), or nil.
  ///   - passesTrailingDataThrough: copy data after the last member to `sink` (`-dcf`).
  ///   - redo: how a second decode by zlib treats what `sink` was given.
  ///   - progress: called with counts of compressed bytes restored.
  /// - Returns: compressed bytes read and bytes restored.
  /// - Throws: ``FileFailure`` for read, format and sink errors (a format fault is zlib's
  ///   when the fast engine refused the file), `.interrupted`.
  func restore(
    _ descriptor: Int32, size: Int64, gate: ReleaseOnce?, passesTrailingDataThrough: Bool,
    redo: Redo, progress: (Int) -> Void,
    sink: (UnsafeRawBufferPointer) throws(FileFailure) -> Void
  ) async throws(FileFailure) -> (bytesIn: Int64, bytesOut: Int64) {
    var given: Int64 = 0
    do throws(FileFailure) {
      return try await restoreChunks(
        descriptor, size: size, gate: gate, passesTrailingDataThrough: passesTrailingDataThrough,
        progress: progress
      ) { (chunk) throws(FileFailure) in
        try sink(chunk)
        given += Int64(chunk.count)
      }
    } catch .badGzip(let fault) where decoders.engine != .zlib {
      let decoder: GzipDecoder
      switch redo {
      case .restart(let restart):
        decoder = try GzipFileReader.decodeAgainWithZlib(
          descriptor, passesTrailingDataThrough: passesTrailingDataThrough, fault: fault,
          stop: stop, restart: restart, sink: sink)
      case .skipGiven:
        decoder = try Self.decodeAgainWithZlib(
          descriptor, skipping: given, passesTrailingDataThrough: passesTrailingDataThrough,
          fault: fault, stop: stop, sink: sink)
      }
      return (decoder.offset, decoder.totalOutput)
    }
  }

  /// zlib's decode of the whole file after the fast engine refused it with `fault`, when
  /// `given` bytes of the output were already sent on and stay sent (``Redo/skipGiven``):
  /// zlib's first `given` bytes are dropped, the rest go to `sink`.
  ///
  /// - Returns: zlib's decoder, finished.
  /// - Throws: zlib's fault; `fault` when the file cannot be read again, or when zlib gives
  ///   fewer than `given` bytes (the two decodes disagree).
  static func decodeAgainWithZlib(
    _ descriptor: Int32, skipping given: Int64, passesTrailingDataThrough: Bool,
    fault: GzipFormatError, stop: AtomicFlag?,
    sink: (UnsafeRawBufferPointer) throws(FileFailure) -> Void
  ) throws(FileFailure) -> GzipDecoder {
    var skipped: Int64 = 0
    let decoder = try GzipFileReader.decodeAgainWithZlib(
      descriptor, passesTrailingDataThrough: passesTrailingDataThrough, fault: fault,
      stop: stop, restart: {},
      sink: { (chunk) throws(FileFailure) in
        let dropped = Int(min(Int64(chunk.count), given - skipped))
        skipped += Int64(dropped)
        if dropped < chunk.count {
          try sink(UnsafeRawBufferPointer(rebasing: chunk[dropped...]))
        }
      })
    if skipped < given { throw .badGzip(fault) }
    return decoder
  }

  /// The restore itself: chunks in parallel while they are good, then a serial decoder
  /// resumed where they stopped. Writes every restored byte to `sink`, in order.
  ///
  /// - Returns: compressed bytes read and bytes restored.
  /// - Throws: ``FileFailure`` for read, format and sink errors, `.interrupted`.
  private func restoreChunks(
    _ descriptor: Int32, size fileSize: Int64, gate: ReleaseOnce?,
    passesTrailingDataThrough: Bool, progress: (Int) -> Void,
    sink: (UnsafeRawBufferPointer) throws(FileFailure) -> Void
  ) async throws(FileFailure) -> (bytesIn: Int64, bytesOut: Int64) {
    let (header, headerLength) = try DecompressionJob.readHeaderAndLength(descriptor)
    var finder = SyncMarkerFinder(
      descriptor: descriptor, start: Int64(headerLength), end: fileSize)
    var crc: UInt32 = 0
    var restored: Int64 = 0
    var window = RestoredWindow()
    /// Where the serial decoder picks up: at a rejected chunk's start, or after the stream.
    var resumeAt: (offset: Int64, atTrailer: Bool) = (Int64(headerLength), false)
    var failure: FileFailure? = nil
    let stop = self.stop
    let buffers = self.buffers
    let cap = Int64(buffers.capacity)
    let first = try finder.nextBoundary(within: Int64(headerLength) + cap)
    // One chunk (no marker: gzip's files) or a first chunk too long: serial from the start.
    if case .marker(let firstEnd) = first {
      // Chunk k covers starts[k] ..< starts[k + 1] (the last one, to the end of the file).
      var starts: [Int64] = [Int64(headerLength), firstEnd]
      var boundary = first
      var produced = 0
      let chunks = OrderedChunkWindow<(Int64, Int64?), ChunkDecoding.Outcome, FileFailure>(
        width: width, slots: slots, stop: stop, interruption: .interrupted, task: task)
      let decoders = self.decoders
      do throws(FileFailure) {
        try await chunks.run(
          next: { () throws(FileFailure) in
            if produced > 0 {
              // The boundary after the chunk just started.
              guard case .marker(let end) = boundary else { return .end }
              boundary = try finder.nextBoundary(within: end + cap)
              switch boundary {
              case .marker(let offset): starts.append(offset)
              case .endOfFile: break
              // Too long to decode ahead: the serial decoder starts there.
              case .beyondLimit: return .end
              }
            }
            let start = starts[produced]
            let end: Int64? = if case .marker(let offset) = boundary { offset } else { nil }
            produced += 1
            // The last candidate runs to the end of the file.
            return .chunk((start, end), isLast: end == nil)
          },
          // No chunk is left for this file.
          lastStarted: { gate?.release() },
          work: { (_, chunk) in
            let (start, end) = chunk
            do throws(FileFailure) {
              return try decoders.withWorkspace { (workspace) throws(FileFailure) in
                ChunkDecoding.decode(
                  descriptor, range: start..<(end ?? fileSize), openEnded: end == nil,
                  inflater: workspace.inflater, input: workspace.input, buffers: buffers,
                  stop: stop)
              }
            } catch {
              return .rejected("\(error)")
            }
          },
          consume: { (index, outcome) throws(FileFailure) in
            switch outcome {
            case .boundary(let buffer), .streamEnd(let buffer, _):
              defer { buffers.give(buffer) }
              try sink(buffer.bytes)
              crc = CRC32.combine(crc, buffer.crc, secondLength: Int64(buffer.count))
              restored += Int64(buffer.count)
              window.append(buffer.bytes)
              if case .streamEnd(_, let consumed) = outcome {
                resumeAt = (starts[index] + consumed, true)
                progress(Int(consumed))
                return .done
              }
              resumeAt = (starts[index + 1], false)
              progress(Int(starts[index + 1] - starts[index]))
              return .more
            case .rejected:
              resumeAt = (starts[index], false)
              return .done
            }
          },
          discard: { outcome in
            switch outcome {
            case .boundary(let buffer), .streamEnd(let buffer, _): buffers.give(buffer)
            case .rejected: break
            }
          })
      } catch {
        failure = error
      }
    }
    gate?.release()
    if let failure { throw failure }
    // Everything from `resumeAt` on: serially, holding a slot like any compression.
    if let slots {
      guard await slots.acquire(for: task) else { throw .interrupted }
    }
    defer { slots?.release() }
    if stop.isSet { throw .interrupted }
    return try decoders.withWorkspace { (workspace) throws(FileFailure) in
      var resumed: Result<GzipDecoder, EngineError>? = nil
      window.bytes.withUnsafeBytes { dictionary in
        resumed = Result { () throws(EngineError) in
          try GzipDecoder(
            resuming: resumeAt.atTrailer ? .trailer : .deflateStream(dictionary: dictionary),
            inflater: workspace.inflater, output: workspace.output, header: header,
            headerLength: headerLength, crc: crc, memberSize: restored, offset: resumeAt.offset)
        }
      }
      var decoder: GzipDecoder
      switch resumed {
      case .success(let ready): decoder = ready
      case .failure(let error): throw .engine(error)
      case nil: throw .interrupted
      }
      decoder.passesTrailingDataThrough = passesTrailingDataThrough
      do throws(SystemError) {
        try Descriptor.seek(descriptor, to: resumeAt.offset)
      } catch {
        throw .cannotRead(error)
      }
      try GzipFileReader.decode(
        descriptor, with: &decoder, workspace: workspace, stop: stop, progress: progress,
        sink: sink)
      return (decoder.offset, decoder.totalOutput)
    }
  }
}
