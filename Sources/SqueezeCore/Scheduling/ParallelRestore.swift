import SqueezeEngines
import SqueezeGzip
import SqueezeSystem
import SqueezeTaskLog

extension ParallelCompressor {
  /// Restores (`-d`) or tests (`-t`) file `index` chunk-parallel where its layout allows (see
  /// `Decompression/ChunkedRestore.swift`): this task opens the file, finds candidate chunks,
  /// decodes them in a nested task group, each taking a compression slot as compression
  /// chunks do, and writes the good ones in order; at the first chunk that is not good, and
  /// for everything after the first member, it decodes serially.
  ///
  /// - Parameter bounded: when true (`nonisolated`), chunks take slots and the big-file gate
  ///   is given back once no chunk is left to start; when false (`detached`), no slots.
  /// - Parameter task: the file's task, running on the calling thread: `suspended` while it
  ///   waits for a slot or for its chunks, each chunk tracked on its own (``TrackedChunk``).
  /// - Returns: the outcome, and the task (running again).
  nonisolated func restoreInParallelChunks(
    _ index: Int, task: TrackedTask, bounded: Bool
  ) async -> (Result<Processed, FileFailure>, TrackedTask) {
    let gate: ReleaseOnce? = bounded ? ReleaseOnce(bigFileGate) : nil
    defer { gate?.release() }
    let testing = work.settings.operation == .test
    let opened: DecompressionJob.Opened?
    let source: SourceFile
    do throws(FileFailure) {
      if testing {
        opened = nil
        source = try SourceFile.open(
          index: index, list: context.list, bases: context.bases,
          symlinks: context.settings.sourceSymlinks)
      } else {
        let job = try DecompressionJob.open(index: index, context: context)
        opened = job
        source = job.source
      }
    } catch {
      return (.failure(error), task)
    }
    defer { Descriptor.close(source.descriptor) }
    let sink: (UnsafeRawBufferPointer) throws(FileFailure) -> Void = { chunk throws(FileFailure) in
      try opened?.output.write(chunk)
    }
    do throws(FileFailure) {
      var (bytesIn, bytesOut): (Int64, Int64)
      do throws(FileFailure) {
        (bytesIn, bytesOut) = try await restoreChunks(
          source, gate: gate, slots: bounded ? slots : nil, task: task, sink: sink)
      } catch .badGzip(let fault) where work.settings.engine != .zlib {
        // zlib, the reference, has the last word on a file ISA-L refused (see
        // GzipFileReader.decode): the output is redone from the start.
        let decoder = try GzipFileReader.decodeAgainWithZlib(
          source.descriptor, passesTrailingDataThrough: false, fault: fault, stop: stop,
          restart: { () throws(FileFailure) in try opened?.output.rewind() }, sink: sink)
        (bytesIn, bytesOut) = (decoder.offset, decoder.totalOutput)
      }
      if let opened {
        return (
          .success(
            .prepared(
              try DecompressionJob.finish(
                opened, bytesIn: bytesIn, bytesOut: bytesOut, context: context))), task
        )
      }
      return (.success(.verified(bytesIn: bytesIn, bytesOut: bytesOut)), task)
    } catch {
      return (.failure(error), task)
    }
  }

  /// The restore itself: chunks in parallel while they are good, then a serial decoder
  /// resumed where they stopped. Writes every restored byte to `sink`, in order.
  ///
  /// - Returns: compressed bytes read and bytes restored.
  /// - Throws: ``FileFailure`` for read, format and sink errors, `.interrupted`.
  private nonisolated func restoreChunks(
    _ source: SourceFile, gate: ReleaseOnce?, slots: WorkSlots?, task: TrackedTask,
    sink: (UnsafeRawBufferPointer) throws(FileFailure) -> Void
  ) async throws(FileFailure) -> (bytesIn: Int64, bytesOut: Int64) {
    let descriptor = source.descriptor
    let (header, headerLength) = try DecompressionJob.readHeaderAndLength(descriptor)
    var finder = SyncMarkerFinder(
      descriptor: descriptor, start: Int64(headerLength), end: source.status.size)
    var crc: UInt32 = 0
    var restored: Int64 = 0
    var window = RestoredWindow()
    /// Where the serial decoder picks up: at a rejected chunk's start, or after the stream.
    var resumeAt: (offset: Int64, atTrailer: Bool) = (Int64(headerLength), false)
    var failure: FileFailure? = nil
    let stop = self.stop
    let buffers = chunkBuffers
    let cap = Int64(chunkBuffers.capacity)
    let first = try finder.nextBoundary(within: Int64(headerLength) + cap)
    // One chunk (no marker: gzip's files) or a first chunk too long: serial from the start.
    if case .marker(let firstEnd) = first {
      // Chunk k covers starts[k] ..< starts[k + 1] (the last one, to the end of the file).
      var starts: [Int64] = [Int64(headerLength), firstEnd]
      var boundary = first
      var produced = 0
      let chunks = OrderedChunkWindow<(Int64, Int64?), ChunkDecoding.Outcome, FileFailure>(
        width: work.jobs + 1, slots: slots, stop: stop, interruption: .interrupted,
        task: task)
      let decoders = context.decoders
      let fileSize = source.status.size
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
                feed.addBytes(Int(consumed))
                return .done
              }
              resumeAt = (starts[index + 1], false)
              feed.addBytes(Int(starts[index + 1] - starts[index]))
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
    return try context.decoders.withWorkspace { (workspace) throws(FileFailure) in
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
      do throws(SystemError) {
        try Descriptor.seek(descriptor, to: resumeAt.offset)
      } catch {
        throw .cannotRead(error)
      }
      try GzipFileReader.decode(
        descriptor, with: &decoder, workspace: workspace, stop: stop,
        progress: { self.feed.addBytes($0) }, sink: sink)
      return (decoder.offset, decoder.totalOutput)
    }
  }
}
