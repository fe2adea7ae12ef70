/// The libraries that deflate and inflate for squeeze (`--engine`): the one seam between
/// squeeze and a compression library. Scheduling, output, diagnostics and the command line
/// only ever see this type, ``ChunkDeflater``, ``RawInflater`` and ``CRC32``.
///
/// Every engine writes the same layout of one gzip member (RFC 1952) per file: a file is cut
/// into chunks compressed in parallel, and every chunk but the last ends on a byte boundary
/// with an empty, non-final stored block (the "sync marker" `00 00 ff ff`, RFC 1951
/// section 3.2.4), so the chunks join into one deflate stream that any gunzip reads.
///
/// Adding an engine: a case here, its adapters in a folder of this module, and its values
/// in the `--engine` row of the option table.
public enum Engine: String, CaseIterable, Sendable, CustomStringConvertible {
  /// ISA-L's deflate (level 1 on chunks of 1 KiB and more, and level 2 on chunks of 2 KiB
  /// and more where ISA-L runs its AVX-512 code) and libdeflate (the rest, levels 1 to 12)
  /// compress; ISA-L's streaming inflate restores. The default:
  /// libdeflate deflates faster than zlib with output no larger, ISA-L's lowest levels take
  /// less CPU than libdeflate's while writing less than `gzip` at the same level, and ISA-L
  /// inflates faster than zlib (the Engines and levels article gives the measurements).
  /// Which library runs at which level is the fast engine's level map (`FastLevels`).
  /// Neither library is given a preset dictionary, so the chunks of a big file are
  /// independent: each one can also be decoded on its own, which is what makes parallel
  /// restores possible.
  case fast
  /// zlib both ways (levels 1 to 9): the reference. Chunks are primed with the previous
  /// 32 KiB as dictionary and sync-flushed, as pigz does; the bytes are those squeeze has
  /// always written.
  case zlib

  /// The engine used when `--engine` is not given.
  public static let `default` = Engine.fast

  /// The compression levels the engine accepts: zlib 1 to 9 (zlib manual,
  /// `deflateInit2`); fast 1 to 12, libdeflate's (`libdeflate_alloc_compressor`; 10 to 12
  /// are its slow near-optimal parser), of which ISA-L serves 1 (and 2 on CPUs with
  /// AVX-512) on all but the shortest chunks.
  public var levels: ClosedRange<Int> {
    switch self {
    case .fast: 1...12
    case .zlib: 1...9
    }
  }

  /// The default compression level of every engine: 6, as gzip, pigz and zlib
  /// (`Z_DEFAULT_COMPRESSION`).
  public static let defaultLevel = 6

  /// Bytes per chunk when `--block-size` is not given.
  ///
  /// zlib: 128 KiB, pigz's default; its chunks share a 32 KiB dictionary, so the size
  /// barely changes the output (measured 64 KiB to 1 MiB within 0.04 %). fast: 1 MiB. Its
  /// chunks are independent, so each cut costs ratio: on the corpus's
  /// `big/drivers-net.tar`, libdeflate -6 gave +2.9 % over gzip -6 at 128 KiB, +1.4 % at
  /// 256 KiB, +0.37 % at 1 MiB and +0.1 % at 4 MiB; 1 MiB stays within the +0.5 % the
  /// project allows while a 4 MB file still splits across 4 cores (SqueezeCore's engines
  /// and levels article, `EnginesAndLevels.md`).
  public var defaultChunkSize: Int {
    switch self {
    case .fast: 1 << 20
    case .zlib: 128 << 10
    }
  }

  /// Bytes of the source before a chunk that prime its compression as a dictionary: 32 KiB
  /// (the deflate window, RFC 1951) for zlib; 0 for fast: libdeflate takes no dictionary,
  /// and ISA-L is given none, so its chunks stay independent too.
  public var chunkDictionarySize: Int {
    switch self {
    case .fast: 0
    case .zlib: 32 << 10
    }
  }

  /// What the engine runs, for help texts: `libdeflate and ISA-L compress, ISA-L restores`.
  public var summary: String {
    switch self {
    case .fast: "libdeflate and ISA-L (-1) compress, ISA-L restores"
    case .zlib: "zlib both ways, pigz's layout"
    }
  }

  /// The name `--engine` takes: `fast` or `zlib`.
  public var description: String { rawValue }

  /// A new compressor at `level`, for one thread at a time: zlib's, or for the fast engine
  /// the libraries its level map (`FastLevels`) gives the level.
  ///
  /// - Parameter level: one of ``levels``.
  /// - Throws: ``EngineError`` when a library cannot allocate its state, or the level is
  ///   outside ``levels``.
  public func makeDeflater(level: Int) throws(EngineError) -> any ChunkDeflater {
    guard levels.contains(level) else {
      throw EngineError(
        library: self == .fast ? .libdeflate : .zlib, code: 0,
        detail: "compression level \(level) is outside \(levels.lowerBound) to \(levels.upperBound)"
      )
    }
    switch self {
    case .fast: return try FastLevels.makeDeflater(level: level)
    case .zlib: return try ZlibDeflater(level: level)
    }
  }

  /// A new raw-deflate decompressor, for one thread at a time.
  ///
  /// - Throws: ``EngineError`` when the library cannot allocate its state.
  public func makeInflater() throws(EngineError) -> any RawInflater {
    switch self {
    case .fast: return ISALInflater()
    case .zlib: return try ZlibInflater()
    }
  }
}
