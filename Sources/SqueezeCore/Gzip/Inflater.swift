import CZlib

/// One zlib inflate stream reading raw deflate data (RFC 1951, `windowBits` -15): squeeze
/// parses gzip headers and trailers itself, so errors can say which field is wrong.
///
/// Like ``Deflater``, the `z_stream` lives at a fixed heap address, and one `Inflater` is reused
/// from member to member with ``reset()`` (`inflateReset`). Not thread-safe: one thread at a
/// time.
final class Inflater {
  private let stream: UnsafeMutablePointer<z_stream>

  /// Creates a stream: `inflateInit2(-15)`.
  ///
  /// - Throws: ``ZlibError`` when zlib cannot allocate the stream (`Z_MEM_ERROR`).
  init() throws(ZlibError) {
    stream = .allocate(capacity: 1)
    stream.initialize(to: z_stream())
    let code = squeeze_inflateInit2(stream, -15)
    guard code == Z_OK else {
      let error = ZlibError(code: code, stream: stream)
      stream.deinitialize(count: 1)
      stream.deallocate()
      throw error
    }
  }

  deinit {
    inflateEnd(stream)
    stream.deinitialize(count: 1)
    stream.deallocate()
  }

  /// Starts a new deflate stream (`inflateReset`).
  func reset() {
    inflateReset(stream)
  }

  /// One call to zlib's `inflate` with `Z_NO_FLUSH`.
  ///
  /// - Returns: bytes consumed from `input`, bytes written to `output`, and whether the
  ///   deflate stream ended (`Z_STREAM_END`: its last block was decoded).
  /// - Throws: ``InflateError``: zlib's error for corrupt data (`Z_DATA_ERROR`), a preset
  ///   dictionary (`Z_NEED_DICT`, never valid in gzip) or memory exhaustion, and how many
  ///   bytes of `input` zlib had consumed when it stopped; `Z_BUF_ERROR` (no progress
  ///   possible) is not an error.
  func inflate(
    input: UnsafeRawBufferPointer, output: UnsafeMutableRawBufferPointer
  ) throws(InflateError) -> (consumed: Int, produced: Int, finished: Bool) {
    stream.pointee.next_in = input.baseAddress.map {
      UnsafeMutablePointer(mutating: $0.assumingMemoryBound(to: Bytef.self))
    }
    stream.pointee.avail_in = UInt32(input.count)
    stream.pointee.next_out = output.baseAddress?.assumingMemoryBound(to: Bytef.self)
    stream.pointee.avail_out = UInt32(output.count)
    let code = CZlib.inflate(stream, Z_NO_FLUSH)
    let consumed = input.count - Int(stream.pointee.avail_in)
    let produced = output.count - Int(stream.pointee.avail_out)
    stream.pointee.next_in = nil
    stream.pointee.next_out = nil
    switch code {
    case Z_OK, Z_BUF_ERROR: return (consumed, produced, false)
    case Z_STREAM_END: return (consumed, produced, true)
    case Z_NEED_DICT:
      throw InflateError(
        zlib: ZlibError(code: Z_DATA_ERROR, message: "deflate stream needs a preset dictionary"),
        consumed: consumed)
    default:
      throw InflateError(zlib: ZlibError(code: code, stream: stream), consumed: consumed)
    }
  }
}

/// A failed `inflate` call: zlib's error, and the input bytes it consumed before stopping
/// (so the error's position in the file does not depend on how the input was cut).
struct InflateError: Error {
  var zlib: ZlibError
  var consumed: Int
}
