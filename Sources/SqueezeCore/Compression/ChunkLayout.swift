import SqueezeEngines

/// How a file is cut into chunks, so that its chunks can be compressed in parallel into one
/// gzip member that any gunzip reads.
///
/// Where the chunks end is the ``Chunking`` rule's: every `size` bytes (chunk `k` covers
/// `k·size ..< min((k+1)·size, length)`), or where the content says (`--rsyncable`). Each
/// chunk is compressed on its own (`ChunkDeflater`): with the zlib engine primed with the
/// 32 KiB of the source right before it as dictionary, so matches still reach back across
/// the cut (pigz's layout); with the fast engine independently. Every chunk but the last ends
/// on a byte boundary with an empty stored block (the sync marker), the last ends the stream;
/// the concatenation is one valid deflate stream, and the chunks' CRC-32s combine with
/// `crc32_combine` into the trailer's. The cut depends only on the data and the rule, never
/// on `--jobs` or the isolation mode, so the output is byte-identical whatever runs it. A
/// file of one chunk is compressed exactly as a single deflate stream.
package struct ChunkLayout: Sendable, Equatable {
  /// Where chunks end.
  let chunking: Chunking
  /// The file's length in bytes.
  let length: Int64
  /// Source bytes before a chunk that prime it as a dictionary (the engine's
  /// ``Engine/chunkDictionarySize``: 32 KiB for zlib, 0 for the fast engine).
  let dictionarySize: Int

  /// The deflate window, and so the most history a dictionary can give: 32 KiB (RFC 1951).
  static let windowSize = 32 * 1024
  /// The smallest chunk size accepted: a chunk must be at least one window long.
  package static let minimumChunkSize = 32 * 1024
  /// The largest chunk size accepted: 64 MiB.
  package static let maximumChunkSize = 64 * 1024 * 1024

  /// The dictionary of the chunk that starts at `start`: the up to ``dictionarySize`` bytes
  /// right before it.
  func dictionaryRange(before start: Int64) -> Range<Int64> {
    max(0, start - Int64(dictionarySize))..<start
  }
}

/// One compressed chunk, handed from the task that compressed it to the task that writes the
/// member in order.
struct CompressedChunk: Sendable {
  /// The chunk's index in the file.
  var index: Int
  /// The raw deflate bytes.
  var bytes: [UInt8]
  /// CRC-32 of the chunk's source bytes.
  var crc: UInt32
  /// Source bytes in the chunk.
  var length: Int
}
