/// Decompresses raw deflate data (RFC 1951) as it streams in. squeeze parses gzip headers
/// and trailers itself (RFC 1952), so errors can say which field is wrong; an inflater sees
/// only the deflate stream of one member at a time.
///
/// Not thread-safe: one thread at a time (each running decompression borrows its own).
public protocol RawInflater: AnyObject {
  /// Starts a new deflate stream, with an empty window.
  func reset()

  /// Primes the window with `dictionary`, the (up to 32 KiB of) output that came before the
  /// point where decoding resumes: how a stream cut at a block boundary continues on
  /// another inflater. Call it right after ``reset()``.
  ///
  /// - Throws: ``EngineError`` when the library refuses it.
  func setDictionary(_ dictionary: UnsafeRawBufferPointer) throws(EngineError)

  /// Decodes what it can of `input` into `output`.
  ///
  /// - Returns: bytes of `input` used, bytes written to `output`, and whether the final
  ///   block ended (the stream is complete: what follows in the input, the gzip trailer, was
  ///   not consumed).
  /// - Throws: ``InflateError``: the library's error for corrupt data, and how many bytes
  ///   of `input` it had used when it stopped.
  func inflate(input: UnsafeRawBufferPointer, output: UnsafeMutableRawBufferPointer)
    throws(InflateError) -> InflateStep

  /// The bytes after the end of the stream that the inflater took in calls before the one
  /// that finished it, in order, and forgets them: the caller reads them as the input that
  /// follows the stream (the gzip trailer), before the rest of its input. (A finishing
  /// call never counts bytes past the end as consumed, but ISA-L reads up to 8 bytes ahead,
  /// some of which may have come in earlier calls.) Empty for zlib, which never reads ahead.
  func takeBytesPastTheEnd() -> [UInt8]

  /// True when everything fed so far was decoded and ended exactly at a block boundary, on
  /// a byte boundary, with no bit held back, and the stream is not over: where a chunk that
  /// ends with a sync marker (``SyncMarker``) leaves it.
  var endsOnByteAlignedBlockBoundary: Bool { get }
}

/// What one ``RawInflater/inflate(input:output:)`` call did.
public struct InflateStep: Sendable, Equatable {
  /// Bytes of the input used.
  public var consumed: Int
  /// Bytes written to the output.
  public var produced: Int
  /// True when the final deflate block has ended.
  public var finished: Bool

  /// A step that used `consumed` input bytes, wrote `produced` and did or did not finish.
  public init(consumed: Int, produced: Int, finished: Bool) {
    self.consumed = consumed
    self.produced = produced
    self.finished = finished
  }
}

/// A failed ``RawInflater/inflate(input:output:)`` call: the library's error, and the bytes
/// of the input used before it stopped (so an error's position in a file does not depend on
/// how the input was cut).
public struct InflateError: Error, Sendable, Equatable {
  /// What the library said.
  public var error: EngineError
  /// Bytes of the input used before the error.
  public var consumed: Int

  /// The library's `error` after using `consumed` input bytes.
  public init(error: EngineError, consumed: Int) {
    self.error = error
    self.consumed = consumed
  }
}
