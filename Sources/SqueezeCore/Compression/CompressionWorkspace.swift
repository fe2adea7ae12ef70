import SqueezeEngines
import SqueezeGzip
import SqueezeSystem
import Synchronization

/// The compressor and the two buffers one chunk compression uses, reused from chunk to
/// chunk and file to file.
///
/// Per-file allocation of a compressor and buffers costs page faults and library setup on
/// every small file; keeping one workspace per concurrently running compression avoids both
/// (the Performance article gives the measured gain).
/// Memory: the engine's state (zlib's deflate state is 256 KiB at memLevel 8, libdeflate's
/// compressor about 0.5 to 1.5 MB by level) plus ``input`` (a dictionary, the longest chunk
/// and one read step) and ``output`` (the compressed bound of the longest chunk, and room
/// for a header and trailer).
// @unchecked Sendable: a workspace is only ever used by one thread at a time. It is
// reachable only through `WorkspacePool.withWorkspace`, which removes it from the pool under
// the pool's mutex, lends it to one synchronous closure (no suspension point inside), and
// puts it back afterwards; no reference escapes the closure.
final class CompressionWorkspace: @unchecked Sendable {
  /// The reusable compressor.
  let deflater: any ChunkDeflater
  /// ``dictionarySize`` bytes for a dictionary, followed by one chunk of source bytes (and
  /// one read step past it: the buffer of a ``SequentialChunkReader``).
  let input: UnsafeMutableRawBufferPointer
  /// Compressed bytes of one chunk, with room before them for a gzip header and after
  /// them for the trailer.
  let output: UnsafeMutableRawBufferPointer
  /// The rule the buffers were sized for (its longest chunk).
  let chunking: Chunking
  /// The room before a chunk in ``input`` for its dictionary, in bytes (the engine's).
  let dictionarySize: Int

  /// Bytes reserved in ``output`` for a gzip header (with a 255-byte name) and a trailer.
  static let headerAndTrailerRoom = 512

  /// - Throws: ``EngineError`` when the engine cannot allocate a compressor.
  init(engine: Engine, level: CompressionLevel, chunking: Chunking) throws(EngineError) {
    deflater = try engine.makeDeflater(level: Int(level.value))
    self.chunking = chunking
    dictionarySize = engine.chunkDictionarySize
    input = .allocate(
      byteCount: SequentialChunkReader.bufferSize(chunking: chunking, historyRoom: dictionarySize),
      alignment: 64)
    output = .allocate(
      byteCount: deflater.bound(chunkLength: chunking.maximumChunkSize)
        + CompressionWorkspace.headerAndTrailerRoom,
      alignment: 64)
  }

  deinit {
    input.deallocate()
    output.deallocate()
  }

  /// Compresses the `count` bytes at the chunk's place in ``input`` (right after the
  /// dictionary room), primed with the `dictionaryLength` bytes before them, into `into`.
  ///
  /// - Returns: bytes written.
  /// - Throws: ``FileFailure/engine(_:)`` when the compressor fails.
  func deflateChunk(
    count: Int, dictionaryLength: Int, isLast: Bool, into: UnsafeMutableRawBufferPointer
  ) throws(FileFailure) -> Int {
    let chunk = UnsafeRawBufferPointer(
      rebasing: input[dictionarySize..<(dictionarySize + count)])
    let dictionary = UnsafeRawBufferPointer(
      rebasing: input[(dictionarySize - dictionaryLength)..<dictionarySize])
    do {
      return try deflater.deflate(chunk: chunk, dictionary: dictionary, isLast: isLast, into: into)
    } catch {
      throw .engine(error)
    }
  }
}

/// Lends ``CompressionWorkspace``s to compressions: at most one per compression running at
/// once (so at most as many as the cooperative pool has threads, or the width), created on
/// first need and kept for the run.
///
/// A thread gets back the workspace it used last when that one is idle
/// (``ThreadAffinePool``).
final class WorkspacePool: Sendable {
  private let idle = ThreadAffinePool<CompressionWorkspace>()
  /// The engine every workspace compresses with.
  let engine: Engine
  private let level: CompressionLevel
  /// Where files are cut into chunks; every workspace is sized for its longest chunk.
  let chunking: Chunking

  init(engine: Engine, level: CompressionLevel, chunking: Chunking) {
    self.engine = engine
    self.level = level
    self.chunking = chunking
  }

  /// Runs `body` with a workspace nobody else is using, then returns it to the pool.
  ///
  /// - Throws: ``FileFailure/engine(_:)`` when a new workspace cannot be created, or what
  ///   `body` throws.
  func withWorkspace<R>(
    _ body: (CompressionWorkspace) throws(FileFailure) -> R
  ) throws(FileFailure) -> R {
    try idle.lend(
      make: { () throws(EngineError) in
        try CompressionWorkspace(engine: engine, level: level, chunking: chunking)
      }, body)
  }
}
