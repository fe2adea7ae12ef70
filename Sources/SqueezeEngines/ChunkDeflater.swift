/// Compresses the chunks of one file, one chunk per call, into raw deflate data (RFC 1951:
/// no zlib or gzip wrapper) that joins into one deflate stream: the caller writes the gzip
/// header before the first chunk and the trailer (CRC-32, ISIZE) after the last.
///
/// Every chunk but the last ends on a byte boundary with an empty, non-final stored block,
/// the bytes `00 00 ff ff` (RFC 1951 section 3.2.4; what zlib's `Z_SYNC_FLUSH` writes); the last
/// chunk ends with a final block (BFINAL set). Output depends only on the chunk, its
/// dictionary, `isLast` and the level, never on which thread or when, so a file's bytes are
/// the same whatever `--jobs` is.
///
/// Not thread-safe: one thread at a time (each running compression borrows its own).
public protocol ChunkDeflater: AnyObject {
  /// The most bytes ``deflate(chunk:dictionary:isLast:into:)`` writes for a chunk of
  /// `chunkLength` bytes, the sync marker included.
  func bound(chunkLength: Int) -> Int

  /// Compresses one chunk.
  ///
  /// - Parameters:
  ///   - chunk: the chunk's source bytes.
  ///   - dictionary: the up to ``Engine/chunkDictionarySize`` source bytes right before
  ///     the chunk (empty for the first chunk, and always for engines that take none).
  ///   - isLast: true for the file's last chunk, which ends the deflate stream.
  ///   - output: room for at least ``bound(chunkLength:)`` bytes.
  /// - Returns: the number of bytes written to `output`.
  /// - Throws: ``EngineError`` when the library fails (including output that does not fit,
  ///   which a buffer of ``bound(chunkLength:)`` bytes rules out).
  func deflate(
    chunk: UnsafeRawBufferPointer, dictionary: UnsafeRawBufferPointer, isLast: Bool,
    into output: UnsafeMutableRawBufferPointer
  ) throws(EngineError) -> Int
}

/// The empty, non-final stored block that ends every chunk but the last: its length fields
/// (LEN 0, NLEN 0xffff, RFC 1951 section 3.2.4) after a block header padded to a byte boundary.
public enum SyncMarker {
  /// The four bytes a chunk ends with, and what a decoder looks for to find chunks.
  public static let bytes: [UInt8] = [0x00, 0x00, 0xff, 0xff]
}
