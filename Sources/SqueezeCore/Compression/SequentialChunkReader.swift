import SqueezeSystem

/// Reads a sequential input (a file front to back, standard input, a pipe) and cuts it into
/// chunks by a ``Chunking`` rule, in a buffer the caller owns.
///
/// Layout of the buffer: `historyRoom` bytes of history (the up to `historyRoom` bytes right
/// before the current chunk: the zlib engine's 32 KiB dictionary, spanning chunks when they
/// are shorter), then the chunk, then whatever was read past the cut. After each chunk the
/// new history and the bytes past the cut are moved down to the same places; they are at most
/// `historyRoom` plus ``Chunking/readStep`` bytes, so the copying stays small next to the
/// compression. Reads are sized so that fixed-size chunks are read as before, with one read a
/// chunk: a small file is read whole by one `read(2)`.
///
/// Not thread-safe: used by one task.
struct SequentialChunkReader {
  /// One chunk, valid until the next call of ``next()``.
  struct Chunk {
    /// The chunk's bytes (at `historyRoom` in the buffer).
    var data: UnsafeRawBufferPointer
    /// The up to `historyRoom` bytes right before it (empty for the first chunk).
    var dictionary: UnsafeRawBufferPointer
    /// True for the input's last chunk (which may be empty: empty input has one).
    var isLast: Bool
  }

  private let descriptor: Int32
  private var finder: ChunkBoundaryFinder
  private let buffer: UnsafeMutableRawBufferPointer
  private let historyRoom: Int
  /// Bytes the chunk area holds: the longest chunk plus one read step.
  private let capacity: Int
  /// The size `fstat` gave, for regular files that report one.
  private let knownSize: Int64?
  /// History bytes valid right before `historyRoom`.
  private var historyLength = 0
  /// Bytes at `historyRoom` read and not yet handed out.
  private var filled = 0
  /// Of those, bytes fed to the finder (always the current chunk's).
  private var scanned = 0
  /// Length of the chunk handed out last, dropped at the next call.
  private var handedOut: Int? = nil
  /// The input has ended (a read returned 0, or a short read reached the known size).
  private var endOfInput = false
  /// The last chunk has been handed out.
  private var finished = false
  /// Bytes read from the descriptor so far.
  private var readSoFar: Int64 = 0
  /// `read(2)` calls made so far.
  private(set) var readCalls = 0

  /// The buffer size a reader needs, in bytes.
  static func bufferSize(chunking: Chunking, historyRoom: Int) -> Int {
    historyRoom + chunking.maximumChunkSize + chunking.readStep
  }

  /// - Parameters:
  ///   - buffer: at least ``bufferSize(chunking:historyRoom:)`` bytes, owned by the caller
  ///     for the reader's life.
  ///   - historyRoom: how much history to keep before each chunk (the engine's
  ///     ``SqueezeEngines/Engine/chunkDictionarySize``).
  ///   - knownSize: the input's size when `fstat` gives one: a short read that ends exactly
  ///     there is taken as the end, which saves the `read` that would return 0 on every
  ///     small file (growth is caught by the caller's check once the file is read).
  init(
    descriptor: Int32, chunking: Chunking, buffer: UnsafeMutableRawBufferPointer,
    historyRoom: Int, knownSize: Int64?
  ) {
    precondition(buffer.count >= Self.bufferSize(chunking: chunking, historyRoom: historyRoom))
    self.descriptor = descriptor
    finder = ChunkBoundaryFinder(chunking)
    self.buffer = buffer
    self.historyRoom = historyRoom
    capacity = chunking.maximumChunkSize + chunking.readStep
    self.knownSize = knownSize
  }

  /// The next chunk, or nil after the last.
  ///
  /// - Throws: ``FileFailure/cannotRead(_:)``.
  mutating func next() throws(FileFailure) -> Chunk? {
    if finished { return nil }
    dropHandedOut()
    let data = buffer.baseAddress! + historyRoom
    while true {
      if scanned < filled,
        let cut = finder.cut(
          in: UnsafeRawBufferPointer(start: data + scanned, count: filled - scanned))
      {
        let length = scanned + cut
        // A cut at the end of what was read: read on to learn whether it is the last.
        if length == filled && !endOfInput { try fill(capacity - filled) }
        return handOut(length, isLast: endOfInput && length == filled)
      }
      scanned = filled
      if endOfInput { return handOut(filled, isLast: true) }
      try fill(min(capacity - filled, max(finder.bytesBeforePossibleCut, finder.chunking.readStep)))
    }
  }

  private mutating func handOut(_ length: Int, isLast: Bool) -> Chunk {
    handedOut = length
    finished = isLast
    let base = UnsafeRawPointer(buffer.baseAddress!)
    return Chunk(
      data: UnsafeRawBufferPointer(start: base + historyRoom, count: length),
      dictionary: UnsafeRawBufferPointer(
        start: base + historyRoom - historyLength, count: historyLength),
      isLast: isLast)
  }

  /// Moves the new history and the bytes past the last chunk down to their places.
  private mutating func dropHandedOut() {
    guard let length = handedOut else { return }
    handedOut = nil
    let history = min(historyRoom, historyLength + length)
    let base = buffer.baseAddress!
    // The regions overlap: copyMemory moves as memmove does.
    (base + historyRoom - history).copyMemory(
      from: base + historyRoom + length - history, byteCount: history + filled - length)
    filled -= length
    scanned = 0
    historyLength = history
  }

  /// Reads until `wanted` more bytes are in, or the input ends.
  private mutating func fill(_ wanted: Int) throws(FileFailure) {
    let data = buffer.baseAddress! + historyRoom
    var total = 0
    while total < wanted {
      readCalls += 1
      let count: Int
      do throws(SystemError) {
        count = try Descriptor.read(
          descriptor,
          into: UnsafeMutableRawBufferPointer(start: data + filled, count: wanted - total))
      } catch {
        throw .cannotRead(error)
      }
      if count == 0 {
        endOfInput = true
        return
      }
      total += count
      filled += count
      readSoFar += Int64(count)
      if let knownSize, readSoFar == knownSize, total < wanted {
        endOfInput = true
        return
      }
    }
  }
}
