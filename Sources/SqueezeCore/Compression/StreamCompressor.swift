import Glibc
import SqueezeEngines

/// Compresses a sequential input (standard input, a pipe, or a file read front to back) into
/// one gzip member on an output descriptor, chunk-parallel: chunks are read in order, each is
/// compressed in a child task that takes a compression slot (the same chunk layout, so a
/// regular file gives the same bytes as `squeeze file`), and the compressed chunks are
/// written in order. At most `window` chunks are in memory at once, plus one read ahead (to
/// know which chunk is the last); memory does not grow with the input.
enum StreamCompressor {
  /// Compresses everything `input` yields into `output`.
  ///
  /// - Parameters:
  ///   - header: the gzip header to write first.
  ///   - chunkSize: bytes per chunk.
  ///   - window: most chunks in flight (jobs + 1).
  /// - Returns: bytes read and bytes written.
  /// - Throws: ``FileFailure`` for read, write and zlib errors, `.interrupted` when `stop`
  ///   is set.
  static func compress(
    from input: Int32, to output: Int32, outputName: RawPath, header: [UInt8], chunkSize: Int,
    workspaces: WorkspacePool, slots: CompressionSlots, window: Int, stop: AtomicFlag
  ) async throws(FileFailure) -> (bytesIn: Int64, bytesOut: Int64) {
    let writer = DescriptorWriter(descriptor: output, display: outputName)
    // Nothing is written before the input has been read once: one that cannot be read at
    // all (a folder on standard input, EIO) leaves the output empty, not a lone header.
    let first = try readChunk(input, size: chunkSize)
    try writer.write(header)
    var crc: UInt32 = 0
    var bytesIn: Int64 = 0
    var failure: FileFailure? = nil
    await withTaskGroup(of: Result<CompressedChunk, FileFailure>.self) { group in
      var current: [UInt8]? = first
      var dictionary: [UInt8] = []
      var started = 0
      var written = 0
      var ready: [Int: CompressedChunk] = [:]
      while failure == nil {
        while let data = current, started - written < window {
          if stop.isSet {
            failure = .interrupted
            break
          }
          // Read one chunk ahead: an empty one means this is the last.
          let following: [UInt8]
          do throws(FileFailure) {
            following = data.count < chunkSize ? [] : try readChunk(input, size: chunkSize)
          } catch {
            failure = error
            break
          }
          let isLast = following.isEmpty
          let index = started
          let chunkDictionary = dictionary
          dictionary = Array(data.suffix(workspaces.engine.chunkDictionarySize))
          guard await slots.acquire() else {
            failure = .interrupted
            break
          }
          group.addTask {
            defer { slots.release() }
            do throws(FileFailure) {
              return .success(
                try workspaces.withWorkspace { (workspace) throws(FileFailure) in
                  try compressChunk(
                    data, dictionary: chunkDictionary, index: index, isLast: isLast,
                    workspace: workspace)
                })
            } catch {
              return .failure(error)
            }
          }
          started += 1
          current = isLast ? nil : following
        }
        if failure != nil || written == started { break }
        guard let result = await group.next() else { break }
        switch result {
        case .failure(let error): failure = error
        case .success(let chunk): ready[chunk.index] = chunk
        }
        while failure == nil, let chunk = ready.removeValue(forKey: written) {
          do throws(FileFailure) {
            try writer.write(chunk.bytes)
          } catch {
            failure = error
          }
          crc = CRC32.combine(crc, chunk.crc, secondLength: Int64(chunk.length))
          bytesIn += Int64(chunk.length)
          written += 1
        }
      }
    }
    if let failure { throw failure }
    try writer.write(GzipTrailer(crc: crc, uncompressedSize: bytesIn).encoded)
    return (bytesIn, writer.bytesWritten)
  }

  /// Reads up to `size` bytes (fewer only at the end of the input).
  static func readChunk(_ input: Int32, size: Int) throws(FileFailure) -> [UInt8] {
    var block = [UInt8](repeating: 0, count: size)
    var total = 0
    var failure: SystemError? = nil
    block.withUnsafeMutableBytes { raw in
      while total < size {
        let count = read(input, raw.baseAddress! + total, size - total)
        if count < 0 {
          if errno == EINTR { continue }
          failure = SystemError.current
          return
        }
        if count == 0 { break }
        total += count
      }
    }
    if let failure { throw .cannotRead(failure) }
    block.removeLast(size - total)
    return block
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
