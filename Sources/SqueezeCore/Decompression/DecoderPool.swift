import SqueezeEngines
import SqueezeGzip
import SqueezeSystem
import Synchronization

/// The engine's inflater and two buffers one decompression uses, reused from file to file.
// @unchecked Sendable: a workspace is only ever used by one thread at a time. It is
// reachable only through `DecoderPool.withWorkspace`, which removes it from the pool under the
// pool's mutex, lends it to one synchronous closure (no suspension point inside), and puts it
// back afterwards; no reference escapes the closure.
final class DecodeWorkspace: @unchecked Sendable {
  /// The reusable inflater.
  let inflater: any RawInflater
  /// The engine it belongs to.
  let engine: Engine
  /// Compressed bytes read from the source.
  let input: UnsafeMutableRawBufferPointer
  /// Decompressed bytes on their way to the output.
  let output: UnsafeMutableRawBufferPointer

  /// Bytes per read: 128 KiB.
  static let inputSize = 128 * 1024
  /// Bytes per inflated chunk: 512 KiB. ISA-L copies the last 32 KiB of each call's output
  /// into its own window, so a bigger buffer copies less (the Performance article gives
  /// what a smaller one cost).
  static let outputSize = 512 * 1024

  /// - Throws: ``EngineError`` when the engine cannot allocate an inflater.
  init(engine: Engine) throws(EngineError) {
    self.engine = engine
    inflater = try engine.makeInflater()
    input = .allocate(byteCount: DecodeWorkspace.inputSize, alignment: 64)
    output = .allocate(byteCount: DecodeWorkspace.outputSize, alignment: 64)
  }

  deinit {
    input.deallocate()
    output.deallocate()
  }
}

/// Lends ``DecodeWorkspace``s: at most one per decompression running at once. A thread gets
/// back the workspace it used last when that one is idle (``ThreadAffinePool``).
final class DecoderPool: Sendable {
  private let idle = ThreadAffinePool<DecodeWorkspace>()
  /// The engine every workspace inflates with.
  let engine: Engine

  init(engine: Engine) {
    self.engine = engine
  }

  /// Runs `body` with a workspace nobody else is using, then returns it to the pool.
  ///
  /// - Throws: ``FileFailure/engine(_:)`` when a workspace cannot be created, or what `body`
  ///   throws.
  func withWorkspace<R>(
    _ body: (DecodeWorkspace) throws(FileFailure) -> R
  ) throws(FileFailure) -> R {
    try idle.lend(make: { () throws(EngineError) in try DecodeWorkspace(engine: engine) }, body)
  }
}

/// Streams a whole gzip file through a ``GzipDecoder``.
enum GzipFileReader {
  /// Reads `descriptor` to its end, decoding every member and passing the uncompressed data
  /// to `sink`.
  ///
  /// zlib is the reference of what is valid gzip. ISA-L (the fast engine's inflater) is
  /// more lenient about some invalid deflate headers (an incomplete Huffman code that zlib
  /// calls "invalid code lengths set" decodes until its gaps are hit), so when it refuses a
  /// file that can be read again from its start, zlib decodes the file again and its verdict
  /// stands: the same files fail with the same fault whichever engine runs (the detail and
  /// position may be zlib's). With `restart`, the output is redone from the start (nothing
  /// was published yet); without it, zlib only diagnoses (output already sent on, as from a
  /// pipe to standard output), and ISA-L's fault stands when zlib finds none. (A regular
  /// file restored to standard output skips what was sent instead: ``ChunkedFileRestore``.)
  ///
  /// - Parameters:
  ///   - prefix: bytes already read from `descriptor` (its head, read to tell gzip from other
  ///     data), decoded first as if read again.
  ///   - passesTrailingDataThrough: copy data after the last member to `sink` (`-dcf`).
  ///   - progress: called with each count of compressed bytes read.
  ///   - stop: checked between reads.
  ///   - restart: forgets what `sink` was given, before a second decode from the start.
  ///   - knownSize: the file's size from `fstat` (a regular file read from its start), or
  ///     nil: a short read that ends exactly there is taken as the end of the file, which
  ///     saves the `read` that would return 0 on every small file (as compression's reader
  ///     does). Growth past it is the caller's to check (``DecodedFile/readAtOnce``).
  /// - Returns: the decoder, finished (its header, member count and totals), and how the
  ///   file was read.
  /// - Throws: ``FileFailure``: `.badGzip` for the data's faults, `.cannotRead`, what `sink`
  ///   throws, `.interrupted`.
  static func decodeFile(
    _ descriptor: Int32, knownSize: Int64?, workspace: DecodeWorkspace, stop: AtomicFlag?,
    progress: (Int) -> Void, restart: (() throws(FileFailure) -> Void)?,
    sink: (UnsafeRawBufferPointer) throws(FileFailure) -> Void
  ) throws(FileFailure) -> DecodedFile {
    var decoder = GzipDecoder(inflater: workspace.inflater, output: workspace.output)
    do {
      let reads = try decode(
        descriptor, with: &decoder, workspace: workspace, stop: stop, knownSize: knownSize,
        progress: progress, sink: sink)
      let readAtOnce =
        reads == 1 && knownSize.map { $0 > 0 && decoder.offset == $0 } == true
      return DecodedFile(decoder: decoder, readAtOnce: readAtOnce)
    } catch .badGzip(let fault) where workspace.engine != .zlib {
      let decoder = try decodeAgainWithZlib(
        descriptor, passesTrailingDataThrough: false, fault: fault, stop: stop,
        restart: restart, sink: sink)
      return DecodedFile(decoder: decoder, readAtOnce: false)
    }
  }

  /// A whole file decoded by ``decodeFile(_:knownSize:workspace:stop:progress:restart:sink:)``.
  struct DecodedFile {
    /// The decoder, finished.
    let decoder: GzipDecoder
    /// True when one `read(2)` returned the whole file, exactly the size `fstat` gave: the
    /// bytes decoded are one state of the file, so it needs no second `fstat` to show it did
    /// not change while being read.
    let readAtOnce: Bool
  }

  /// Reads `descriptor` to its end, as ``decodeFile(_:knownSize:workspace:stop:progress:restart:sink:)``
  /// does, for any input (standard input, a pipe, a prefix already read).
  static func decode(
    _ descriptor: Int32, prefix: [UInt8] = [], passesTrailingDataThrough: Bool = false,
    workspace: DecodeWorkspace, stop: AtomicFlag?,
    progress: (Int) -> Void, restart: (() throws(FileFailure) -> Void)?,
    sink: (UnsafeRawBufferPointer) throws(FileFailure) -> Void
  ) throws(FileFailure) -> GzipDecoder {
    var decoder = GzipDecoder(inflater: workspace.inflater, output: workspace.output)
    decoder.passesTrailingDataThrough = passesTrailingDataThrough
    do {
      try decode(
        descriptor, with: &decoder, prefix: prefix, workspace: workspace, stop: stop,
        progress: progress, sink: sink)
      return decoder
    } catch .badGzip(let fault) where workspace.engine != .zlib {
      return try decodeAgainWithZlib(
        descriptor, passesTrailingDataThrough: passesTrailingDataThrough, fault: fault,
        stop: stop, restart: restart, sink: sink)
    }
  }

  /// The second decode of ``decode(_:prefix:passesTrailingDataThrough:workspace:stop:progress:restart:sink:)``,
  /// with zlib, from the start of the file, after the fast engine refused it with `fault`.
  ///
  /// - Throws: zlib's fault; `fault` when the file cannot be read again, or when zlib
  ///   accepts it but the output cannot be redone.
  static func decodeAgainWithZlib(
    _ descriptor: Int32, passesTrailingDataThrough: Bool, fault: GzipFormatError,
    stop: AtomicFlag?, restart: (() throws(FileFailure) -> Void)?,
    sink: (UnsafeRawBufferPointer) throws(FileFailure) -> Void
  ) throws(FileFailure) -> GzipDecoder {
    guard (try? Descriptor.seek(descriptor, to: 0)) != nil,
      let reference = try? DecodeWorkspace(engine: .zlib)
    else { throw .badGzip(fault) }
    try restart?()
    var decoder = GzipDecoder(inflater: reference.inflater, output: reference.output)
    decoder.passesTrailingDataThrough = passesTrailingDataThrough
    try decode(
      descriptor, with: &decoder, workspace: reference, stop: stop, progress: { _ in },
      sink: restart == nil ? { _ in } : sink)
    guard restart != nil else { throw .badGzip(fault) }
    return decoder
  }

  /// Reads `descriptor` from its current position to its end through `decoder` (fresh, or
  /// resumed in the middle of a file), then declares the end.
  ///
  /// - Parameters:
  ///   - knownSize: where the file ends by `fstat`, when it is read from its start: a read
  ///     that ends exactly there, short of the buffer, ends the input.
  /// - Returns: the `read(2)` calls made.
  /// - Throws: as ``decode(_:prefix:passesTrailingDataThrough:workspace:stop:progress:restart:sink:)``.
  @discardableResult
  static func decode(
    _ descriptor: Int32, with decoder: inout GzipDecoder, prefix: [UInt8] = [],
    workspace: DecodeWorkspace, stop: AtomicFlag?, knownSize: Int64? = nil,
    progress: (Int) -> Void, sink: (UnsafeRawBufferPointer) throws(FileFailure) -> Void
  ) throws(FileFailure) -> Int {
    var total: Int64 = 0
    var reads = 0
    // The prefix (2 bytes at most) is the first chunk, read as if from the descriptor.
    var prefixLeft = prefix.count
    if prefixLeft > 0 {
      workspace.input.copyBytes(from: prefix.prefix(workspace.input.count))
      prefixLeft = min(prefixLeft, workspace.input.count)
    }
    while true {
      if stop?.isSet == true || Task.isCancelled { throw .interrupted }
      let fromPrefix = prefixLeft > 0
      let count: Int
      if fromPrefix {
        count = prefixLeft
      } else {
        do throws(SystemError) {
          count = try Descriptor.read(descriptor, into: workspace.input)
        } catch {
          throw .cannotRead(error)
        }
      }
      if !fromPrefix { reads += 1 }
      prefixLeft = 0
      if count == 0 { break }
      total += Int64(count)
      do throws(GzipStreamError<FileFailure>) {
        try decoder.feed(UnsafeRawBufferPointer(rebasing: workspace.input[..<count]), sink: sink)
      } catch {
        switch error {
        case .format(let format): throw .badGzip(format)
        case .sink(let failure): throw failure
        }
      }
      progress(count)
      if let knownSize, total == knownSize, count < workspace.input.count { break }
    }
    do {
      try decoder.finish()
    } catch {
      throw .badGzip(error)
    }
    return reads
  }
}
