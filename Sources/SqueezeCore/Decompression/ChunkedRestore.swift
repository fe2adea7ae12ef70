import SqueezeEngines
import SqueezeSystem
import Synchronization

// Restoring one big file on every core (`-d`, `-t`).
//
// A file the fast engine wrote is one gzip member whose deflate stream is a run of
// independent chunks: each starts on a byte boundary right after the sync marker
// `00 00 ff ff` that ends the one before, and needs no window from it. A reader that finds
// the markers can decode the chunks at once. It never trusts what it finds:
//
// - Candidates. Every `00 00 ff ff` in the deflate data is a candidate chunk start (a marker
//   can also occur inside a stored block's data, or by chance in Huffman-coded data).
// - Speculation. Each candidate chunk is decoded on its own by a fresh inflater with no
//   window, into a capped buffer (4x the chunk size, so a bomb cannot grow memory). It is
//   good only if it decoded without error, within the cap, and ended exactly at the next
//   candidate between two blocks on a byte boundary with no bit left (or, for the last one,
//   with the final block). A back-reference before the chunk's start is an error (zlib:
//   "invalid distance too far back", ISA-L: invalid lookback), so a chunk that needed the
//   previous one's window (pigz and zlib-engine files, whose chunks share a dictionary)
//   fails rather than decoding wrongly.
// - Verification, in order. Chunk 0 starts where the stream starts; if each good chunk ends
//   at a block boundary where the next begins, every accepted chunk starts at a true block
//   boundary of the serial parse, and decodes to exactly what a serial decoder would
//   produce there. CRC-32s combine (`crc32_combine`); the trailer's CRC-32 and ISIZE are
//   then checked as for any file.
// - Fallback. At the first chunk that is not good, the rest of the file is decoded serially
//   from that chunk's start, with the last 32 KiB already written as the window: the same
//   bytes, at single-core speed. A file with no marker (gzip's) is decoded serially from the
//   start; so is everything after the first member.

/// Finds sync markers (``SyncMarker``) in a file's compressed bytes, reading it window by
/// window with `pread`, so memory stays one window whatever the file's size.
struct SyncMarkerFinder {
  private let descriptor: Int32
  private let end: Int64
  private var window: [UInt8]
  /// File offset of `window[0]`, and bytes valid in it.
  private var windowStart: Int64
  private var windowCount = 0
  /// Next index of `window` to search from.
  private var cursor = 0

  /// Bytes read at a time: 1 MiB.
  static let windowSize = 1 << 20

  /// - Parameters:
  ///   - start: the offset to search from (where the deflate data starts).
  ///   - end: the file's size: markers are searched for below it.
  init(descriptor: Int32, start: Int64, end: Int64) {
    self.descriptor = descriptor
    self.end = end
    windowStart = start
    window = [UInt8](repeating: 0, count: Self.windowSize)
  }

  /// Where the chunk after the current one starts.
  enum Boundary: Equatable {
    /// Right after a marker at this offset.
    case marker(Int64)
    /// There is no marker before the end of the file: the current chunk runs to the end.
    case endOfFile
    /// There is no marker before `limit`: the current chunk is too long to decode ahead.
    case beyondLimit
  }

  /// The next chunk boundary, looking no further than `limit`.
  ///
  /// - Throws: ``FileFailure/cannotRead(_:)``.
  mutating func nextBoundary(within limit: Int64) throws(FileFailure) -> Boundary {
    guard let found = try next(searchingBelow: limit) else {
      return windowStart + Int64(windowCount) >= end ? .endOfFile : .beyondLimit
    }
    return found > limit ? .beyondLimit : .marker(found)
  }

  /// The offset right after the next marker, or nil when there is none before the end (or
  /// before `limit`: the search stops at the first window that starts past it).
  ///
  /// - Throws: ``FileFailure/cannotRead(_:)``.
  private mutating func next(searchingBelow limit: Int64) throws(FileFailure) -> Int64? {
    let marker = SyncMarker.bytes.count
    while true {
      if let found = search() { return found }
      // Slide: keep the last bytes that could start a marker across the cut.
      let kept = min(windowCount, marker - 1)
      let nextStart = windowStart + Int64(windowCount - kept)
      guard nextStart + Int64(kept) < end, nextStart < limit,
        windowCount == window.count || windowCount == 0
      else { return nil }
      windowStart = nextStart
      var count = 0
      let wanted = Int(min(Int64(window.count), end - windowStart))
      var failure: SystemError? = nil
      window.withUnsafeMutableBytes { raw in
        while count < wanted {
          let got: Int
          do throws(SystemError) {
            got = try Descriptor.read(
              descriptor, into: UnsafeMutableRawBufferPointer(rebasing: raw[count..<wanted]),
              at: windowStart + Int64(count))
          } catch {
            failure = error
            return
          }
          if got == 0 { break }
          count += got
        }
      }
      if let failure { throw .cannotRead(failure) }
      windowCount = count
      cursor = 0
      if count <= kept { return nil }
    }
  }

  /// The next marker in the current window at or after `cursor`.
  private mutating func search() -> Int64? {
    let count = windowCount
    guard count >= 4 else { return nil }
    let found: Int? = window.withUnsafeBytes { raw in
      let base = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
      var index = cursor + 3
      while index < count {
        // Jump to the next 0xff that could end a marker, then check the three before it.
        guard
          let hit = Memory.firstIndex(
            of: 0xff, in: UnsafeRawBufferPointer(rebasing: raw[index..<count]))
        else { return nil }
        let position = index + hit
        if base[position - 1] == 0xff && base[position - 2] == 0 && base[position - 3] == 0 {
          return position + 1
        }
        index = position + 1
      }
      return nil
    }
    guard let found else {
      cursor = count
      return nil
    }
    cursor = found
    return windowStart + Int64(found)
  }
}

/// A capped buffer one chunk is decoded into, lent by a ``ChunkBufferPool``.
// @unchecked Sendable: a buffer is owned by one task at a time. The pool hands it to the
// task that decodes a chunk; that task returns it (inside its result) through the task group
// to the file's task, which writes it and gives it back to the pool under the pool's mutex.
// Each hand-over is a task-group result or a mutex section, both of which order the memory
// accesses; no two tasks ever hold it at once.
final class ChunkBuffer: @unchecked Sendable {
  /// The memory: ``capacity`` bytes plus slack, so the inflater can overshoot the cap by a
  /// step and be caught.
  let memory: UnsafeMutableRawBufferPointer
  /// Bytes a good chunk may decode to (the cap).
  let capacity: Int
  /// Bytes decoded so far.
  var count = 0
  /// CRC-32 of the decoded bytes.
  var crc: UInt32 = 0

  /// Room past the cap for the inflater's last step: 128 KiB.
  static let slack = 128 << 10

  init(capacity: Int) {
    self.capacity = capacity
    memory = .allocate(byteCount: capacity + Self.slack, alignment: 64)
  }

  deinit {
    memory.deallocate()
  }

  /// The decoded bytes.
  var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: memory[..<count]) }
}

/// Keeps the chunk buffers of a run (at most one per chunk in flight), so their pages are
/// touched once, not once per chunk.
final class ChunkBufferPool: Sendable {
  private let idle = Lock<[ChunkBuffer]>([])
  /// The cap of every buffer, in bytes.
  let capacity: Int

  init(capacity: Int) {
    self.capacity = capacity
  }

  /// A buffer nobody holds, empty.
  func take() -> ChunkBuffer {
    let buffer = idle.withLock { $0.popLast() } ?? ChunkBuffer(capacity: capacity)
    buffer.count = 0
    buffer.crc = 0
    return buffer
  }

  /// Gives a buffer back.
  func give(_ buffer: ChunkBuffer) {
    idle.withLock { $0.append(buffer) }
  }
}

/// Decodes one candidate chunk on its own (see the notes at the top of this file).
enum ChunkDecoding {
  /// What decoding a candidate chunk came to.
  enum Outcome: Sendable {
    /// Good: it ended exactly at the end of its range, between blocks on a byte boundary.
    case boundary(ChunkBuffer)
    /// Good: the final block ended `consumed` bytes into its range (the trailer follows).
    case streamEnd(ChunkBuffer, consumed: Int64)
    /// Not good (why, for the task-state log); the buffer goes back to the pool.
    case rejected(String)
  }

  /// Decodes the compressed bytes `range` of `descriptor` with `inflater` (reset here, no
  /// window) into a buffer from `buffers`.
  ///
  /// - Parameters:
  ///   - openEnded: the range runs to the end of the file (no later marker): only the end of
  ///     the stream makes it good.
  ///   - input: scratch space for reads.
  ///   - stop: checked between reads, with the task's cancellation; a stopped decode is
  ///     rejected.
  static func decode(
    _ descriptor: Int32, range: Range<Int64>, openEnded: Bool, inflater: any RawInflater,
    input: UnsafeMutableRawBufferPointer, buffers: ChunkBufferPool, stop: AtomicFlag
  ) -> Outcome {
    inflater.reset()
    let buffer = buffers.take()
    func reject(_ why: String) -> Outcome {
      buffers.give(buffer)
      return .rejected(why)
    }
    var position = range.lowerBound
    var consumed: Int64 = 0
    while position < range.upperBound {
      if stop.isSet || Task.isCancelled { return reject("stopped") }
      let wanted = Int(min(Int64(input.count), range.upperBound - position))
      let got: Int
      do throws(SystemError) {
        got = try Descriptor.read(
          descriptor, into: UnsafeMutableRawBufferPointer(rebasing: input[..<wanted]),
          at: position)
      } catch {
        return reject("cannot read: \(error)")
      }
      if got == 0 { return reject("the file ended") }
      position += Int64(got)
      var offset = 0
      while true {
        let step: InflateStep
        do {
          step = try inflater.inflate(
            input: UnsafeRawBufferPointer(rebasing: input[offset..<got]),
            output: UnsafeMutableRawBufferPointer(rebasing: buffer.memory[buffer.count...]))
        } catch {
          return reject("\(error.error)")
        }
        offset += step.consumed
        consumed += Int64(step.consumed)
        buffer.count += step.produced
        if buffer.count > buffer.capacity {
          return reject("more than \(buffer.capacity) bytes")
        }
        if step.finished {
          consumed -= Int64(inflater.takeBytesPastTheEnd().count)
          finishCRC(buffer)
          return .streamEnd(buffer, consumed: consumed)
        }
        if offset == got || (step.consumed == 0 && step.produced == 0) { break }
      }
      guard offset == got else { return reject("the inflater stopped early") }
    }
    guard !openEnded, inflater.endsOnByteAlignedBlockBoundary else {
      return reject("does not end between two blocks")
    }
    finishCRC(buffer)
    return .boundary(buffer)
  }

  private static func finishCRC(_ buffer: ChunkBuffer) {
    var crc = CRC32()
    crc.update(buffer.bytes)
    buffer.crc = crc.value
  }
}

/// The last up to 32 KiB of a restored member's output: the window a serial decoder needs to
/// resume where a rejected chunk began.
struct RestoredWindow {
  private(set) var bytes: [UInt8] = []

  /// Appends `data`, keeping only the last 32 KiB.
  mutating func append(_ data: UnsafeRawBufferPointer) {
    let window = ChunkLayout.windowSize
    if data.count >= window {
      bytes = Array(data[(data.count - window)...])
    } else {
      bytes += data
      if bytes.count > window { bytes.removeFirst(bytes.count - window) }
    }
  }
}
