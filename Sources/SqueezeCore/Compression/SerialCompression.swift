import Glibc
import SqueezeEngines

extension CompressionJob {
  /// Compresses the whole file on the calling thread, chunk after chunk, reading
  /// sequentially until the end of the file; memory is one workspace however big the file
  /// is.
  ///
  /// Used for files of one chunk, and for every file in the `main-actor`, `actor` and
  /// `detached` isolation modes; produces the same bytes as the parallel path. It reads to
  /// the end rather than to the size `fstat` gave, so files whose size the kernel does not
  /// know (`/proc`) compress as they do through `-c`; growth of a regular file is still
  /// caught by ``finish(bytesRead:crc:)``.
  ///
  /// - Parameters:
  ///   - workspace: the zlib stream and buffers to use.
  ///   - progress: called with each count of source bytes compressed.
  /// - Returns: what to hand the publisher.
  /// - Throws: ``FileFailure``; the temporary is removed when the job is dropped.
  func compressSerially(
    workspace: CompressionWorkspace, progress: (Int) -> Void
  ) throws(FileFailure) -> PreparedOutput {
    let dictionaryEnd = workspace.dictionarySize
    let chunkSize = workspace.chunkSize
    let output = workspace.output
    var used = header.count
    header.withUnsafeBytes { output.copyMemory(from: $0) }
    var crc = CRC32()
    var bytesRead: Int64 = 0
    var dictionaryLength = 0
    // One byte read ahead tells whether a full chunk is the last one.
    var carried: UInt8? = nil
    var readCalls = 0
    while true {
      if context.stop.isSet || Task.isCancelled { throw .interrupted }
      let chunk = UnsafeMutableRawBufferPointer(
        rebasing: workspace.input[dictionaryEnd..<(dictionaryEnd + chunkSize)])
      var count = 0
      if let byte = carried {
        chunk[0] = byte
        count = 1
        carried = nil
      }
      count += try readChunk(
        into: UnsafeMutableRawBufferPointer(rebasing: chunk[count...]),
        knownEnd: before.size > 0 ? before.size - bytesRead - Int64(count) : nil, calls: &readCalls)
      var isLast = count < chunkSize
      if !isLast {
        var next: UInt8 = 0
        let extra = try withUnsafeMutableBytes(of: &next) { (raw) throws(FileFailure) in
          try readChunk(into: raw, knownEnd: nil, calls: &readCalls)
        }
        if extra == 1 { carried = next } else { isLast = true }
      }
      let data = UnsafeRawBufferPointer(rebasing: chunk[..<count])
      crc.update(data)
      bytesRead += Int64(count)
      used += try workspace.deflateChunk(
        count: count, dictionaryLength: dictionaryLength, isLast: isLast,
        into: UnsafeMutableRawBufferPointer(rebasing: output[used...]))
      if count > 0 { progress(count) }
      if isLast { break }
      try self.output.write(UnsafeRawBufferPointer(rebasing: output[..<used]))
      used = 0
      // The chunk's last bytes become the next chunk's dictionary (zlib engine: 32 KiB).
      dictionaryLength = min(count, dictionaryEnd)
      if dictionaryLength > 0 {
        let tail = UnsafeRawBufferPointer(rebasing: data[(count - dictionaryLength)...])
        UnsafeMutableRawBufferPointer(
          rebasing: workspace.input[(dictionaryEnd - dictionaryLength)..<dictionaryEnd]
        ).copyMemory(from: tail)
      }
    }
    // Header (for a one-chunk file), last chunk and trailer go out in one write.
    let trailer = GzipTrailer(crc: crc.value, uncompressedSize: bytesRead).encoded
    trailer.withUnsafeBytes {
      UnsafeMutableRawBufferPointer(rebasing: output[used..<(used + 8)]).copyMemory(from: $0)
    }
    used += 8
    try self.output.write(UnsafeRawBufferPointer(rebasing: output[..<used]))
    // A file read whole by one read(2), ending exactly at the size fstat gave, is one state
    // of the file; otherwise its size and time are checked again.
    let readAtOnce = readCalls == 1 && bytesRead == before.size && before.size > 0
    return try finish(
      bytesRead: bytesRead, crc: crc.value, trailerWritten: true, readAtOnce: readAtOnce)
  }

  /// Reads until `buffer` is full or the file ends.
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
      let count = Glibc.read(input, buffer.baseAddress! + total, buffer.count - total)
      if count < 0 {
        if errno == EINTR { continue }
        throw .cannotRead(SystemError.current)
      }
      if count == 0 { break }
      total += count
      if let knownEnd, Int64(total) == knownEnd, total < buffer.count { break }
    }
    return total
  }

  /// Compresses chunk `index` of the file open as `descriptor`, reading it and its
  /// dictionary with `pread` (chunks of one file run in parallel on one descriptor).
  ///
  /// - Returns: the chunk's deflate bytes, CRC-32 and length.
  /// - Throws: ``FileFailure`` for read and zlib errors, and when the file shrank.
  static func compressChunk(
    index: Int, of layout: ChunkLayout, descriptor: Int32, workspace: CompressionWorkspace
  ) throws(FileFailure) -> CompressedChunk {
    let range = layout.range(of: index)
    let dictionary = layout.dictionaryRange(of: index)
    let dictionaryEnd = workspace.dictionarySize
    let start = dictionaryEnd - dictionary.count
    let wanted = Int(range.upperBound - dictionary.lowerBound)
    let buffer = UnsafeMutableRawBufferPointer(rebasing: workspace.input[start..<(start + wanted)])
    var total = 0
    while total < wanted {
      let count = pread(
        descriptor, buffer.baseAddress! + total, wanted - total,
        off_t(dictionary.lowerBound) + off_t(total))
      if count < 0 {
        if errno == EINTR { continue }
        throw .cannotRead(SystemError.current)
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
      count: data.count, dictionaryLength: dictionary.count, isLast: index == layout.count - 1,
      into: workspace.output)
    return CompressedChunk(
      index: index, bytes: Array(UnsafeRawBufferPointer(rebasing: workspace.output[..<produced])),
      crc: crc.value, length: Int(range.count))
  }
}
