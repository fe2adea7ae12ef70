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
        job, of: index, task: task, gate: gate, slots: bounded ? slots : nil)
      return (.success(.prepared(prepared)), task)
    } catch {
      return (.failure(error), task)
    }
  }

  /// Feeds the chunks of `job`, writes them in order, and finishes the member.
  ///
  /// Fixed-size chunks are computed; content-defined ones (`--rsyncable`) come from a
  /// ``BoundaryScan`` running ahead on its own thread, awaited as soon as the chunk before
  /// has started. The chunks go through an ``OrderedChunkWindow`` of width `jobs + 1`.
  /// Each chunk written adds its length to file `index`'s progress (``addBytes(_:of:)``).
  private nonisolated func writeChunksInOrder(
    _ job: CompressionJob, of index: Int, task: TrackedTask, gate: ReleaseOnce?, slots: WorkSlots?
  ) async throws(FileFailure) -> PreparedOutput {
    let layout = job.layout
    let descriptor = job.input
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
    var nextStart: Int64 = 0
    let window = OrderedChunkWindow<Range<Int64>, CompressedChunk, FileFailure>(
      width: work.jobs + 1, slots: slots, stop: stop, interruption: .interrupted,
      task: task)
    let workspaces = self.workspaces
    try await window.run(
      next: { () async throws(FileFailure) in
        // The chunk's end: computed, or (--rsyncable) awaited from the scan, suspended.
        let end: Int64
        if let scan {
          end = try await scan.next(for: task).get()
        } else {
          end = min(nextStart + Int64(layout.chunking.maximumChunkSize), layout.length)
        }
        let start = nextStart
        nextStart = end
        return .chunk(start..<end, isLast: end >= layout.length)
      },
      lastStarted: { gate?.release() },
      work: { (index, range) throws(FileFailure) in
        try workspaces.withWorkspace { (workspace) throws(FileFailure) in
          try CompressionJob.compressChunk(
            index: index, range: range, isLast: range.upperBound >= layout.length, of: layout,
            descriptor: descriptor, workspace: workspace)
        }
      },
      consume: { (_, chunk) throws(FileFailure) in
        addBytes(chunk.length, of: index)
        try job.output.write(chunk.bytes)
        crc = CRC32.combine(crc, chunk.crc, secondLength: Int64(chunk.length))
        bytesRead += Int64(chunk.length)
        return .more
      })
    try job.checkNoGrowth()
    return try job.finish(bytesRead: bytesRead, crc: crc)
  }
}

/// Releases a slot of a ``WorkSlots`` exactly once, however many paths try.
final class ReleaseOnce: Sendable {
  private let slots: WorkSlots
  private let released = Atomic<Bool>(false)

  init(_ slots: WorkSlots) {
    self.slots = slots
  }

  /// Releases the slot the first time; later calls do nothing.
  func release() {
    if !released.exchange(true, ordering: .acquiringAndReleasing) { slots.release() }
  }
}
