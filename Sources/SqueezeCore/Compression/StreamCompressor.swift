import Glibc

/// Compresses a sequential input (standard input, a pipe, or a file read front to back) into
/// one gzip member on an output descriptor, block-parallel: blocks are read in order, each is
/// compressed in a child task that takes a compression slot (the same block layout, so a
/// regular file gives the same bytes as `squeeze file`), and the compressed blocks are
/// written in order. At most `window` blocks are in memory at once, plus one read ahead (to
/// know which block is the last); memory does not grow with the input.
enum StreamCompressor {
  /// Compresses everything `input` yields into `output`.
  ///
  /// - Parameters:
  ///   - header: the gzip header to write first.
  ///   - blockSize: bytes per block.
  ///   - window: most blocks in flight (jobs + 1).
  /// - Returns: bytes read and bytes written.
  /// - Throws: ``FileFailure`` for read, write and zlib errors, `.interrupted` when `stop`
  ///   is set.
  static func compress(
    from input: Int32, to output: Int32, outputName: RawPath, header: [UInt8], blockSize: Int,
    workspaces: WorkspacePool, slots: CompressionSlots, window: Int, stop: AtomicFlag
  ) async throws(FileFailure) -> (bytesIn: Int64, bytesOut: Int64) {
    let writer = DescriptorWriter(descriptor: output, display: outputName)
    try writer.write(header)
    var crc: UInt32 = 0
    var bytesIn: Int64 = 0
    var failure: FileFailure? = nil
    await withTaskGroup(of: Result<CompressedBlock, FileFailure>.self) { group in
      var current: [UInt8]? = nil
      do throws(FileFailure) {
        current = try readBlock(input, size: blockSize)
      } catch {
        failure = error
        return
      }
      var dictionary: [UInt8] = []
      var started = 0
      var written = 0
      var ready: [Int: CompressedBlock] = [:]
      while failure == nil {
        while let data = current, started - written < window {
          if stop.isSet {
            failure = .interrupted
            break
          }
          // Read one block ahead: an empty one means this is the last.
          let following: [UInt8]
          do throws(FileFailure) {
            following = data.count < blockSize ? [] : try readBlock(input, size: blockSize)
          } catch {
            failure = error
            break
          }
          let isLast = following.isEmpty
          let index = started
          let blockDictionary = dictionary
          dictionary = Array(data.suffix(BlockLayout.dictionarySize))
          guard await slots.acquire() else {
            failure = .interrupted
            break
          }
          group.addTask {
            defer { slots.release() }
            do throws(FileFailure) {
              return .success(
                try workspaces.withWorkspace { (workspace) throws(FileFailure) in
                  try compressBlock(
                    data, dictionary: blockDictionary, index: index, isLast: isLast,
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
        case .success(let block): ready[block.index] = block
        }
        while failure == nil, let block = ready.removeValue(forKey: written) {
          do throws(FileFailure) {
            try writer.write(block.bytes)
          } catch {
            failure = error
          }
          crc = CRC32.combine(crc, block.crc, secondLength: Int64(block.length))
          bytesIn += Int64(block.length)
          written += 1
        }
      }
    }
    if let failure { throw failure }
    try writer.write(GzipTrailer(crc: crc, uncompressedSize: bytesIn).encoded)
    return (bytesIn, writer.bytesWritten)
  }

  /// Reads up to `size` bytes (fewer only at the end of the input).
  static func readBlock(_ input: Int32, size: Int) throws(FileFailure) -> [UInt8] {
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

  /// Compresses one block held in memory (see ``BlockLayout``).
  static func compressBlock(
    _ data: [UInt8], dictionary: [UInt8], index: Int, isLast: Bool, workspace: CompressionWorkspace
  ) throws(FileFailure) -> CompressedBlock {
    let dictionaryEnd = BlockLayout.dictionarySize
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
    let block = UnsafeRawBufferPointer(
      rebasing: workspace.input[dictionaryEnd..<(dictionaryEnd + data.count)])
    var crc = CRC32()
    crc.update(block)
    let produced: Int
    do {
      produced = try workspace.deflater.deflateBlock(
        block, dictionary: UnsafeRawBufferPointer(rebasing: workspace.input[start..<dictionaryEnd]),
        isLast: isLast, into: workspace.output)
    } catch {
      throw .zlib(error)
    }
    return CompressedBlock(
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
