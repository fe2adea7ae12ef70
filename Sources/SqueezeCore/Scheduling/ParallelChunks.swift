import SqueezeEngines
import SqueezeTaskLog
import Synchronization

extension ParallelCompressor {
  /// Compresses file `index` chunk-parallel, pigz-style (see ``ChunkLayout``): this task
  /// opens the file, feeds its chunks into a nested task group, and writes the compressed
  /// chunks in order as they come back, keeping at most `jobs + 1` chunks in flight.
  ///
  /// - Parameter bounded: when true (`nonisolated`), each chunk takes a compression slot, so
  ///   chunks and small files share one width, and the big-file gate is given back as soon
  ///   as the last chunk has started; when false (`detached`), chunks take no slot.
  /// - Parameter task: the file's task, running on the calling thread: `suspended` while it
  ///   waits for a slot or for its chunks, each chunk tracked on its own (``TrackedChunk``).
  /// - Returns: the outcome, and the task (running again).
  nonisolated func compressInParallelChunks(
    _ index: Int, task: TrackedTask, bounded: Bool
  ) async -> (Result<Processed, FileFailure>, TrackedTask) {
    let gate: ReleaseOnce? = bounded ? ReleaseOnce(bigFileGate) : nil
    defer { gate?.release() }
    let job: CompressionJob
    do throws(FileFailure) {
      switch try CompressionJob.open(index: index, context: context) {
      case .upToDate(let bytes): return (.success(.upToDate(bytes: bytes)), task)
      case .job(let opened): job = opened
      }
    } catch {
      return (.failure(error), task)
    }
    do throws(FileFailure) {
      let prepared = try await writeChunksInOrder(
        job, task: task, gate: gate, slots: bounded ? slots : nil)
      return (.success(.prepared(prepared)), task)
    } catch {
      return (.failure(error), task)
    }
  }

  /// Feeds the chunks of `job`, writes them in order, and finishes the member.
  ///
  /// Fixed-size chunks are computed; content-defined ones (`--rsyncable`) come from a
  /// ``BoundaryScan`` running ahead on its own thread, awaited before the chunk takes a slot.
  private nonisolated func writeChunksInOrder(
    _ job: CompressionJob, task: TrackedTask, gate: ReleaseOnce?, slots: CompressionSlots?
  ) async throws(FileFailure) -> PreparedOutput {
    let layout = job.layout
    let descriptor = job.input
    let window = configuration.jobs + 1
    let scan: BoundaryScan?
    if case .contentDefined(let rule) = layout.chunking {
      scan = try BoundaryScan(descriptor: descriptor, length: layout.length, chunking: rule)
    } else {
      scan = nil
    }
    defer { scan?.cancel() }
    try job.output.write(job.header)
    var crc: UInt32 = 0
    var bytesRead: Int64 = 0
    var failure: FileFailure? = nil
    await withTaskGroup(of: Result<CompressedChunk, FileFailure>.self) { group in
      var next = 0
      var nextStart: Int64 = 0
      var lastStarted = false
      var written = 0
      var ready: [Int: CompressedChunk] = [:]
      while !(lastStarted && written == next) && failure == nil {
        // Fill the window: the task waits (suspended) for the chunk's end from the scan
        // (--rsyncable) and for a slot for each chunk, which then waits enqueued for a thread
        // and runs.
        filling: while !lastStarted && next - written < window {
          let end: Int64
          if let scan {
            switch await scan.next(for: task) {
            case .success(let found): end = found
            case .failure(let error):
              failure = error
              break filling
            }
          } else {
            end = min(nextStart + Int64(layout.chunking.maximumChunkSize), layout.length)
          }
          let range = nextStart..<end
          let isLast = end >= layout.length
          let admitted = await slots?.acquire(for: task) ?? true
          guard admitted, !stop.isSet else {
            if admitted { slots?.release() }
            failure = .interrupted
            break
          }
          let chunk = next
          let tracked = task.chunk(chunk)
          group.addTask {
            tracked.start()
            var failed = false
            defer {
              tracked.end(failed: failed)
              slots?.release()
            }
            do throws(FileFailure) {
              return .success(
                try self.workspaces.withWorkspace { (workspace) throws(FileFailure) in
                  try CompressionJob.compressChunk(
                    index: chunk, range: range, isLast: isLast, of: layout,
                    descriptor: descriptor, workspace: workspace)
                })
            } catch {
              failed = true
              return .failure(error)
            }
          }
          next += 1
          nextStart = end
          if isLast {
            lastStarted = true
            gate?.release()
          }
        }
        if failure != nil { break }
        task.suspend(.chunks)
        let completed = await group.next()
        task.run()
        guard let result = completed else { break }
        switch result {
        case .failure(let error):
          failure = error
        case .success(let chunk):
          feed.addBytes(chunk.length)
          ready[chunk.index] = chunk
        }
        // Write whatever is now contiguous.
        while failure == nil, let chunk = ready.removeValue(forKey: written) {
          do throws(FileFailure) {
            try job.output.write(chunk.bytes)
          } catch {
            failure = error
          }
          crc = CRC32.combine(crc, chunk.crc, secondLength: Int64(chunk.length))
          bytesRead += Int64(chunk.length)
          written += 1
        }
      }
      // On failure the group waits here for the chunks already running.
      if failure != nil { task.suspend(.chunks) }
    }
    if failure != nil { task.run() }
    if let failure { throw failure }
    try job.checkNoGrowth()
    return try job.finish(bytesRead: bytesRead, crc: crc)
  }
}

/// Releases a slot of a ``CompressionSlots`` exactly once, however many paths try.
final class ReleaseOnce: Sendable {
  private let slots: CompressionSlots
  private let released = Atomic<Bool>(false)

  init(_ slots: CompressionSlots) {
    self.slots = slots
  }

  /// Releases the slot the first time; later calls do nothing.
  func release() {
    if !released.exchange(true, ordering: .acquiringAndReleasing) { slots.release() }
  }
}
