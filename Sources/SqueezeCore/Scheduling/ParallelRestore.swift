import SqueezeEngines
import SqueezeGzip
import SqueezeSystem
import SqueezeTaskLog

extension ParallelCompressor {
  /// Restores (`-d`) or tests (`-t`) file `index` chunk-parallel where its layout allows
  /// (``ChunkedFileRestore``, the routine `-dc` shares): this task opens the file, its
  /// chunks are decoded in a nested task group, each taking a compression slot as
  /// compression chunks do, and the good ones are written in order to the temporary; at the
  /// first chunk that is not good, and for everything after the first member, the file is
  /// decoded serially.
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
    let restore = ChunkedFileRestore(
      decoders: context.decoders, buffers: chunkBuffers, width: work.jobs + 1,
      slots: bounded ? slots : nil, stop: stop, task: task)
    do throws(FileFailure) {
      // A temporary is rewound when zlib must decode the file again; a test keeps nothing.
      let (bytesIn, bytesOut) = try await restore.restore(
        source.descriptor, size: source.status.size, gate: gate,
        passesTrailingDataThrough: false,
        redo: .restart { () throws(FileFailure) in try opened?.output.rewind() },
        progress: { self.addBytes($0, of: index) },
        sink: { (chunk) throws(FileFailure) in try opened?.output.write(chunk) })
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
}
