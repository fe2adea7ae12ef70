import Glibc
import SqueezeEngines

extension CompressionJob {
  /// Bytes read per step when storing: 16 full stored blocks (1 MiB less 16 bytes).
  static let storedReadSize = StoredBlocks.maximumBlockLength * 16

  /// Copies the whole source into the member as stored deflate blocks (``StoredBlocks``):
  /// how a mirror (`-o`) wraps a file that is already compressed (`x.gz` → `x.gz.gz`), so a
  /// restore gives the file back as it was, at copying speed rather than deflate's.
  ///
  /// Reads sequentially to the end of the file through one buffer of at most
  /// ``storedReadSize`` bytes (smaller for a smaller file), so memory does not grow with the
  /// file. The output is the source plus 5 bytes per 65,535 and per run, the header and the
  /// trailer.
  ///
  /// - Parameter progress: called with each count of source bytes copied.
  /// - Returns: what to hand the publisher.
  /// - Throws: ``FileFailure`` for read and write errors, a source that changed while it was
  ///   read, and a stop request; the temporary is removed when the job is dropped.
  func compressStored(progress: (Int) -> Void) throws(FileFailure) -> PreparedOutput {
    let capacity = Int(min(Int64(Self.storedReadSize), max(before.size, 0).addingSaturated(1)))
    let input = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 16)
    defer { input.deallocate() }
    let outputCapacity = header.count + StoredBlocks.size(ofLength: capacity, isLast: false) + 8
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: outputCapacity, alignment: 16)
    defer { buffer.deallocate() }
    header.withUnsafeBytes { buffer.copyMemory(from: $0) }
    var used = header.count
    var crc = CRC32()
    var bytesRead: Int64 = 0
    var readCalls = 0
    // One byte read ahead tells whether a full buffer is the file's end.
    var carried: UInt8? = nil
    while true {
      if context.stop.isSet || Task.isCancelled { throw .interrupted }
      var count = 0
      if let byte = carried {
        input[0] = byte
        count = 1
        carried = nil
      }
      count += try readChunk(
        into: UnsafeMutableRawBufferPointer(rebasing: input[count...]), knownEnd: nil,
        calls: &readCalls)
      var isLast = count < capacity
      if !isLast {
        var next: UInt8 = 0
        let extra = try withUnsafeMutableBytes(of: &next) { (raw) throws(FileFailure) in
          try readChunk(into: raw, knownEnd: nil, calls: &readCalls)
        }
        if extra == 1 { carried = next } else { isLast = true }
      }
      let data = UnsafeRawBufferPointer(rebasing: input[..<count])
      crc.update(data)
      bytesRead += Int64(count)
      // Each run but the last ends with the sync marker: a wrapped file's runs are
      // independent chunks, which restore in parallel. (The buffer holds a full run's
      // size(ofLength:isLast:), so the write always fits.)
      guard
        let stored = StoredBlocks.write(
          data, isLast: isLast, into: UnsafeMutableRawBufferPointer(rebasing: buffer[used...]))
      else { throw .cannotWriteOutput(output.display.path, SystemError(code: ENOBUFS)) }
      used += stored
      if count > 0 { progress(count) }
      if isLast { break }
      try output.write(UnsafeRawBufferPointer(rebasing: buffer[..<used]))
      used = 0
    }
    let trailer = GzipTrailer(crc: crc.value, uncompressedSize: bytesRead).encoded
    trailer.withUnsafeBytes {
      UnsafeMutableRawBufferPointer(rebasing: buffer[used..<(used + 8)]).copyMemory(from: $0)
    }
    used += 8
    try output.write(UnsafeRawBufferPointer(rebasing: buffer[..<used]))
    let readAtOnce = readCalls == 1 && bytesRead == before.size && before.size > 0
    return try finish(
      bytesRead: bytesRead, crc: crc.value, trailerWritten: true, readAtOnce: readAtOnce)
  }
}
