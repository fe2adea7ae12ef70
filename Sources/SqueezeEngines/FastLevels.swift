import CIsal

/// The fast engine's level map: which library compresses a chunk, at which of its own
/// levels, for each squeeze level and chunk length.
///
/// The rule: at each level, the fastest library setting that writes no more bytes than
/// `gzip` at the same level. ISA-L's deflate (`isal_deflate`) is the faster library wherever
/// it runs, but it writes more than `gzip` at some levels and sizes, so it serves only these:
///
/// | squeeze level | chunks of at least | ISA-L level | shorter chunks |
/// |---|---|---|---|
/// | 1 (`--fast`) | 1 KiB | 1 | libdeflate -1 |
/// | 2, on a CPU where ISA-L runs its AVX-512 code | 2 KiB | 3 | libdeflate -2 |
/// | 2 elsewhere, and 3 | (none) | | libdeflate -1 |
/// | 4 to 12 | (none) | | libdeflate at that level |
///
/// ISA-L's level 3 is fast only with its AVX-512 code: elsewhere (an AMD EPYC with AVX2
/// here) its generic code takes more CPU than libdeflate's level 1, which also writes fewer
/// bytes, so there level 2 is libdeflate -1, the same bytes as level 3.
///
/// Below 1 KiB ISA-L's level 1 writes 0.2 to 0.6 % more than `gzip -1` (its dynamic
/// Huffman header costs more on little data), and its level 3 writes more than `gzip -2`
/// below 2 KiB; libdeflate takes those chunks at no measurable cost in speed. At level 3 and
/// above ISA-L writes more than `gzip` (its level 3 is 0.3 to 0.5 % over `gzip -3` on the
/// benchmark's corpora, 0.5 % on the big file cut into this engine's 1 MiB chunks; its
/// level 2 is further over), so libdeflate keeps them. At level 3 the fastest libdeflate
/// setting under `gzip -3` is libdeflate's own level 1 (0.75 to 1.2 % under `gzip -3` on
/// every corpus, at well under the CPU of its level 3: ``libdeflateLevel(forLevel:)``).
/// The measurements are in SqueezeCore's engines and levels article (`EnginesAndLevels.md`).
///
/// The choice depends only on the level, the chunk's length and (at level 2) the CPU, so a
/// file's bytes are the same whatever `--jobs`, the isolation stage, `-c` or standard input. ISA-L's level 1 also
/// writes the same bytes in every run only because ``ISALDeflater`` gives it each chunk's
/// first byte in a call of its own: in one call, its loop files a chunk's third byte under
/// a hash slot taken from the stream's address, and a run found or missed a match back to
/// that byte depending on where its stream was allocated (the engines and levels article
/// has the measurements). Its level 2 shares that loop and is no way around it; its level 3
/// has another.
enum FastLevels {
  /// Whether ISA-L runs its AVX-512 code on this CPU (the features its dispatcher checks,
  /// read once with CPUID and XGETBV), which is what makes its level 3 faster than
  /// libdeflate's level 1.
  static let isalUsesAVX512 = squeeze_isal_uses_avx512() != 0

  /// ISA-L's part at squeeze `level`: its own level and the shortest chunk it compresses, or
  /// nil when libdeflate compresses every chunk.
  ///
  /// - Parameter avx512: whether ISA-L runs its AVX-512 code (``isalUsesAVX512``); level 2
  ///   uses ISA-L only then.
  static func isal(forLevel level: Int, avx512: Bool = isalUsesAVX512)
    -> (isalLevel: Int, minimumChunkLength: Int)?
  {
    switch level {
    case 1: (isalLevel: 1, minimumChunkLength: 1 << 10)
    case 2 where avx512: (isalLevel: 3, minimumChunkLength: 2 << 10)
    default: nil
    }
  }

  /// libdeflate's own level for squeeze `level` (1 to 12): 1 at squeeze level 3, and at
  /// level 2 where ISA-L does not run its AVX-512 code; the level itself elsewhere.
  ///
  /// At level 3 libdeflate's level 1 writes fewer bytes than `gzip -3` on every corpus the
  /// benchmarks use (by 0.75 to 1.2 %, its long chunks in halves) and takes about two thirds of the CPU of its level 3,
  /// so it is the fastest setting within the rule; ISA-L's level 3 is over `gzip -3`. At
  /// level 2 without AVX-512 it is faster than ISA-L's level 3 and under `gzip -2` (by 1.3
  /// to 4.7 %). At every other level libdeflate's own level is the one under `gzip` at that
  /// level (levels 1 and 2 give it only short chunks, where it is).
  ///
  /// - Parameter avx512: as for ``isal(forLevel:avx512:)``.
  static func libdeflateLevel(forLevel level: Int, avx512: Bool = isalUsesAVX512) -> Int {
    switch level {
    case 3: 1
    // Level 2 with no part for ISA-L: the CPU test is the map's, not repeated here.
    case 2 where isal(forLevel: 2, avx512: avx512) == nil: 1
    default: level
    }
  }

  /// The library that compresses a chunk of `chunkLength` bytes at squeeze `level`.
  ///
  /// - Parameter avx512: as for ``isal(forLevel:avx512:)``.
  static func library(
    forLevel level: Int, chunkLength: Int, avx512: Bool = isalUsesAVX512
  ) -> EngineError.Library {
    guard let isal = isal(forLevel: level, avx512: avx512),
      chunkLength >= isal.minimumChunkLength
    else {
      return .libdeflate
    }
    return .isal
  }

  /// A compressor for squeeze `level` (1 to 12): ISA-L and libdeflate split by chunk length
  /// where the map gives ISA-L a part, libdeflate alone elsewhere.
  ///
  /// - Throws: ``EngineError`` when a library cannot allocate its state.
  static func makeDeflater(level: Int) throws(EngineError) -> any ChunkDeflater {
    let libdeflate = try LibdeflateDeflater(
      level: libdeflateLevel(forLevel: level), tinyInputLevel: level)
    guard let isal = isal(forLevel: level) else { return libdeflate }
    return LengthSplitDeflater(
      long: try ISALDeflater(level: isal.isalLevel), short: libdeflate,
      minimumLongChunkLength: isal.minimumChunkLength)
  }
}

/// Two compressors split by chunk length: chunks of at least ``minimumLongChunkLength``
/// bytes go to one, shorter chunks to the other. Both keep the ``ChunkDeflater`` contract
/// (independent chunks, the sync marker after every chunk but the last), so chunks of either
/// join into one deflate stream.
///
/// Not thread-safe: one thread at a time.
final class LengthSplitDeflater: ChunkDeflater {
  /// Compresses chunks of at least ``minimumLongChunkLength`` bytes.
  let long: any ChunkDeflater
  /// Compresses shorter chunks.
  let short: any ChunkDeflater
  /// The shortest chunk ``long`` compresses, in bytes.
  let minimumLongChunkLength: Int

  init(long: any ChunkDeflater, short: any ChunkDeflater, minimumLongChunkLength: Int) {
    self.long = long
    self.short = short
    self.minimumLongChunkLength = minimumLongChunkLength
  }

  /// The larger of the two bounds, so a buffer sized for a file's longest chunk holds any
  /// of its chunks whichever compressor takes it.
  func bound(chunkLength: Int) -> Int {
    max(long.bound(chunkLength: chunkLength), short.bound(chunkLength: chunkLength))
  }

  func deflate(
    chunk: UnsafeRawBufferPointer, dictionary: UnsafeRawBufferPointer, isLast: Bool,
    into output: UnsafeMutableRawBufferPointer
  ) throws(EngineError) -> Int {
    try (chunk.count >= minimumLongChunkLength ? long : short).deflate(
      chunk: chunk, dictionary: dictionary, isLast: isLast, into: output)
  }
}
