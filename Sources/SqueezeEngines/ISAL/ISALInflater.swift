import CIsal

/// The fast engine's decompressor: ISA-L's streaming `isal_inflate` on raw deflate data
/// (`crc_flag` `ISAL_DEFLATE`: squeeze reads the gzip header and trailer itself and computes
/// the CRC-32), faster than zlib's inflate with bounded memory.
///
/// The `inflate_state` (about 40 KiB, with ISA-L's window) lives on the heap for the
/// object's lifetime and is reused from member to member with `isal_inflate_reset`.
final class ISALInflater: RawInflater {
  private let state: UnsafeMutablePointer<inflate_state>
  /// Bytes past the end of the stream taken in calls before the finishing one.
  private var pastTheEnd: [UInt8] = []

  init() {
    state = .allocate(capacity: 1)
    isal_inflate_init(state)
    state.pointee.crc_flag = UInt32(ISAL_DEFLATE)
  }

  deinit {
    state.deallocate()
  }

  func reset() {
    pastTheEnd = []
    isal_inflate_reset(state)
    state.pointee.crc_flag = UInt32(ISAL_DEFLATE)
  }

  /// `isal_inflate_set_dict`, allowed right after a reset.
  func setDictionary(_ dictionary: UnsafeRawBufferPointer) throws(EngineError) {
    guard let base = dictionary.baseAddress, dictionary.count > 0 else { return }
    let code = isal_inflate_set_dict(
      state, UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: UInt8.self)),
      UInt32(dictionary.count))
    guard code == ISAL_DECOMP_OK else { throw ISALInflater.error(code) }
  }

  /// One call to `isal_inflate`: it decodes until the input is used up (keeping a partial
  /// header in its own buffer for the next call), the output is full, or the final block
  /// ends. Its stateful form keeps the bytes it read ahead in its bit buffer (`read_in`,
  /// up to 64 bits) when the stream ends; they are given back here: those of this call's
  /// input are not counted as consumed, those of earlier calls wait in
  /// ``takeBytesPastTheEnd()``.
  func inflate(input: UnsafeRawBufferPointer, output: UnsafeMutableRawBufferPointer)
    throws(InflateError) -> InflateStep
  {
    if state.pointee.block_state == ISAL_BLOCK_FINISH {
      return InflateStep(consumed: 0, produced: 0, finished: true)
    }
    state.pointee.next_in = input.baseAddress.map {
      UnsafeMutablePointer(mutating: $0.assumingMemoryBound(to: UInt8.self))
    }
    state.pointee.avail_in = UInt32(input.count)
    state.pointee.next_out = output.baseAddress?.assumingMemoryBound(to: UInt8.self)
    state.pointee.avail_out = UInt32(output.count)
    let code = isal_inflate(state)
    var consumed = input.count - Int(state.pointee.avail_in)
    let produced = output.count - Int(state.pointee.avail_out)
    state.pointee.next_in = nil
    state.pointee.next_out = nil
    guard code == ISAL_DECOMP_OK else {
      // Whole bytes still in the bit buffer were read ahead, not decoded.
      let readAhead = min(consumed, Int(max(0, state.pointee.read_in_length)) / 8)
      throw InflateError(error: ISALInflater.error(code), consumed: consumed - readAhead)
    }
    let finished = state.pointee.block_state == ISAL_BLOCK_FINISH
    if finished && state.pointee.read_in_length >= 8 {
      // The bits left: the final byte's padding, then whole bytes past the end.
      let padding = UInt64(state.pointee.read_in_length % 8)
      let count = Int(state.pointee.read_in_length / 8)
      let bytes = (0..<count).map {
        UInt8(truncatingIfNeeded: state.pointee.read_in >> (padding + UInt64(8 * $0)))
      }
      let fromThisCall = min(count, consumed)
      consumed -= fromThisCall
      pastTheEnd = Array(bytes[..<(count - fromThisCall)])
      state.pointee.read_in = 0
      state.pointee.read_in_length = Int32(padding)
    }
    return InflateStep(consumed: consumed, produced: produced, finished: finished)
  }

  func takeBytesPastTheEnd() -> [UInt8] {
    defer { pastTheEnd = [] }
    return pastTheEnd
  }

  /// Between blocks: `ISAL_BLOCK_NEW_HDR`, or `ISAL_BLOCK_HDR` with nothing of the next
  /// header buffered (ISA-L moves there when it tried to read a header and found no input),
  /// with no bit read ahead, not after the final block.
  var endsOnByteAlignedBlockBoundary: Bool {
    let between =
      state.pointee.block_state == ISAL_BLOCK_NEW_HDR
      || (state.pointee.block_state == ISAL_BLOCK_HDR && state.pointee.tmp_in_size == 0)
    return between && state.pointee.read_in_length == 0 && state.pointee.bfinal == 0
  }

  /// An ``EngineError`` for an ISA-L return code (igzip_lib.h).
  static func error(_ code: Int32) -> EngineError {
    let meaning: String
    switch code {
    case ISAL_INVALID_BLOCK: meaning = "invalid deflate block (ISA-L ISAL_INVALID_BLOCK)"
    case ISAL_INVALID_SYMBOL: meaning = "invalid Huffman symbol (ISA-L ISAL_INVALID_SYMBOL)"
    case ISAL_INVALID_LOOKBACK:
      meaning = "distance beyond the data decoded so far (ISA-L ISAL_INVALID_LOOKBACK)"
    case ISAL_NEED_DICT: meaning = "deflate stream needs a preset dictionary (ISA-L ISAL_NEED_DICT)"
    default: meaning = "ISA-L inflate error \(code)"
    }
    return EngineError(library: .isal, code: code, detail: meaning)
  }
}
