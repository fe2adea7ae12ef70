/// Finds where chunks end in a run of data fed to it piece by piece, by the rule of a
/// ``Chunking``: every `size` bytes, or where the content says (``RsyncableChunking``).
///
/// The finder sees the data once, front to back, in pieces of any size; where the pieces
/// are cut never changes where the chunks are. Every reader of a file (the sequential reader
/// of the serial and stream paths, and the ``BoundaryScan`` that runs ahead of a parallel
/// compression) uses it, so they all cut the same data in the same places.
///
/// The content-defined rule hashes with a gear hash (`h = (h << 1) &+ gear[byte]`, 64 bits:
/// the hash FastCDC builds on, Xia et al., USENIX ATC 2016): each byte leaves the state
/// after 64 shifts, so no history is kept or undone, and a hit depends on the 64 bytes before
/// it only. A hit is a position where the hash's top ``RsyncableChunking/maskBits`` bits are
/// zero. The first `minimum − 64` bytes of a chunk are not hashed at all (no cut can come
/// there), and the hash starts from zero 64 bytes before the minimum, which gives it the
/// same value it would have if the whole file had been hashed.
struct ChunkBoundaryFinder: Sendable {
  /// The rule.
  let chunking: Chunking
  /// Bytes of the current chunk fed so far.
  private(set) var chunkLength = 0
  /// The gear hash of the bytes fed since `hashStart`.
  private var hash: UInt64 = 0
  /// The length of the longest chunk.
  private let maximum: Int
  /// The shortest chunk but the last (the maximum for fixed-size chunks).
  private let minimum: Int
  /// Chunk offset of the first byte hashed: `minimum − 64` (never, for fixed-size chunks).
  private let hashStart: Int
  /// The top `maskBits` bits set (0 for fixed-size chunks).
  private let mask: UInt64

  init(_ chunking: Chunking) {
    self.chunking = chunking
    switch chunking {
    case .fixed(let size):
      maximum = size
      minimum = size
      hashStart = Int.max
      mask = 0
    case .contentDefined(let rule):
      maximum = rule.maximumChunkSize
      minimum = rule.minimumChunkSize
      hashStart = rule.minimumChunkSize - RsyncableChunking.hashWindow
      mask = ~0 << UInt64(64 - rule.maskBits)
    }
  }

  /// Bytes that can be fed before the current chunk could end: the next read should bring at
  /// least this many (at least 1).
  var bytesBeforePossibleCut: Int { max(minimum - chunkLength, 1) }

  /// Bytes from here that neither the hash nor a cut needs: ``skip(_:)`` may pass over them
  /// unread.
  var skippableBytes: Int {
    mask == 0 ? max(maximum - chunkLength - 1, 0) : max(hashStart - chunkLength, 0)
  }

  /// Counts `count` bytes as fed without looking at them.
  ///
  /// - Precondition: `count` ≤ ``skippableBytes``.
  mutating func skip(_ count: Int) {
    precondition(count <= skippableBytes)
    chunkLength += count
  }

  /// Feeds the next bytes of the data.
  ///
  /// - Returns: nil when the current chunk goes on past `bytes` (all of them belong to it);
  ///   otherwise `k`, the number of leading bytes of `bytes` that end the current chunk
  ///   (1 ≤ `k` ≤ `bytes.count`). The finder then starts a new chunk at `bytes[k]`, which the
  ///   caller feeds again.
  /// - Complexity: O(`bytes.count`), about one cycle a byte hashed.
  mutating func cut(in bytes: UnsafeRawBufferPointer) -> Int? {
    let count = bytes.count
    guard count > 0, let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
      return nil
    }
    let room = maximum - chunkLength
    let limit = min(count, room)
    if mask != 0 {
      // Hash from `hashStart`; test from the byte that completes `minimum`.
      var index = max(0, hashStart - chunkLength)
      let testFrom = max(index, minimum - chunkLength - 1)
      var state = hash
      let mask = self.mask
      let found: Int? = Self.gear.withUnsafeBufferPointer { gear in
        while index < min(testFrom, limit) {
          state = (state &<< 1) &+ gear[Int(base[index])]
          index += 1
        }
        while index < limit {
          state = (state &<< 1) &+ gear[Int(base[index])]
          index += 1
          if state & mask == 0 { return index }
        }
        return nil
      }
      if let found {
        startChunk()
        return found
      }
      hash = state
    }
    if limit == room {
      startChunk()
      return room
    }
    chunkLength += count
    return nil
  }

  private mutating func startChunk() {
    chunkLength = 0
    hash = 0
  }

  /// The gear table: 256 64-bit values from SplitMix64 (Steele, Lea and Flood, OOPSLA 2014)
  /// seeded with `0x73717565657a6521` ("squeeze!"). Part of the output format: changing it
  /// moves every boundary, so rsync would resend everything once. No value gives a hit on a
  /// long run of one byte (its hash settles at `−gear[byte]`), for any mask of 14 bits or
  /// more (tested), so zero-filled stretches of tar files are cut at the maximum, not at
  /// every minimum.
  static let gear: [UInt64] = {
    var state: UInt64 = 0x7371_7565_657a_6521
    return (0..<256).map { _ in
      state &+= 0x9e37_79b9_7f4a_7c15
      var mixed = state
      mixed = (mixed ^ (mixed >> 30)) &* 0xbf58_476d_1ce4_e5b9
      mixed = (mixed ^ (mixed >> 27)) &* 0x94d0_49bb_1331_11eb
      return mixed ^ (mixed >> 31)
    }
  }()
}
