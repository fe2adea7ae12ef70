import CZlib

/// One zlib deflate stream producing raw deflate data (RFC 1951: no zlib or gzip wrapper,
/// `windowBits` -15), so squeeze writes the gzip header and trailer itself and can prime
/// blocks with a dictionary.
///
/// zlib remembers the address of its `z_stream` and checks it on every call, so the stream
/// lives at a fixed heap address for the object's lifetime. One `Deflater` serves many
/// files in turn: ``reset()`` (`deflateReset`) keeps zlib's allocations, which is measurably
/// cheaper on small files than a new stream each time (platform notes).
///
/// Not thread-safe: one thread at a time (see ``CompressionWorkspace``).
final class Deflater {
  /// The zlib stream, allocated once.
  private let stream: UnsafeMutablePointer<z_stream>
  /// The compression level the stream was created with.
  let level: CompressionLevel

  /// Creates a stream: `deflateInit2(level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY)`,
  /// zlib's defaults (memLevel 8) for raw deflate.
  ///
  /// - Throws: ``ZlibError`` when zlib cannot allocate the stream (`Z_MEM_ERROR`).
  init(level: CompressionLevel) throws(ZlibError) {
    self.level = level
    stream = .allocate(capacity: 1)
    stream.initialize(to: z_stream())
    let code = squeeze_deflateInit2(stream, level.value, -15, 8, Z_DEFAULT_STRATEGY)
    guard code == Z_OK else {
      let error = ZlibError(code: code, stream: stream)
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

  /// Starts a new deflate stream with the same settings (`deflateReset`).
  func reset() {
    deflateReset(stream)
  }

  /// Primes the stream's history with `dictionary` (at most the last 32 KiB count), so
  /// the first bytes of a block can refer back into the previous block
  /// (`deflateSetDictionary`; for raw deflate it may be called right after a reset).
  ///
  /// - Throws: ``ZlibError`` (`Z_STREAM_ERROR`) when called at the wrong time.
  func setDictionary(_ dictionary: UnsafeRawBufferPointer) throws(ZlibError) {
    guard let base = dictionary.baseAddress, dictionary.count > 0 else { return }
    let code = deflateSetDictionary(
      stream, base.assumingMemoryBound(to: Bytef.self), UInt32(dictionary.count))
    guard code == Z_OK else { throw ZlibError(code: code, stream: stream) }
  }

  /// The most bytes deflating `sourceLength` bytes in one call can produce, plus room for a
  /// sync flush marker (`deflateBound` + 16).
  func bound(sourceLength: Int) -> Int {
    Int(deflateBound(stream, UInt(sourceLength))) + 16
  }

  /// One call to zlib's `deflate`: consumes what it can of `input` and writes what it can
  /// into `output`.
  ///
  /// - Parameters:
  ///   - input: bytes to compress.
  ///   - output: free space for compressed bytes.
  ///   - flush: `Z_NO_FLUSH`, `Z_SYNC_FLUSH` (end on a byte boundary) or `Z_FINISH`.
  /// - Returns: bytes consumed from `input`, bytes written to `output`, and whether the
  ///   stream ended (`Z_STREAM_END`, only with `Z_FINISH`).
  /// - Throws: ``ZlibError`` for any code but `Z_OK`, `Z_STREAM_END` and `Z_BUF_ERROR`
  ///   (the last only means no progress was possible with this space).
  func deflate(
    input: UnsafeRawBufferPointer, output: UnsafeMutableRawBufferPointer, flush: Int32
  ) throws(ZlibError) -> (consumed: Int, produced: Int, finished: Bool) {
    let inputBase = input.baseAddress.map {
      UnsafeMutablePointer(mutating: $0.assumingMemoryBound(to: Bytef.self))
    }
    stream.pointee.next_in = inputBase
    stream.pointee.avail_in = UInt32(input.count)
    stream.pointee.next_out = output.baseAddress?.assumingMemoryBound(to: Bytef.self)
    stream.pointee.avail_out = UInt32(output.count)
    let code = CZlib.deflate(stream, flush)
    let consumed = input.count - Int(stream.pointee.avail_in)
    let produced = output.count - Int(stream.pointee.avail_out)
    stream.pointee.next_in = nil
    stream.pointee.next_out = nil
    switch code {
    case Z_OK, Z_BUF_ERROR: return (consumed, produced, false)
    case Z_STREAM_END: return (consumed, produced, true)
    default: throw ZlibError(code: code, stream: stream)
    }
  }
}
