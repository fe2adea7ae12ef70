import CZlib

/// The zlib engine's decompressor: one raw inflate stream (`inflateInit2(-15)`), reused from
/// member to member with `inflateReset`. Like ``ZlibDeflater``, the `z_stream` lives at a
/// fixed heap address.
final class ZlibInflater: RawInflater {
  private let stream: UnsafeMutablePointer<z_stream>

  /// Creates the stream.
  ///
  /// - Throws: ``EngineError`` when zlib cannot allocate it (`Z_MEM_ERROR`).
  init() throws(EngineError) {
    stream = .allocate(capacity: 1)
    stream.initialize(to: z_stream())
    let code = squeeze_inflateInit2(stream, -15)
    guard code == Z_OK else {
      let error = ZlibError.make(code: code, stream: stream)
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

  func reset() {
    inflateReset(stream)
  }

  /// `inflateSetDictionary`, which raw inflate accepts at any time before data needs it.
  func setDictionary(_ dictionary: UnsafeRawBufferPointer) throws(EngineError) {
    guard let base = dictionary.baseAddress, dictionary.count > 0 else { return }
    let code = inflateSetDictionary(
      stream, base.assumingMemoryBound(to: Bytef.self), UInt32(dictionary.count))
    guard code == Z_OK else { throw ZlibError.make(code: code, stream: stream) }
  }

  /// One call to `inflate` with `Z_NO_FLUSH`. `Z_BUF_ERROR` (no progress possible) is not
  /// an error; `Z_NEED_DICT` is (a preset dictionary is never valid in gzip).
  func inflate(input: UnsafeRawBufferPointer, output: UnsafeMutableRawBufferPointer)
    throws(InflateError) -> InflateStep
  {
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
    case Z_OK, Z_BUF_ERROR:
      return InflateStep(consumed: consumed, produced: produced, finished: false)
    case Z_STREAM_END:
      return InflateStep(consumed: consumed, produced: produced, finished: true)
    case Z_NEED_DICT:
      throw InflateError(
        error: ZlibError.make(
          code: Z_DATA_ERROR, message: "deflate stream needs a preset dictionary"),
        consumed: consumed)
    default:
      throw InflateError(error: ZlibError.make(code: code, stream: stream), consumed: consumed)
    }
  }

  /// zlib consumes nothing past the end of a stream.
  func takeBytesPastTheEnd() -> [UInt8] { [] }

  /// zlib's `data_type` after a call is the unused bits of the last byte, plus 64 in the
  /// last block, plus 128 when it stopped right before a block header (zlib manual,
  /// `inflate`): exactly 128 means a block boundary on a byte boundary, not the last block.
  var endsOnByteAlignedBlockBoundary: Bool {
    stream.pointee.data_type == 128 && stream.pointee.avail_in == 0
  }
}
