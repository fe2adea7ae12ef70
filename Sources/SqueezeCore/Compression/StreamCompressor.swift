import SqueezeEngines
import SqueezeGzip
import SqueezeSystem

/// Compresses a sequential input (standard input, a pipe, or a file read front to back) into
/// one gzip member on an output descriptor, chunk-parallel: chunks are read in order and cut
/// by the same rule as files (``SequentialChunkReader``, so a regular file gives the same bytes
/// as `squeeze file`, `--rsyncable` included), each is compressed in a child task that takes a
/// compression slot, and the compressed chunks are written in order (``OrderedChunkWindow``).
/// At most `window` chunks are in memory at once, plus the one read ahead and the reader's
/// buffer; memory does not grow with the input.
enum StreamCompressor {
  /// Compresses everything `input` yields into `output`.
  ///
  /// - Parameters:
  ///   - header: the gzip header to write first.
  ///   - chunking: where chunks end.
  ///   - window: most chunks in flight (jobs + 1).
  /// - Returns: bytes read and bytes written.
  /// - Throws: ``FileFailure`` for read, write and engine errors, `.interrupted` when `stop`
  ///   is set.
  static func compress(
    from input: Int32, to output: Int32, outputName: RawPath, header: [UInt8],
    chunking: Chunking, workspaces: WorkspacePool, slots: WorkSlots, window: Int,
    stop: AtomicFlag
  ) async throws(FileFailure) -> (bytesIn: Int64, bytesOut: Int64) {
    let writer = DescriptorWriter(descriptor: output, display: outputName)
    let historyRoom = workspaces.engine.chunkDictionarySize
    let buffer = UnsafeMutableRawBufferPointer.allocate(
      byteCount: SequentialChunkReader.bufferSize(chunking: chunking, historyRoom: historyRoom),
      alignment: 64)
    defer { buffer.deallocate() }
    var reader = SequentialChunkReader(
      descriptor: input, chunking: chunking, buffer: buffer, historyRoom: historyRoom,
      knownSize: nil)
    /// The reader's next chunk, copied out for a child task.
    func nextChunk() throws(FileFailure) -> StreamChunk? {
      guard let chunk = try reader.next() else { return nil }
      return StreamChunk(
        data: Array(chunk.data), dictionary: Array(chunk.dictionary), isLast: chunk.isLast)
    }
    // Nothing is written before the input has been read once: one that cannot be read at
    // all (a folder on standard input, EIO) leaves the output empty, not a lone header.
    var first = try nextChunk()
    try writer.write(header)
    var crc: UInt32 = 0
    var bytesIn: Int64 = 0
    let chunks = OrderedChunkWindow<StreamChunk, CompressedChunk, FileFailure>(
      width: window, slots: slots, stop: stop, interruption: .interrupted, task: nil)
    try await chunks.run(
      next: { () throws(FileFailure) in
        // The window asks for the next chunk as soon as one starts: it is read while the
        // chunks before it compress.
        let chunk: StreamChunk?
        if let read = first {
          chunk = read
          first = nil
        } else {
          chunk = try nextChunk()
        }
        guard let chunk else { return .end }
        return .chunk(chunk, isLast: chunk.isLast)
      },
      work: { (index, chunk) throws(FileFailure) in
        try workspaces.withWorkspace { (workspace) throws(FileFailure) in
          try compressChunk(
            chunk.data, dictionary: chunk.dictionary, index: index, isLast: chunk.isLast,
            workspace: workspace)
        }
      },
      consume: { (_, chunk) throws(FileFailure) in
        try writer.write(chunk.bytes)
        crc = CRC32.combine(crc, chunk.crc, secondLength: Int64(chunk.length))
        bytesIn += Int64(chunk.length)
        return .more
      })
    try writer.write(GzipTrailer(crc: crc, uncompressedSize: bytesIn).encoded)
    return (bytesIn, writer.bytesWritten)
  }

  /// One chunk of a stream, copied out of the reader's buffer for the task compressing it.
  struct StreamChunk: Sendable {
    /// The chunk's source bytes.
    var data: [UInt8]
    /// The up to 32 KiB before it (zlib engine; empty for the fast engine).
    var dictionary: [UInt8]
    /// True for the stream's last chunk.
    var isLast: Bool
  }

  /// Compresses one chunk held in memory (see ``ChunkLayout``).
  static func compressChunk(
    _ data: [UInt8], dictionary: [UInt8], index: Int, isLast: Bool, workspace: CompressionWorkspace
  ) throws(FileFailure) -> CompressedChunk {
    let dictionaryEnd = workspace.dictionarySize
    let start = dictionaryEnd - dictionary.count
    dictionary.withUnsafeBytes { raw in
      UnsafeMutableRawBufferPointer(rebasing: workspace.input[start..<dictionaryEnd]).copyMemory(
        from: raw)
    }
    data.withUnsafeBytes { raw in
      UnsafeMutableRawBufferPointer(
        rebasing: workspace.input[dictionaryEnd..<(dictionaryEnd + raw.count)]
      )
      .copyMemory(from: raw)
    }
    var crc = CRC32()
    crc.update(
      UnsafeRawBufferPointer(
        rebasing: workspace.input[dictionaryEnd..<(dictionaryEnd + data.count)]))
    let produced = try workspace.deflateChunk(
      count: data.count, dictionaryLength: dictionary.count, isLast: isLast, into: workspace.output)
    return CompressedChunk(
      index: index, bytes: Array(UnsafeRawBufferPointer(rebasing: workspace.output[..<produced])),
      crc: crc.value, length: data.count)
  }
}

/// Writes to a descriptor someone else owns (standard output), counting bytes.
final class DescriptorWriter {
  let descriptor: Int32
  /// How the output is named in messages.
  let display: RawPath
  /// Bytes written so far.
  private(set) var bytesWritten: Int64 = 0

  init(descriptor: Int32, display: RawPath) {
    self.descriptor = descriptor
    self.display = display
  }

  /// Writes all of `bytes`.
  ///
  /// - Throws: ``FileFailure/cannotWriteOutput(_:_:)``.
  func write(_ bytes: UnsafeRawBufferPointer) throws(FileFailure) {
    do throws(SystemError) {
      try writeAll(bytes, to: descriptor)
    } catch {
      throw .cannotWriteOutput(display, error)
    }
    bytesWritten += Int64(bytes.count)
  }

  /// Writes all of `bytes`.
  ///
  /// - Throws: ``FileFailure/cannotWriteOutput(_:_:)``.
  func write(_ bytes: [UInt8]) throws(FileFailure) {
    do throws(SystemError) {
      try writeAll(bytes, to: descriptor)
    } catch {
      throw .cannotWriteOutput(display, error)
    }
    bytesWritten += Int64(bytes.count)
  }
}
