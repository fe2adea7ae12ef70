import CLibdeflate

/// The fast engine's compressor: libdeflate's whole-buffer `libdeflate_deflate_compress`,
/// one call per chunk, with no dictionary (libdeflate takes none), so chunks are
/// independent.
///
/// libdeflate ends every output with a final block. For every chunk but the last, the
/// compressor finds that block (``FinalBlockLocator``), clears its BFINAL bit, and ends the
/// chunk on a byte boundary with an empty stored block, the sync marker `00 00 ff ff`: the
/// layout zlib's `Z_SYNC_FLUSH` gives, so the chunks of a file join into one deflate stream
/// and a reader can find where each independent chunk starts.
///
/// Already-compressed data: a chunk the ``IncompressibleProbe`` finds incompressible is
/// written as stored blocks, at copying speed.
///
/// Tiny inputs: a file's last chunk of at most 128 bytes is also compressed by zlib
/// (``TinyInputDeflater``), whose output is kept when shorter, so a tiny file is never
/// larger than gzip's at the same level.
///
/// Small inputs: at levels 6 and 7, chunks of at most ``smallChunkSize`` bytes are
/// compressed with libdeflate's level 8, whose lazy2 parser costs little more on small
/// inputs. libdeflate -6 is 0.10 % larger than zlib -6 on the corpus's 20,000 files of
/// 4 KiB or less (0.2 to 0.7 % on files under 2 KiB); with level 8 there it is 0.03 %
/// smaller. Raising the limit to 16 KiB saves only 0.13 % more on `tree/` for 5 % more
/// libdeflate instructions (callgrind), so it stops at 4 KiB (`EnginesAndLevels.md`).
final class LibdeflateDeflater: ChunkDeflater {
  private let compressor: OpaquePointer
  /// Whether long chunks that are not a file's last are compressed in halves
  /// (``halvesLevel``).
  private let compressesInHalves: Bool
  /// The compressor for chunks of at most ``smallChunkSize`` bytes (the same one unless the
  /// level is 6 or 7).
  private let smallCompressor: OpaquePointer
  private let locator = FinalBlockLocator()
  /// Decides when a chunk is stored instead (already-compressed data).
  private let probe: IncompressibleProbe
  /// zlib's second opinion on a file's tiny last chunk.
  private let tiny: TinyInputDeflater

  /// The largest chunk compressed with ``smallCompressor``: 4 KiB.
  static let smallChunkSize = 4 << 10

  /// The shortest chunk compressed in halves at libdeflate's level 1 (``halvesLevel``): 128 KiB.
  static let halvesMinimumLength = 128 << 10

  /// The libdeflate level at which a long chunk that is not a file's last is compressed as
  /// two halves, each its own deflate stream, whose final blocks are found in one walk of
  /// both (``FinalBlockLocator/locate(_:_:)``). At this level the walk is a sixth of the
  /// CPU, and two walks interleaved cost two thirds of one after the other; the halves cost
  /// 0.25 % more bytes on the corpus's 132 MB tar (a match cannot reach back across the
  /// middle of a chunk), still 0.75 % under `gzip -3`. At the higher levels the walk is a
  /// small share of the work and the halves are not worth their bytes.
  static let halvesLevel = 1

  /// Bytes a chunk can grow by when it is reopened: one byte for a stored block header that
  /// does not fit in the last byte's free bits, and the four of the sync marker.
  static let reopeningRoom = 5

  /// Allocates a compressor (`libdeflate_alloc_compressor`).
  ///
  /// - Parameters:
  ///   - level: libdeflate's level.
  ///   - tinyInputLevel: the squeeze level whose `gzip` a tiny file must not exceed, for
  ///     zlib's second opinion (``TinyInputDeflater``); `level` when nil. The level map gives
  ///     squeeze `-3` to libdeflate's level 1, and a tiny file there is held to `gzip -3`.
  /// - Throws: ``EngineError`` when libdeflate cannot allocate it.
  init(level: Int, tinyInputLevel: Int? = nil) throws(EngineError) {
    guard let compressor = libdeflate_alloc_compressor(Int32(level)) else {
      throw Self.allocationFailure(level: level)
    }
    self.compressor = compressor
    compressesInHalves = level == Self.halvesLevel
    do {
      probe = try IncompressibleProbe()
      tiny = try TinyInputDeflater(level: tinyInputLevel ?? level)
    } catch {
      libdeflate_free_compressor(compressor)
      throw error
    }
    let smallLevel = Self.smallChunkLevel(forLevel: level)
    if smallLevel == level {
      smallCompressor = compressor
    } else if let small = libdeflate_alloc_compressor(Int32(smallLevel)) {
      smallCompressor = small
    } else {
      libdeflate_free_compressor(compressor)
      throw Self.allocationFailure(level: smallLevel)
    }
  }

  deinit {
    if smallCompressor != compressor { libdeflate_free_compressor(smallCompressor) }
    libdeflate_free_compressor(compressor)
  }

  /// The libdeflate level small chunks are compressed at: 8 for levels 6 and 7, the level
  /// itself otherwise.
  static func smallChunkLevel(forLevel level: Int) -> Int {
    (6...7).contains(level) ? 8 : level
  }

  private static func allocationFailure(level: Int) -> EngineError {
    EngineError(
      library: .libdeflate, code: 0,
      detail: "cannot allocate a compressor at level \(level) (libdeflate)")
  }

  /// `libdeflate_deflate_compress_bound` plus the room reopening a chunk takes (for each
  /// half, where a chunk of that length is compressed in halves).
  func bound(chunkLength: Int) -> Int {
    let whole = max(
      libdeflate_deflate_compress_bound(compressor, chunkLength) + Self.reopeningRoom,
      libdeflate_deflate_compress_bound(smallCompressor, chunkLength) + Self.reopeningRoom,
      StoredBlocks.size(ofLength: chunkLength, isLast: false))
    guard compressesInHalves && chunkLength >= Self.halvesMinimumLength else { return whole }
    let half = chunkLength / 2
    return max(
      whole,
      libdeflate_deflate_compress_bound(compressor, half) + Self.reopeningRoom
        + libdeflate_deflate_compress_bound(compressor, chunkLength - half) + Self.reopeningRoom)
  }

  /// Compresses the chunk (the dictionary is ignored: libdeflate has none), then, unless it
  /// is the last, reopens the stream as described above; or, when the probe finds the chunk
  /// already compressed, writes it as stored blocks (``IncompressibleProbe``).
  func deflate(
    chunk: UnsafeRawBufferPointer, dictionary: UnsafeRawBufferPointer, isLast: Bool,
    into output: UnsafeMutableRawBufferPointer
  ) throws(EngineError) -> Int {
    if probe.isIncompressible(chunk) {
      guard let written = StoredBlocks.write(chunk, isLast: isLast, into: output) else {
        throw EngineError(library: .libdeflate, code: 0, detail: "no room for stored blocks")
      }
      return written
    }
    if !isLast && compressesInHalves && chunk.count >= Self.halvesMinimumLength {
      return try deflateInHalves(chunk, into: output)
    }
    let produced = try compress(
      chunk, with: chunk.count <= Self.smallChunkSize ? smallCompressor : compressor,
      into: output)
    if isLast {
      guard chunk.count <= TinyInputDeflater.maximumLength else { return produced }
      return tiny.smaller(chunk, than: produced, in: output)
    }
    let location = try locator.locate(UnsafeRawBufferPointer(rebasing: output[..<produced]))
    try Self.checkEnd(location, produced: produced)
    return Self.reopen(output, location: location)
  }

  /// One `libdeflate_deflate_compress` call, leaving ``reopeningRoom`` bytes of `output`
  /// free.
  ///
  /// - Returns: the bytes written.
  /// - Throws: ``EngineError`` when the output does not fit.
  private func compress(
    _ input: UnsafeRawBufferPointer, with compressor: OpaquePointer,
    into output: UnsafeMutableRawBufferPointer
  ) throws(EngineError) -> Int {
    guard output.count > Self.reopeningRoom, let outputBase = output.baseAddress else {
      throw EngineError(library: .libdeflate, code: 0, detail: "no room for compressed data")
    }
    let produced = libdeflate_deflate_compress(
      compressor, input.baseAddress, input.count, outputBase, output.count - Self.reopeningRoom)
    guard produced > 0 else {
      throw EngineError(
        library: .libdeflate, code: 0, detail: "compressed data did not fit its buffer (libdeflate)"
      )
    }
    return produced
  }

  /// Compresses a chunk that is not a file's last as two deflate streams, one per half (the
  /// first half `count / 2` bytes), finds both final blocks in one walk, and joins the halves
  /// reopened: each ends with the sync marker.
  ///
  /// The second half is compressed right after the room the first half's reopening can take,
  /// and moved down onto the first's end once that is known.
  ///
  /// - Returns: the chunk's length in bytes.
  private func deflateInHalves(
    _ chunk: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
  ) throws(EngineError) -> Int {
    let half = chunk.count / 2
    let firstRoom = libdeflate_deflate_compress_bound(compressor, half) + Self.reopeningRoom
    guard output.count > firstRoom else {
      throw EngineError(library: .libdeflate, code: 0, detail: "no room for compressed data")
    }
    let firstLength = try compress(
      UnsafeRawBufferPointer(rebasing: chunk[..<half]), with: compressor,
      into: UnsafeMutableRawBufferPointer(rebasing: output[..<firstRoom]))
    let secondStart = firstLength + Self.reopeningRoom
    let secondLength = try compress(
      UnsafeRawBufferPointer(rebasing: chunk[half...]), with: compressor,
      into: UnsafeMutableRawBufferPointer(rebasing: output[secondStart...]))
    let (first, second) = try locator.locate(
      UnsafeRawBufferPointer(rebasing: output[..<firstLength]),
      UnsafeRawBufferPointer(rebasing: output[secondStart..<(secondStart + secondLength)]))
    try Self.checkEnd(first, produced: firstLength)
    try Self.checkEnd(second, produced: secondLength)
    let joined = Self.reopen(output, location: first)
    // The regions may overlap: copyMemory moves as memmove does.
    UnsafeMutableRawBufferPointer(rebasing: output[joined..<(joined + secondLength)]).copyMemory(
      from: UnsafeRawBufferPointer(rebasing: output[secondStart..<(secondStart + secondLength)]))
    return joined
      + Self.reopen(
        UnsafeMutableRawBufferPointer(rebasing: output[joined...]), location: second)
  }

  /// Checks that the final block ends in the stream's last byte, as libdeflate writes it.
  ///
  /// - Throws: ``EngineError`` when it does not.
  private static func checkEnd(_ location: FinalBlockLocator.Location, produced: Int)
    throws(EngineError)
  {
    guard (location.endBit + 7) / 8 == produced else {
      throw EngineError(
        library: .libdeflate, code: 0,
        detail:
          "the final block ends at bit \(location.endBit), not in the last of \(produced) bytes")
    }
  }

  /// Clears the final block's BFINAL bit, zeroes the bits after its end, and appends an
  /// empty non-final stored block (a 3-bit header of zeros, padding to the byte boundary,
  /// LEN 0 and NLEN 0xffff: RFC 1951 section 3.2.4).
  ///
  /// - Returns: the chunk's new length in bytes.
  static func reopen(_ output: UnsafeMutableRawBufferPointer, location: FinalBlockLocator.Location)
    -> Int
  {
    output[location.headerBit / 8] &= ~(1 << UInt8(location.headerBit % 8))
    let used = location.endBit % 8
    if used != 0 { output[location.endBit / 8] &= UInt8(1 << used - 1) }
    // The stored block's header takes 3 bits from the end of the final block's last bit.
    var length = (location.endBit + 3 + 7) / 8
    if length > (location.endBit + 7) / 8 { output[length - 1] = 0 }
    for byte in SyncMarker.bytes {
      output[length] = byte
      length += 1
    }
    return length
  }
}
