import Synchronization

extension ParallelCompressor {
  /// Compresses file `index` block-parallel, pigz-style (see ``BlockLayout``): this task
  /// opens the file, feeds its blocks into a nested task group, and writes the compressed
  /// blocks in order as they come back, keeping at most `jobs + 1` blocks in flight.
  ///
  /// - Parameter bounded: when true (`nonisolated`), each block takes a compression slot, so
  ///   blocks and small files share one width, and the big-file gate is given back as soon
  ///   as the last block has started; when false (`detached`), blocks take no slot.
  /// - Returns: the outcome, and the task (moved to `suspended` while its blocks run).
  nonisolated func compressInParallelBlocks(
    _ index: Int, task: TrackedTask, bounded: Bool
  ) async -> (Result<Processed, FileFailure>, TrackedTask) {
    var task = task
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
    task.move(to: .suspended)
    do throws(FileFailure) {
      let prepared = try await writeBlocksInOrder(job, gate: gate, slots: bounded ? slots : nil)
      return (.success(.prepared(prepared)), task)
    } catch {
      return (.failure(error), task)
    }
  }

  /// Feeds the blocks of `job`, writes them in order, and finishes the member.
  private nonisolated func writeBlocksInOrder(
    _ job: CompressionJob, gate: ReleaseOnce?, slots: CompressionSlots?
  ) async throws(FileFailure) -> PreparedOutput {
    let layout = job.layout
    let descriptor = job.input
    let window = configuration.jobs + 1
    try job.output.write(job.header)
    var crc: UInt32 = 0
    var bytesRead: Int64 = 0
    var failure: FileFailure? = nil
    await withTaskGroup(of: Result<CompressedBlock, FileFailure>.self) { group in
      var next = 0
      var written = 0
      var ready: [Int: CompressedBlock] = [:]
      while written < layout.count && failure == nil {
        // Fill the window: each block waits enqueued for a slot, then runs.
        while next < layout.count && next - written < window {
          tracker.blockEnqueued()
          let admitted = await slots?.acquire() ?? true
          guard admitted, !stop.isSet else {
            tracker.blockAbandoned()
            failure = .interrupted
            break
          }
          let block = next
          group.addTask {
            self.tracker.blockStarted()
            defer {
              self.tracker.blockEnded()
              slots?.release()
            }
            do throws(FileFailure) {
              return .success(
                try self.workspaces.withWorkspace { (workspace) throws(FileFailure) in
                  try CompressionJob.compressBlock(
                    index: block, of: layout, descriptor: descriptor, workspace: workspace)
                })
            } catch {
              return .failure(error)
            }
          }
          next += 1
          if next == layout.count { gate?.release() }
        }
        if failure != nil { break }
        guard let result = await group.next() else { break }
        switch result {
        case .failure(let error):
          failure = error
        case .success(let block):
          feed.addBytes(block.length)
          ready[block.index] = block
        }
        // Write whatever is now contiguous.
        while failure == nil, let block = ready.removeValue(forKey: written) {
          do throws(FileFailure) {
            try job.output.write(block.bytes)
          } catch {
            failure = error
          }
          crc = CRC32.combine(crc, block.crc, secondLength: Int64(block.length))
          bytesRead += Int64(block.length)
          written += 1
        }
      }
      // On failure the group waits here for the blocks already running.
    }
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
