import Glibc

extension CompressionJob {
  /// Compresses the whole file on the calling thread, block after block, reading
  /// sequentially; memory is one workspace however big the file is.
  ///
  /// Used for files of one block, and for every file in the `main-actor`, `actor` and
  /// `detached` isolation modes; produces the same bytes as the parallel path.
  ///
  /// - Parameters:
  ///   - workspace: the zlib stream and buffers to use.
  ///   - progress: called with each count of source bytes compressed.
  /// - Returns: what to hand the publisher.
  /// - Throws: ``FileFailure``; the temporary is removed when the job is dropped.
  func compressSerially(
    workspace: CompressionWorkspace, progress: (Int) -> Void
  ) throws(FileFailure) -> PreparedOutput {
    let dictionaryEnd = BlockLayout.dictionarySize
    let output = workspace.output
    var used = header.count
    header.withUnsafeBytes { output.copyMemory(from: $0) }
    var crc = CRC32()
    var bytesRead: Int64 = 0
    var dictionaryLength = 0
    for index in 0..<layout.count {
      if context.stop.isSet || Task.isCancelled { throw .interrupted }
      let expected = layout.range(of: index).count
      let block = UnsafeMutableRawBufferPointer(
        rebasing: workspace.input[dictionaryEnd..<(dictionaryEnd + Int(expected))])
      let count = try readBlock(into: block)
      guard count == expected else {
        throw .changedWhileReading(
          "it shrank to \(bytesRead + Int64(count)) bytes while being read")
      }
      let data = UnsafeRawBufferPointer(block)
      crc.update(data)
      bytesRead += Int64(count)
      let isLast = index == layout.count - 1
      do {
        used += try workspace.deflater.deflateBlock(
          data,
          dictionary: UnsafeRawBufferPointer(
            rebasing: workspace.input[(dictionaryEnd - dictionaryLength)..<dictionaryEnd]),
          isLast: isLast, into: UnsafeMutableRawBufferPointer(rebasing: output[used...]))
      } catch {
        throw .zlib(error)
      }
      if !isLast {
        try self.output.write(UnsafeRawBufferPointer(rebasing: output[..<used]))
        used = 0
        // The block's last 32 KiB become the next block's dictionary.
        dictionaryLength = min(count, BlockLayout.dictionarySize)
        let tail = UnsafeRawBufferPointer(rebasing: data[(count - dictionaryLength)...])
        UnsafeMutableRawBufferPointer(
          rebasing: workspace.input[(dictionaryEnd - dictionaryLength)..<dictionaryEnd]
        ).copyMemory(from: tail)
      }
      if count > 0 { progress(count) }
    }
    try checkEndOfFile(workspace: workspace)
    // Header (for a one-block file) and last block go out in one write.
    try self.output.write(UnsafeRawBufferPointer(rebasing: output[..<used]))
    return try finish(bytesRead: bytesRead, crc: crc.value)
  }

  /// Reads until `buffer` is full or the file ends.
  private func readBlock(into buffer: UnsafeMutableRawBufferPointer) throws(FileFailure) -> Int {
    var total = 0
    while total < buffer.count {
      let count = Glibc.read(input, buffer.baseAddress! + total, buffer.count - total)
      if count < 0 {
        if errno == EINTR { continue }
        throw .cannotRead(SystemError.current)
      }
      if count == 0 { break }
      total += count
    }
    return total
  }

  /// Fails when reading on finds more bytes: the file grew while it was read.
  private func checkEndOfFile(workspace: CompressionWorkspace) throws(FileFailure) {
    let probe = UnsafeMutableRawBufferPointer(rebasing: workspace.input[..<1])
    if try readBlock(into: probe) > 0 {
      throw .changedWhileReading("it grew past \(layout.length) bytes while being read")
    }
  }

  /// Compresses block `index` of the file open as `descriptor`, reading it and its
  /// dictionary with `pread` (blocks of one file run in parallel on one descriptor).
  ///
  /// - Returns: the block's deflate bytes, CRC-32 and length.
  /// - Throws: ``FileFailure`` for read and zlib errors, and when the file shrank.
  static func compressBlock(
    index: Int, of layout: BlockLayout, descriptor: Int32, workspace: CompressionWorkspace
  ) throws(FileFailure) -> CompressedBlock {
    let range = layout.range(of: index)
    let dictionary = layout.dictionaryRange(of: index)
    let dictionaryEnd = BlockLayout.dictionarySize
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
    let produced: Int
    do {
      produced = try workspace.deflater.deflateBlock(
        data, dictionary: UnsafeRawBufferPointer(rebasing: workspace.input[start..<dictionaryEnd]),
        isLast: index == layout.count - 1, into: workspace.output)
    } catch {
      throw .zlib(error)
    }
    return CompressedBlock(
      index: index, bytes: Array(UnsafeRawBufferPointer(rebasing: workspace.output[..<produced])),
      crc: crc.value, length: Int(range.count))
  }
}
