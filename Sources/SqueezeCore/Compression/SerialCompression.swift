import SqueezeEngines
import SqueezeGzip
import SqueezeSystem

extension CompressionJob {
  /// Compresses the whole file on the calling thread, chunk after chunk, reading
  /// sequentially until the end of the file (``SequentialChunkReader``, which cuts where the
  /// layout's rule says); memory is one workspace however big the file is.
  ///
  /// Used for files of one chunk, and for every file in the `main-actor`, `actor` and
  /// `detached` isolation modes; produces the same bytes as the parallel path. It reads to
  /// the end rather than to the size `fstat` gave, so files whose size the kernel does not
  /// know (`/proc`) compress as they do through `-c`; growth of a regular file is still
  /// caught by ``finish(bytesRead:crc:trailerWritten:readAtOnce:)``.
  ///
  /// - Parameters:
  ///   - workspace: the compressor and buffers to use.
  ///   - progress: called with each count of source bytes compressed.
  /// - Returns: what to hand the publisher.
  /// - Throws: ``FileFailure``; the temporary is removed when the job is dropped.
  func compressSerially(
    workspace: CompressionWorkspace, progress: (Int) -> Void
  ) throws(FileFailure) -> PreparedOutput {
    let output = workspace.output
    // The workspace keeps room for a header with the longest name (headerAndTrailerRoom).
    guard var used = gzipHeader.write(into: output) else {
      throw .cannotWriteOutput(outputDisplay, .noBufferSpace)
    }
    var crc = CRC32()
    var bytesRead: Int64 = 0
    var reader = SequentialChunkReader(
      descriptor: input, chunking: layout.chunking, buffer: workspace.input,
      historyRoom: workspace.dictionarySize, knownSize: before.size > 0 ? before.size : nil)
    while true {
      if context.stop.isSet || Task.isCancelled { throw .interrupted }
      guard let chunk = try reader.next() else { break }
      let count = chunk.data.count
      crc.update(chunk.data)
      bytesRead += Int64(count)
      used += try workspace.deflateChunk(
        count: count, dictionaryLength: chunk.dictionary.count, isLast: chunk.isLast,
        into: UnsafeMutableRawBufferPointer(rebasing: output[used...]))
      if count > 0 { progress(count) }
      if chunk.isLast { break }
      try self.output.write(UnsafeRawBufferPointer(rebasing: output[..<used]))
      used = 0
    }
    // Header (for a one-chunk file), last chunk and trailer go out in one write.
    // The workspace keeps room for the trailer after a chunk's bound (headerAndTrailerRoom).
    guard
      let trailerLength = GzipTrailer(crc: crc.value, uncompressedSize: bytesRead).write(
        into: UnsafeMutableRawBufferPointer(rebasing: output[used...]))
    else {
      throw .cannotWriteOutput(outputDisplay, .noBufferSpace)
    }
    used += trailerLength
    try self.output.write(UnsafeRawBufferPointer(rebasing: output[..<used]))
    // A file read whole by one read(2), ending exactly at the size fstat gave, is one state
    // of the file; otherwise its size and time are checked again.
    let readAtOnce = reader.readCalls == 1 && bytesRead == before.size && before.size > 0
    return try finish(
      bytesRead: bytesRead, crc: crc.value, trailerWritten: true, readAtOnce: readAtOnce)
  }

  /// Reads until `buffer` is full or the file ends (the stored copy's reader;
  /// compression reads through ``SequentialChunkReader``).
  ///
  /// - Parameter knownEnd: the bytes left before the size `fstat` gave, when it gave one: a
  ///   short read that ends exactly there is taken as the end of the file, which saves the
  ///   `read` that would return 0 on every small file. (Growth after that point is still
  ///   caught: the file's size is checked again once it has been read.)
  func readChunk(
    into buffer: UnsafeMutableRawBufferPointer, knownEnd: Int64?, calls: inout Int
  ) throws(FileFailure) -> Int {
    var total = 0
    while total < buffer.count {
      calls += 1
      let count: Int
      do throws(SystemError) {
        count = try Descriptor.read(
          input, into: UnsafeMutableRawBufferPointer(rebasing: buffer[total...]))
      } catch {
        throw .cannotRead(error)
      }
      if count == 0 { break }
      total += count
      if let knownEnd, Int64(total) == knownEnd, total < buffer.count { break }
    }
    return total
  }

  /// Compresses chunk `index` of the file open as `descriptor`, the source bytes `range`,
  /// reading it and its dictionary with `pread` (chunks of one file run in parallel on one
  /// descriptor).
  ///
  /// - Parameters:
  ///   - range: the chunk's bytes in the file (at most the rule's longest chunk).
  ///   - isLast: true for the file's last chunk, which ends the deflate stream.
  /// - Returns: the chunk's deflate bytes, CRC-32 and length.
  /// - Throws: ``FileFailure`` for read and engine errors, and when the file shrank.
  static func compressChunk(
    index: Int, range: Range<Int64>, isLast: Bool, of layout: ChunkLayout, descriptor: Int32,
    workspace: CompressionWorkspace
  ) throws(FileFailure) -> CompressedChunk {
    let dictionary = layout.dictionaryRange(before: range.lowerBound)
    let dictionaryEnd = workspace.dictionarySize
    let start = dictionaryEnd - dictionary.count
    let wanted = Int(range.upperBound - dictionary.lowerBound)
    let buffer = UnsafeMutableRawBufferPointer(rebasing: workspace.input[start..<(start + wanted)])
    var total = 0
    while total < wanted {
      let count: Int
      do throws(SystemError) {
        count = try Descriptor.read(
          descriptor, into: UnsafeMutableRawBufferPointer(rebasing: buffer[total...]),
          at: dictionary.lowerBound + Int64(total))
      } catch {
        throw .cannotRead(error)
      }
      if count == 0 { break }
      total += count
    }
    guard total == wanted else {
      throw .changedWhileReading("it shrank while being read")
    }
    let data = UnsafeRawBufferPointer(
      rebasing: workspace.input[dictionaryEnd..<(dictionaryEnd + Int(range.count))])
    var crc = CRC32()
    crc.update(data)
    let produced = try workspace.deflateChunk(
      count: data.count, dictionaryLength: dictionary.count, isLast: isLast,
      into: workspace.output)
    return CompressedChunk(
      index: index, bytes: Array(UnsafeRawBufferPointer(rebasing: workspace.output[..<produced])),
      crc: crc.value, length: Int(range.count))
  }
}
