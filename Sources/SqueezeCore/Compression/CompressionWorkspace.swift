import Synchronization

/// The zlib stream and the two buffers one chunk compression uses, reused from chunk to
/// chunk and file to file.
///
/// Per-file allocation of a `z_stream` and buffers costs page faults and zlib setup on every
/// small file; keeping one workspace per concurrently running compression and resetting it
/// (`deflateReset`) was 21 % faster on a folder of 6,000 small files (platform notes).
/// Memory: zlib's deflate state (256 KiB at memLevel 8) plus ``input`` (a dictionary and a
/// chunk) and ``output`` (the deflate bound of a chunk, and room for a header and trailer).
// @unchecked Sendable: a workspace is only ever used by one thread at a time. It is
// reachable only through `WorkspacePool.withWorkspace`, which removes it from the pool under
// the pool's mutex, lends it to one synchronous closure (no suspension point inside), and
// puts it back afterwards; no reference escapes the closure.
final class CompressionWorkspace: @unchecked Sendable {
  /// The reusable deflate stream.
  let deflater: Deflater
  /// A dictionary's worth (32 KiB) followed by one chunk of source bytes.
  let input: UnsafeMutableRawBufferPointer
  /// Compressed bytes of one chunk, with room before them for a gzip header and after
  /// them for the trailer.
  let output: UnsafeMutableRawBufferPointer
  /// The chunk size the buffers were sized for.
  let chunkSize: Int

  /// Bytes reserved in ``output`` for a gzip header (with a 255-byte name) and a trailer.
  static let headerAndTrailerRoom = 512

  init(level: CompressionLevel, chunkSize: Int) throws(ZlibError) {
    deflater = try Deflater(level: level)
    self.chunkSize = chunkSize
    input = .allocate(byteCount: ChunkLayout.dictionarySize + chunkSize, alignment: 64)
    output = .allocate(
      byteCount: deflater.bound(sourceLength: chunkSize)
        + CompressionWorkspace.headerAndTrailerRoom,
      alignment: 64)
  }

  deinit {
    input.deallocate()
    output.deallocate()
  }
}

/// Lends ``CompressionWorkspace``s to compressions: at most one per compression running at
/// once (so at most as many as the cooperative pool has threads, or the width), created on
/// first need and kept for the run.
final class WorkspacePool: Sendable {
  private let idle = Mutex<[CompressionWorkspace]>([])
  private let level: CompressionLevel
  /// The chunk size every workspace is sized for.
  let chunkSize: Int

  init(level: CompressionLevel, chunkSize: Int) {
    self.level = level
    self.chunkSize = chunkSize
  }

  /// Runs `body` with a workspace nobody else is using, then returns it to the pool.
  ///
  /// - Throws: ``FileFailure/zlib(_:)`` when a new workspace cannot be created, or what
  ///   `body` throws.
  func withWorkspace<R>(
    _ body: (CompressionWorkspace) throws(FileFailure) -> R
  ) throws(FileFailure) -> R {
    let workspace: CompressionWorkspace
    if let reused = idle.withLock({ $0.popLast() }) {
      workspace = reused
    } else {
      do {
        workspace = try CompressionWorkspace(level: level, chunkSize: chunkSize)
      } catch {
        throw .zlib(error)
      }
    }
    defer { idle.withLock { $0.append(workspace) } }
    return try body(workspace)
  }
}
