import CZlib

/// The fast engine's second opinion on a file's last chunk of at most ``maximumLength``
/// bytes: zlib's deflate at the same level (9 for squeeze's 10 to 12), kept when it writes
/// fewer bytes than libdeflate did.
///
/// libdeflate writes tiny inputs as a stored block (5 bytes of framing) up to a length that
/// depends on its level (`55 - 4 × level` bytes: 51 at level 1, 23 at level 8, which squeeze's
/// level 6 uses for small chunks), where zlib and gzip write a fixed-Huffman block 3 or 4
/// bytes shorter; a little longer, its block choice is still a byte or two over zlib's on
/// about a third of the inputs. With the smaller of the two, none of 712 files of 128 bytes
/// or less (the benchmark corpus's and text slices) is larger than gzip's at levels 1 to 9,
/// where 275 to 374 were; measurements and cost in SqueezeCore's engines and levels article
/// (`EnginesAndLevels.md`). Above 128 bytes the stream below would split blocks where a
/// full-size zlib stream would not, and each byte saved costs more: libdeflate alone serves
/// longer chunks.
///
/// The stream is sized for these inputs, so its reset costs next to nothing: a 512-byte
/// window (`windowBits` 9; zlib's smallest, its reach 250 bytes, more than any input it
/// sees) and `memLevel` 1 (256 hash heads, 128 symbols a block): for inputs of at most 128
/// bytes it writes the bytes zlib's defaults write. zlib's bytes depend only on the input
/// and the level, so the choice, and the output, are the same whatever `--jobs`, the
/// isolation stage, `-c` or standard input; ties keep libdeflate's.
///
/// Not thread-safe: one per ``LibdeflateDeflater``.
final class TinyInputDeflater {
  /// The longest chunk given a second opinion: 128 bytes.
  static let maximumLength = 128

  /// The zlib stream, at a fixed heap address for its lifetime (zlib checks it).
  private let stream: UnsafeMutablePointer<z_stream>
  /// Where zlib writes before the lengths are compared.
  private let scratch: UnsafeMutableRawBufferPointer

  /// A raw deflate stream at zlib level `min(level, 9)`.
  ///
  /// - Throws: ``EngineError`` when zlib cannot allocate it.
  init(level: Int) throws(EngineError) {
    stream = .allocate(capacity: 1)
    stream.initialize(to: z_stream())
    let code = squeeze_deflateInit2(stream, Int32(min(level, 9)), -9, 1, Z_DEFAULT_STRATEGY)
    guard code == Z_OK else {
      let error = ZlibError.make(code: code, stream: stream)
      stream.deinitialize(count: 1)
      stream.deallocate()
      throw error
    }
    scratch = .allocate(
      byteCount: Int(deflateBound(stream, UInt(Self.maximumLength))), alignment: 16)
  }

  deinit {
    deflateEnd(stream)
    stream.deinitialize(count: 1)
    stream.deallocate()
    scratch.deallocate()
  }

  /// Compresses `chunk` (at most ``maximumLength`` bytes, a stream's last chunk) with zlib
  /// and, when that is shorter than the `produced` bytes already in `output`, puts it there
  /// instead.
  ///
  /// - Returns: the length of what `output` now holds: zlib's when shorter, else `produced`.
  func smaller(
    _ chunk: UnsafeRawBufferPointer, than produced: Int, in output: UnsafeMutableRawBufferPointer
  ) -> Int {
    guard chunk.count <= Self.maximumLength else { return produced }
    deflateReset(stream)
    stream.pointee.next_in = chunk.baseAddress.map {
      UnsafeMutablePointer(mutating: $0.assumingMemoryBound(to: Bytef.self))
    }
    stream.pointee.avail_in = UInt32(chunk.count)
    stream.pointee.next_out = scratch.baseAddress?.assumingMemoryBound(to: Bytef.self)
    stream.pointee.avail_out = UInt32(scratch.count)
    let code = CZlib.deflate(stream, Z_FINISH)
    let written = scratch.count - Int(stream.pointee.avail_out)
    stream.pointee.next_in = nil
    stream.pointee.next_out = nil
    // Anything but a finished stream (which deflateBound's room guarantees) keeps libdeflate's.
    guard code == Z_STREAM_END, written < produced, written <= output.count else {
      return produced
    }
    output.copyMemory(from: UnsafeRawBufferPointer(rebasing: scratch[..<written]))
    return written
  }
}
