import CZlib

/// The zlib engine's compressor: one raw deflate stream (`windowBits` -15, memLevel 8,
/// `Z_DEFAULT_STRATEGY`: zlib's defaults) reset for every chunk, primed with the previous
/// 32 KiB as dictionary, and sync-flushed (pigz's layout; the bytes squeeze has always
/// written).
///
/// zlib remembers the address of its `z_stream` and checks it on every call, so the stream
/// lives at a fixed heap address for the object's lifetime. `deflateReset` keeps zlib's
/// allocations between chunks and files, measurably cheaper on small files than a new
/// stream each time.
final class ZlibDeflater: ChunkDeflater {
  /// The zlib stream, allocated once.
  private let stream: UnsafeMutablePointer<z_stream>

  /// Creates the stream: `deflateInit2(level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY)`.
  ///
  /// - Throws: ``EngineError`` when zlib cannot allocate it (`Z_MEM_ERROR`).
  init(level: Int) throws(EngineError) {
    stream = .allocate(capacity: 1)
    stream.initialize(to: z_stream())
    let code = squeeze_deflateInit2(stream, Int32(level), -15, 8, Z_DEFAULT_STRATEGY)
    guard code == Z_OK else {
      let error = ZlibError.make(code: code, stream: stream)
      stream.deinitialize(count: 1)
      stream.deallocate()
      throw error
    }
  }

  deinit {
    deflateEnd(stream)
    stream.deinitialize(count: 1)
    stream.deallocate()
  }

  /// `deflateBound` + 16: room for one call's output and its sync flush marker.
  func bound(chunkLength: Int) -> Int {
    Int(deflateBound(stream, UInt(chunkLength))) + 16
  }

  /// Resets the stream, primes it with `dictionary` (`deflateSetDictionary`, allowed for raw
  /// deflate right after a reset), and compresses the chunk with `Z_SYNC_FLUSH`, or
  /// `Z_FINISH` for the last chunk, in one call.
  func deflate(
    chunk: UnsafeRawBufferPointer, dictionary: UnsafeRawBufferPointer, isLast: Bool,
    into output: UnsafeMutableRawBufferPointer
  ) throws(EngineError) -> Int {
    deflateReset(stream)
    if let base = dictionary.baseAddress, dictionary.count > 0 {
      let code = deflateSetDictionary(
        stream, base.assumingMemoryBound(to: Bytef.self), UInt32(dictionary.count))
      guard code == Z_OK else { throw ZlibError.make(code: code, stream: stream) }
    }
    stream.pointee.next_in = chunk.baseAddress.map {
      UnsafeMutablePointer(mutating: $0.assumingMemoryBound(to: Bytef.self))
    }
    stream.pointee.avail_in = UInt32(chunk.count)
    stream.pointee.next_out = output.baseAddress?.assumingMemoryBound(to: Bytef.self)
    stream.pointee.avail_out = UInt32(output.count)
    let code = CZlib.deflate(stream, isLast ? Z_FINISH : Z_SYNC_FLUSH)
    let consumed = chunk.count - Int(stream.pointee.avail_in)
    let produced = output.count - Int(stream.pointee.avail_out)
    stream.pointee.next_in = nil
    stream.pointee.next_out = nil
    switch code {
    case Z_OK, Z_BUF_ERROR, Z_STREAM_END: break
    default: throw ZlibError.make(code: code, stream: stream)
    }
    // With room for deflateBound, one call consumes everything and completes the flush.
    guard consumed == chunk.count, isLast ? code == Z_STREAM_END : produced < output.count else {
      throw ZlibError.make(code: Z_BUF_ERROR, message: "chunk output did not fit its buffer")
    }
    return produced
  }
}
