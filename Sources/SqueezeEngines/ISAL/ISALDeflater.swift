import CIsal

/// ISA-L's streaming compressor (`isal_deflate`, igzip_lib.h) on one chunk at a time, with
/// no dictionary, so chunks are independent and a big file restores on every core.
///
/// Each chunk is compressed on a reset stream with the whole chunk as input (in one call, or
/// two at levels 1 and 2: see below) and room for all of its output. The last chunk sets
/// `end_of_stream`, which ends the deflate stream with a final block. Every other chunk asks
/// for `SYNC_FLUSH`: ISA-L then ends it byte-aligned with an empty, non-final stored block,
/// the sync marker `00 00 ff ff` (igzip_lib.h: "A SYNC_ or FULL_ flush will byte align the
/// deflate block by appending an empty stored block"), the layout zlib's `Z_SYNC_FLUSH`
/// gives. Unlike libdeflate's output, the chunk needs no walk to its final block: ISA-L never
/// wrote one.
///
/// ISA-L levels 1 to 3 need a level buffer (hash table and token buffer); the default size
/// of each level (`ISAL_DEF_LVLx_DEFAULT`, 276 to 340 KiB, what `igzip` uses) is allocated
/// once and reused. For an input shorter than its hash table, ISA-L shrinks the table to the
/// input, so resetting it for a small file costs little. Level 0 (static Huffman codes, no
/// stored fallback: random data grows by 23 %) is not used.
///
/// Already-compressed data: a chunk the ``IncompressibleProbe`` finds incompressible is
/// written as stored blocks, as the libdeflate compressor does, so such data is stored the
/// same way whichever library the level uses.
///
/// The same bytes wherever the stream lies: ISA-L's levels 1 and 2 share one compression
/// loop (`isal_deflate_icf_body_hash_hist`, `igzip_icf_body_h1_gr_bt.asm` in ISA-L 2.30 and
/// still in 2.32), whose path for a stream's first byte computes the hash of the third byte
/// from a register that still holds the stream's address instead of from the data. The third
/// byte is then filed under a hash slot picked by where the stream was allocated, which
/// address-space randomisation changes from run to run, so a later match back to it is found
/// in a run where that slot happens to be the right one and missed in the others. So at
/// these levels each chunk is compressed in two calls: the first gives ISA-L
/// ``firstCallLength`` bytes without a flush, so its loop compresses the first byte alone
/// (it keeps ISAL_LOOK_AHEAD bytes back) and stops before the wrong hash is used; the second
/// gives the rest, and its loop, no longer at a stream's start, hashes every byte from the
/// data. A chunk too short for the first call (under ``firstCallLength`` + 1 bytes) is
/// stored at those levels. Level 3 has another loop and is compressed in one call.
///
/// Not thread-safe: one thread at a time.
final class ISALDeflater: ChunkDeflater {
  /// ISA-L's stream, at a fixed address for the object's lifetime.
  private let stream: UnsafeMutablePointer<isal_zstream>
  /// Whether ``stream`` was allocated here (and is released here), not placed by the caller.
  private let ownsStream: Bool
  /// The level buffer, `squeeze_isal_level_buffer_size(level)` bytes.
  private let levelBuffer: UnsafeMutableRawBufferPointer
  /// A valid input address for an empty chunk (ISA-L copies from `next_in`).
  private let emptyInput: UnsafeMutablePointer<UInt8>
  /// ISA-L's compression level, 1 to 3.
  let level: Int
  /// Decides when a chunk is stored instead (already-compressed data).
  private let probe: IncompressibleProbe

  /// The ISA-L levels this compressor takes.
  static let levels = 1...3

  /// The ISA-L levels whose compression loop takes the third byte's hash from the stream's
  /// address on a stream's first call, and so are compressed in two calls.
  static let levelsCompressedInTwoCalls = 1...2

  /// The bytes of a chunk's first call at ``levelsCompressedInTwoCalls``: ISAL_LOOK_AHEAD
  /// (288) bytes, which a call without a flush keeps back from the loop, and the first byte,
  /// the only one the loop then compresses.
  static let firstCallLength = Int(squeeze_isal_look_ahead()) + 1

  /// The bytes an ``isal_zstream`` takes (ISA-L's internal buffer included), for a caller
  /// that places the stream itself.
  static let streamByteCount = MemoryLayout<isal_zstream>.size

  /// Bytes of output room beyond stored blocks: ISA-L writes its bit buffer 8 bytes at a
  /// time and checks for 8 free bytes before each write, a block's Huffman-coded form is
  /// used only when it is smaller than the block stored, and the sync marker takes 5 bytes.
  static let slack = 1024

  /// Allocates the stream and the level buffer (`isal_deflate_init`).
  ///
  /// - Parameters:
  ///   - level: ISA-L's level, one of ``levels``.
  ///   - streamAddress: where to put the stream instead of allocating it (the tests place it
  ///     at chosen addresses): ``streamByteCount`` writable bytes, aligned for a pointer, that
  ///     outlive the compressor. Nil allocates it.
  /// - Throws: ``EngineError`` when the level is not one of ``levels``, or the probe's
  ///   compressor cannot be allocated.
  init(level: Int, streamAddress: UnsafeMutableRawPointer? = nil) throws(EngineError) {
    guard Self.levels.contains(level) else {
      throw EngineError(
        library: .isal, code: Int32(ISAL_INVALID_LEVEL),
        detail: "compression level \(level) is outside 1 to 3 (ISA-L ISAL_INVALID_LEVEL)")
    }
    probe = try IncompressibleProbe()
    self.level = level
    ownsStream = streamAddress == nil
    stream =
      streamAddress?.bindMemory(to: isal_zstream.self, capacity: 1) ?? .allocate(capacity: 1)
    stream.initialize(to: isal_zstream())
    isal_deflate_init(stream)
    levelBuffer = .allocate(
      byteCount: Int(squeeze_isal_level_buffer_size(UInt32(level))), alignment: 64)
    emptyInput = .allocate(capacity: 1)
    emptyInput.initialize(to: 0)
  }

  deinit {
    stream.deinitialize(count: 1)
    if ownsStream { stream.deallocate() }
    levelBuffer.deallocate()
    emptyInput.deallocate()
  }

  /// The chunk stored (5 bytes per 65,535, and the sync marker) plus ``slack``.
  func bound(chunkLength: Int) -> Int {
    StoredBlocks.size(ofLength: chunkLength, isLast: false) + Self.slack
  }

  /// Compresses the chunk in one `isal_deflate` call, or two at
  /// ``levelsCompressedInTwoCalls`` (the dictionary is ignored: chunks are independent), or
  /// stores it when the probe finds it already compressed or it is too short for the two
  /// calls.
  func deflate(
    chunk: UnsafeRawBufferPointer, dictionary: UnsafeRawBufferPointer, isLast: Bool,
    into output: UnsafeMutableRawBufferPointer
  ) throws(EngineError) -> Int {
    let inTwoCalls = Self.levelsCompressedInTwoCalls.contains(level)
    if probe.isIncompressible(chunk) || (inTwoCalls && chunk.count <= Self.firstCallLength) {
      guard let written = StoredBlocks.write(chunk, isLast: isLast, into: output) else {
        throw EngineError(library: .isal, code: 0, detail: "no room for stored blocks")
      }
      return written
    }
    guard let outputBase = output.baseAddress, let levelBase = levelBuffer.baseAddress,
      let outputCount = UInt32(exactly: output.count),
      let inputCount = UInt32(exactly: chunk.count)
    else {
      throw EngineError(library: .isal, code: 0, detail: "a chunk or its buffer is out of range")
    }
    isal_deflate_reset(stream)
    stream.pointee.level = UInt32(level)
    stream.pointee.level_buf = levelBase.assumingMemoryBound(to: UInt8.self)
    stream.pointee.level_buf_size = UInt32(levelBuffer.count)
    stream.pointee.gzip_flag = UInt16(IGZIP_DEFLATE)
    stream.pointee.next_in =
      chunk.baseAddress.map {
        UnsafeMutablePointer(mutating: $0.assumingMemoryBound(to: UInt8.self))
      }
      ?? emptyInput
    stream.pointee.avail_in = inputCount
    stream.pointee.next_out = outputBase.assumingMemoryBound(to: UInt8.self)
    stream.pointee.avail_out = outputCount
    if inTwoCalls {
      // The first byte alone through the loop (see the type's discussion); ISA-L keeps the
      // rest of this call's input in its own buffer, so all of it is taken.
      stream.pointee.end_of_stream = 0
      stream.pointee.flush = UInt16(NO_FLUSH)
      stream.pointee.avail_in = UInt32(Self.firstCallLength)
      let first = isal_deflate(stream)
      guard first == COMP_OK else {
        stream.pointee.next_in = nil
        stream.pointee.next_out = nil
        throw Self.error(first)
      }
      guard stream.pointee.avail_in == 0 else {
        stream.pointee.next_in = nil
        stream.pointee.next_out = nil
        throw EngineError(
          library: .isal, code: 0, detail: "the first call left input behind (ISA-L)")
      }
      stream.pointee.avail_in = inputCount - UInt32(Self.firstCallLength)
    }
    stream.pointee.end_of_stream = isLast ? 1 : 0
    stream.pointee.flush = UInt16(isLast ? NO_FLUSH : SYNC_FLUSH)
    let code = isal_deflate(stream)
    let remaining = stream.pointee.avail_in
    let produced = output.count - Int(stream.pointee.avail_out)
    let state = stream.pointee.internal_state.state
    stream.pointee.next_in = nil
    stream.pointee.next_out = nil
    guard code == COMP_OK else { throw Self.error(code) }
    // A finished chunk: all input taken, and the stream ended (the last chunk) or flushed
    // back to where a new block starts (the others). Anything else means the output ran out.
    guard remaining == 0, state == (isLast ? ZSTATE_END : ZSTATE_NEW_HDR) else {
      throw EngineError(
        library: .isal, code: 0, detail: "compressed data did not fit its buffer (ISA-L)")
    }
    return produced
  }

  /// An ``EngineError`` for an ISA-L deflate return code (igzip_lib.h).
  static func error(_ code: Int32) -> EngineError {
    let meaning: String
    switch code {
    case INVALID_FLUSH: meaning = "invalid flush (ISA-L INVALID_FLUSH)"
    case INVALID_PARAM: meaning = "invalid parameter (ISA-L INVALID_PARAM)"
    case ISAL_INVALID_LEVEL: meaning = "invalid compression level (ISA-L ISAL_INVALID_LEVEL)"
    case ISAL_INVALID_LEVEL_BUF:
      meaning = "level buffer too small (ISA-L ISAL_INVALID_LEVEL_BUF)"
    default: meaning = "ISA-L deflate error \(code)"
    }
    return EngineError(library: .isal, code: code, detail: meaning)
  }
}
