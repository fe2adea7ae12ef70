/// Where a big file is cut into the chunks that are compressed in parallel: every
/// `--block-size` bytes (the default), or where its content says (`--rsyncable`).
///
/// Either way the cut depends only on the data and these parameters (engine, block size),
/// never on `--jobs`, the isolation mode, or whether the data comes from a file, `-c` or
/// standard input, so the output is byte-identical whatever runs it.
package enum Chunking: Sendable, Equatable {
  /// Chunk `k` covers bytes `k·size ..< (k+1)·size` (pigz's layout without `-R`).
  case fixed(size: Int)
  /// Chunks end where a rolling hash of the data says (``RsyncableChunking``).
  case contentDefined(RsyncableChunking)

  /// The rule for `--block-size` `size` (the engine's default chunk size when not given),
  /// content-defined with `--rsyncable`.
  package init(chunkSize: Int, rsyncable: Bool) {
    self =
      rsyncable
      ? .contentDefined(RsyncableChunking(targetChunkSize: chunkSize)) : .fixed(size: chunkSize)
  }

  /// The longest chunk the rule makes, in bytes: what a workspace must hold.
  var maximumChunkSize: Int {
    switch self {
    case .fixed(let size): size
    case .contentDefined(let rule): rule.maximumChunkSize
    }
  }

  /// Bytes a sequential reader reads at a time once a cut may come: 64 KiB for
  /// content-defined chunks (what a cut can leave over to carry into the next chunk), 1 for
  /// fixed-size ones (the byte that tells whether a full chunk is the file's last).
  var readStep: Int {
    switch self {
    case .fixed: 1
    case .contentDefined: 64 << 10
    }
  }
}

/// The parameters of `--rsyncable`: chunk boundaries chosen by the content, so that an
/// insertion or deletion near the start of a big file changes only the output near it, and
/// rsync (or any delta transfer) sends little more than the change.
///
/// The rule (`ChunkBoundaryFinder` implements it): after a chunk that ends at byte `b`,
/// the next one ends at the first `p` in `b + minimum ... b + maximum` where the gear hash of
/// the 64 bytes before `p` has its top `maskBits` bits all zero, or at `b + maximum` when
/// there is no such `p`, or at the end of the data. A hit depends on 64 bytes only, so after
/// an edit the boundaries realign at the first hit past it (pigz `-R` hashes 19 bytes for the
/// same reason: its design notes in `pigz.c`, "rsyncable constants"). The minimum keeps
/// chunks long enough to compress well (and is never hashed, which halves the scan); the
/// maximum bounds memory and what an edit inside a long hitless run can cost.
///
/// All three follow from the target size `T` (`--block-size`, else the engine's default
/// chunk size: 1 MiB fast, 128 KiB zlib): minimum `T/4`, hits every `2^maskBits` ≤ `T/2`
/// bytes on average (`maskBits` = ⌊log2(T/2)⌋), maximum `2T`; chunks average about `0.75·T`.
/// The fast engine's chunks are independent (no dictionary), so each cut costs ratio and its
/// chunks stay near its 1 MiB default; zlib's chunks carry the previous 32 KiB as a
/// dictionary and can be smaller (what each choice cost in bytes: the Performance article,
/// "Rsyncable outputs"). The maximum, 2T, stays within the restore's cap
/// on a chunk decoded ahead (`ParallelCompressor/restoredChunkCap(chunkSize:)`, 4 × max(T,
/// 1 MiB)), so rsyncable files restore chunk-parallel too; and an edit rewrites about one
/// chunk (about T of source), which on a 50 MB text is under 5 % of its `.gz`.
package struct RsyncableChunking: Sendable, Equatable {
  /// No chunk but the last is shorter, in bytes: `T/4`.
  let minimumChunkSize: Int
  /// A position is a hit when the top `maskBits` bits of the hash are zero: on random data
  /// one position in `2^maskBits`.
  let maskBits: Int
  /// No chunk is longer, in bytes: `2T`.
  let maximumChunkSize: Int

  /// The bytes of data a hit depends on: the gear hash's 64-bit state shifts each byte out
  /// after 64 steps.
  static let hashWindow = 64

  /// The parameters for target size `targetChunkSize` (`T`, in bytes, at least 32 KiB: the
  /// smallest `--block-size`).
  init(targetChunkSize: Int) {
    let target = max(targetChunkSize, ChunkLayout.minimumChunkSize)
    minimumChunkSize = target / 4
    maskBits = Int.bitWidth - 1 - (target / 2).leadingZeroBitCount
    maximumChunkSize = 2 * target
  }

  /// Explicit parameters (tests).
  ///
  /// - Precondition: `hashWindow ≤ minimum ≤ maximum`, `1 ≤ maskBits ≤ 63`.
  init(minimumChunkSize: Int, maskBits: Int, maximumChunkSize: Int) {
    precondition(Self.hashWindow <= minimumChunkSize && minimumChunkSize <= maximumChunkSize)
    precondition((1...63).contains(maskBits))
    self.minimumChunkSize = minimumChunkSize
    self.maskBits = maskBits
    self.maximumChunkSize = maximumChunkSize
  }
}
