import SqueezeEngines

/// Decodes gzip data (RFC 1952) as it streams in: one or more members, each a header, a raw
/// deflate stream and a trailer whose CRC-32 and ISIZE are checked, optionally followed by
/// zero bytes (tape padding, which gzip accepts). Anything else after a member is trailing
/// garbage, an error. Memory stays bounded whatever the data expands to: output leaves in
/// chunks of the caller's buffer as soon as it is inflated.
///
/// Used by `-d`, `-t`, `--rm`'s verification and the fuzz target; never trusts the input.
package struct GzipDecoder {
  private enum State {
    /// Collecting a member header.
    case header
    /// Inflating a member's deflate stream.
    case body
    /// Collecting a member's 8-byte trailer.
    case trailer
    /// After a complete member: another member, zero padding, or the end.
    case betweenMembers
    /// Zero padding after the last member: only zeros may follow.
    case padding
    /// Data after the last member that is not gzip, passed through unchanged
    /// (``passesTrailingDataThrough``).
    case passingThrough
  }

  private let inflater: any RawInflater
  private let output: UnsafeMutableRawBufferPointer
  private var state = State.header
  /// The header being read (headers of any length, in bounded memory).
  private var headerReader = GzipHeaderReader()
  /// The trailer's bytes collected so far.
  private var pending: [UInt8] = []
  private var crc = CRC32()
  private var memberSize: UInt64 = 0
  /// Where the header being collected starts.
  private var headerStart: Int64 = 0

  /// Compressed bytes consumed so far (for error positions).
  package private(set) var offset: Int64 = 0
  /// Complete members decoded so far.
  package private(set) var members = 0
  /// Uncompressed bytes produced so far, over all members.
  package private(set) var totalOutput: Int64 = 0
  /// The first member's header, once read.
  package private(set) var firstHeader: GzipHeader? = nil
  /// Header and trailer bytes of the members decoded so far (what `-l`'s ratio leaves out).
  package private(set) var overheadBytes: Int64 = 0
  /// The CRC-32 in the last complete member's trailer (what `-lv`'s crc column shows, as
  /// gzip shows the one in the file's last 8 bytes), nil before the first.
  package private(set) var lastCRC: UInt32? = nil

  /// Whether data after a complete member that is not another member goes to the sink
  /// unchanged instead of being trailing garbage: `gzip -dcf` (and `zcat -f`) copy it.
  package var passesTrailingDataThrough = false

  /// - Parameters:
  ///   - inflater: the engine's raw inflater to use (reset here).
  ///   - output: the buffer decoded data passes through; its size is the chunk size.
  package init(inflater: any RawInflater, output: UnsafeMutableRawBufferPointer) {
    self.inflater = inflater
    self.output = output
    inflater.reset()
  }

  /// Where a resumed decoder picks up the first member.
  package enum Resumption {
    /// Inside the deflate stream, at a block boundary: `dictionary` is the (up to 32 KiB
    /// of) output right before it.
    case deflateStream(dictionary: UnsafeRawBufferPointer)
    /// At the trailer: the deflate stream ended right before `offset`.
    case trailer
  }

  /// A decoder that continues the first member of a file whose beginning was decoded
  /// elsewhere (chunks decoded in parallel, then checked and written in order): it starts
  /// at byte `offset` of the file, inside the member's deflate stream or at its trailer,
  /// with the CRC-32 and the length of the member's data so far, and then reads the rest
  /// of the file as a fresh decoder would (the trailer, further members, padding).
  ///
  /// - Throws: `EngineError` when the inflater refuses the dictionary.
  package init(
    resuming resumption: Resumption, inflater: any RawInflater,
    output: UnsafeMutableRawBufferPointer, header: GzipHeader, headerLength: Int, crc: UInt32,
    memberSize: Int64, offset: Int64
  ) throws(EngineError) {
    self.init(inflater: inflater, output: output)
    switch resumption {
    case .deflateStream(let dictionary):
      try inflater.setDictionary(dictionary)
      state = .body
    case .trailer:
      state = .trailer
    }
    firstHeader = header
    overheadBytes = Int64(headerLength)
    self.crc = CRC32(value: crc)
    self.memberSize = UInt64(memberSize)
    totalOutput = memberSize
    self.offset = offset
  }

  /// Decodes `input`, passing each chunk of uncompressed data to `sink`.
  ///
  /// - Throws: ``GzipFormatError`` naming the fault and where it is, or what `sink` throws.
  package mutating func feed<E: Error>(
    _ input: UnsafeRawBufferPointer, sink: (UnsafeRawBufferPointer) throws(E) -> Void
  ) throws(GzipStreamError<E>) {
    var position = 0
    while position < input.count {
      let rest = UnsafeRawBufferPointer(rebasing: input[position...])
      switch state {
      case .header:
        let (parsed, consumed) = headerReader.read(rest)
        position += consumed
        offset += Int64(consumed)
        switch parsed {
        case .needMoreData:
          break
        case .invalid(let error):
          guard members > 0 else { throw .format(error) }
          guard passesTrailingDataThrough else {
            throw .format(.trailingGarbage(offset: headerStart))
          }
          // A later member whose header fails its CRC-16 was read to its end (a header can
          // be long, and is not held): its bytes cannot be copied, so it is reported as the
          // damaged member it is.
          guard error != .badHeaderCRC else { throw .format(error) }
          // Not another member: everything from its would-be header on is copied (the
          // reader stops within the first 4 bytes, which it keeps).
          let trailing = headerReader.fixedBytes
          headerReader = GzipHeaderReader()
          state = .passingThrough
          // Array.withUnsafeBytes rethrows untyped: carry the typed error out by hand.
          var failure: E? = nil
          trailing.withUnsafeBytes { raw in
            do throws(E) { try sink(raw) } catch { failure = error }
          }
          if let failure { throw .sink(failure) }
        case .header(let header, let length):
          headerReader = GzipHeaderReader()
          overheadBytes += Int64(length)
          if firstHeader == nil { firstHeader = header }
          inflater.reset()
          crc = CRC32()
          memberSize = 0
          state = .body
        }
      case .body:
        let step: InflateStep
        do {
          step = try inflater.inflate(input: rest, output: output)
        } catch {
          throw .format(.corruptDeflateData(error.error, offset: offset + Int64(error.consumed)))
        }
        position += step.consumed
        offset += Int64(step.consumed)
        if step.produced > 0 {
          let chunk = UnsafeRawBufferPointer(rebasing: output[..<step.produced])
          crc.update(chunk)
          memberSize &+= UInt64(step.produced)
          totalOutput += Int64(step.produced)
          do {
            try sink(chunk)
          } catch {
            throw .sink(error)
          }
        }
        if step.finished {
          // What the inflater read past the end in earlier calls starts the trailer.
          pending = inflater.takeBytesPastTheEnd()
          state = .trailer
          if pending.count == 8 {
            do { try checkTrailer() } catch { throw .format(error) }
          }
        }
      case .trailer:
        let taken = min(rest.count, 8 - pending.count)
        pending.append(contentsOf: rest[..<taken])
        position += taken
        offset += Int64(taken)
        if pending.count == 8 {
          do { try checkTrailer() } catch { throw .format(error) }
        }
      case .betweenMembers:
        // gzip -dcf copies zeros after the last member too; otherwise they are padding.
        state = rest[0] == 0 && !passesTrailingDataThrough ? .padding : .header
        headerStart = offset
      case .padding:
        guard let nonzero = rest.firstIndex(where: { $0 != 0 }) else {
          position = input.count
          offset += Int64(rest.count)
          continue
        }
        throw .format(.trailingGarbage(offset: offset + Int64(nonzero)))
      case .passingThrough:
        position = input.count
        offset += Int64(rest.count)
        do {
          try sink(rest)
        } catch {
          throw .sink(error)
        }
      }
    }
  }

  /// Checks the 8 trailer bytes collected in `pending` against the member's CRC-32 and
  /// ISIZE (RFC 1952 section 2.3.1) and ends the member.
  private mutating func checkTrailer() throws(GzipFormatError) {
    let trailer = pending.withUnsafeBytes { GzipTrailer($0)! }
    pending = []
    let size = UInt32(truncatingIfNeeded: memberSize)
    switch (trailer.crc == crc.value, trailer.size == size) {
    case (true, true): break
    case (false, true): throw .crcMismatch(stored: trailer.crc, computed: crc.value)
    case (true, false): throw .sizeMismatch(stored: trailer.size, computed: size)
    case (false, false):
      throw .crcAndSizeMismatch(
        storedCRC: trailer.crc, computedCRC: crc.value, storedSize: trailer.size,
        computedSize: size)
    }
    members += 1
    overheadBytes += 8
    lastCRC = trailer.crc
    state = .betweenMembers
  }

  /// Declares the end of the input.
  ///
  /// - Throws: ``GzipFormatError/empty`` for no input at all, `truncated` when the input
  ///   stopped inside a member.
  package func finish() throws(GzipFormatError) {
    switch state {
    case .betweenMembers, .padding, .passingThrough:
      return
    case .header where members == 0 && pending.isEmpty && offset == 0:
      throw .empty
    case .header, .body, .trailer:
      throw .truncated(offset: offset)
    }
  }
}

/// A failure while decoding: the data's fault, or the sink's (writing the output).
package enum GzipStreamError<SinkError: Error>: Error {
  case format(GzipFormatError)
  case sink(SinkError)
}
