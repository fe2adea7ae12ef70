import CZlib

/// How a file is cut into blocks, pigz-style, so that its blocks can be compressed in
/// parallel into one gzip member that any gunzip reads.
///
/// Block `k` covers source bytes `k·size ..< min((k+1)·size, length)`. Each block is its own
/// run of deflate (zlib reset between blocks), primed with the last 32 KiB of the block
/// before it as the dictionary, so matches can still reach back across the cut; every block
/// but the last ends with a sync flush (an empty stored block, ending on a byte boundary),
/// the last with `Z_FINISH`. The concatenation is one valid deflate stream; the CRC-32s of
/// the blocks combine with `crc32_combine` into the trailer's. The cut depends only on the
/// block size, never on `--jobs` or the isolation mode, so the output is byte-identical
/// whatever runs it. A file of one block is compressed exactly as a single deflate stream.
struct ChunkLayout: Sendable, Equatable {
  /// Bytes per block.
  let chunkSize: Int
  /// The file's length in bytes.
  let length: Int64

  /// The deflate window, and so the most history a dictionary can give: 32 KiB (RFC 1951).
  static let dictionarySize = 32 * 1024
  /// The default block size: 128 KiB, pigz's default (`-b 128`), confirmed by measurement
  /// here (README, "Performance").
  static let defaultChunkSize = 128 * 1024
  /// The smallest block size accepted: a block must be at least one dictionary long.
  static let minimumChunkSize = 32 * 1024
  /// The largest block size accepted: 64 MiB.
  static let maximumChunkSize = 64 * 1024 * 1024

  /// The number of blocks; an empty file still has one (empty) block.
  var count: Int {
    length <= 0 ? 1 : Int((length + Int64(chunkSize) - 1) / Int64(chunkSize))
  }

  /// The byte range of block `index` in the source.
  func range(of index: Int) -> Range<Int64> {
    let start = Int64(index) * Int64(chunkSize)
    return start..<min(start + Int64(chunkSize), max(length, 0))
  }

  /// The dictionary of block `index`: the up to 32 KiB right before it.
  func dictionaryRange(of index: Int) -> Range<Int64> {
    let start = range(of: index).lowerBound
    return max(0, start - Int64(ChunkLayout.dictionarySize))..<start
  }
}

/// One compressed block, handed from the task that compressed it to the task that writes the
/// member in order.
struct CompressedChunk: Sendable {
  /// The block's index in the file.
  var index: Int
  /// The raw deflate bytes.
  var bytes: [UInt8]
  /// CRC-32 of the block's source bytes.
  var crc: UInt32
  /// Source bytes in the block.
  var length: Int
}

extension Deflater {
  /// Deflates one block as ``ChunkLayout`` describes: reset, prime with `dictionary`, compress
  /// `input` with `Z_SYNC_FLUSH` (or `Z_FINISH` for the last block) into `output`.
  ///
  /// - Parameter output: room for at least ``bound(sourceLength:)`` of the input.
  /// - Returns: the number of bytes written to `output`.
  /// - Throws: ``ZlibError``; also when `output` is too small (`Z_BUF_ERROR`), which the
  ///   callers' buffer sizes rule out.
  func deflateChunk(
    _ input: UnsafeRawBufferPointer, dictionary: UnsafeRawBufferPointer, isLast: Bool,
    into output: UnsafeMutableRawBufferPointer
  ) throws(ZlibError) -> Int {
    reset()
    try setDictionary(dictionary)
    let flush = isLast ? Z_FINISH : Z_SYNC_FLUSH
    let step = try deflate(input: input, output: output, flush: flush)
    // With room for deflateBound, one call consumes everything and completes the flush.
    guard step.consumed == input.count, isLast ? step.finished : step.produced < output.count else {
      throw ZlibError(code: Z_BUF_ERROR, message: "block output did not fit its buffer")
    }
    return step.produced
  }
}
