/// Finds where the final block of a complete raw deflate stream begins and where it ends,
/// in bits from the stream's start (RFC 1951 section 3.2.3: bits are read from the least
/// significant end of each byte).
///
/// libdeflate writes every output as a complete stream whose last block has BFINAL set, and
/// does not say where that block starts. To join independent chunks into one stream, the
/// fast engine clears that bit and ends the chunk with a sync marker (zlib's
/// `examples/gzjoin.c` does the same with `inflate(Z_BLOCK)`, which costs a full inflate:
/// 0.30 s per 132 MB here, a fifth of the compression time). This locator walks the blocks
/// without producing output: stored blocks are skipped by their length; in Huffman-coded
/// blocks each symbol is looked up in a table that already counts its extra bits, so a
/// literal costs one lookup and a match two, with no copying and no window.
///
/// The walk has two loops. While at least 8 bytes of the stream remain, each step refills a
/// 64-bit bit buffer with one unaligned load and no branch (to 56 bits or more, all of them
/// the stream's: more than one match takes), so the step needs no end check and its
/// arithmetic cannot overflow; this loop does nearly all the work. The last bytes are read
/// one at a time, with the end checked after every symbol. callgrind, on the corpus's
/// 132 MB `big/drivers-net.tar` at level 6 with one job: 917 million instructions in the
/// walk before, 735 million after. A wider literal/length table whose entries skipped runs
/// of literals (and the length after them) in one lookup was tried and dropped: libdeflate
/// starts a new block every 47 KB or so there (2,797 dynamic blocks), so building and folding
/// the bigger table for every block cost more than it saved (12 bits: 938 million; 11: 797;
/// 10: 771).
///
/// It reads only the stream it is given (never past its end) and throws on anything that is
/// not valid deflate, but it is meant for libdeflate's own output, not for untrusted input:
/// it checks what the walk needs (block types, code lengths, symbols, stored lengths), not
/// that distances stay within the data.
///
/// Not thread-safe: its tables are reused from call to call; one per compressor.
final class FinalBlockLocator {
  /// Where the final block is: the bit offset of its header (its BFINAL bit), and of the bit
  /// right after its end-of-block code (or after its stored bytes).
  struct Location: Equatable {
    var headerBit: Int
    var endBit: Int
  }

  /// Bits looked up at once in the literal/length table; longer codes (rare) take the
  /// canonical slow path.
  private static let literalTableBits = 10
  /// Bits looked up at once in the distance table.
  private static let distanceTableBits = 8

  /// Table entries: the low 8 bits are the bits to consume (code and extra bits), the next
  /// byte the kind.
  private static let literal: UInt32 = 0 << 8
  private static let length: UInt32 = 1 << 8
  private static let endOfBlock: UInt32 = 2 << 8
  private static let distance: UInt32 = 3 << 8
  private static let long: UInt32 = 4 << 8
  private static let invalid: UInt32 = 5 << 8
  private static let kindMask: UInt32 = 0xff << 8

  /// The literal/length and distance codes of the block being walked.
  private let literalCode = FinalBlockLocator.symbolTable(bits: FinalBlockLocator.literalTableBits)
  private let distanceCode = FinalBlockLocator.symbolTable(
    bits: FinalBlockLocator.distanceTableBits)
  /// The fixed codes of RFC 1951 section 3.2.6, built once.
  private let fixedLiteralCode = FinalBlockLocator.symbolTable(
    bits: FinalBlockLocator.literalTableBits)
  private let fixedDistanceCode = FinalBlockLocator.symbolTable(
    bits: FinalBlockLocator.distanceTableBits)
  /// The code length code of a dynamic header (entries: length | symbol << 16; 0 for none).
  private let codeLengthCode = HuffmanTable(tableBits: 7, missing: 0, long: 0)

  init() {
    var fixed = [UInt8](repeating: 8, count: 288)
    for symbol in 144..<256 { fixed[symbol] = 9 }
    for symbol in 256..<280 { fixed[symbol] = 7 }
    _ = fixedLiteralCode.build(lengths: fixed[...], entry: FinalBlockLocator.literalEntry)
    _ = fixedDistanceCode.build(
      lengths: [UInt8](repeating: 5, count: 30)[...], entry: FinalBlockLocator.distanceEntry)
  }

  /// Walks `stream` block by block to its final block.
  ///
  /// - Returns: where the final block's header and end are, in bits.
  /// - Throws: ``EngineError`` (library libdeflate, code 0) when the data is not a complete
  ///   deflate stream.
  func locate(_ stream: UnsafeRawBufferPointer) throws(EngineError) -> Location {
    guard let base = stream.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
      throw Self.failure("empty deflate stream")
    }
    var reader = BitReader(base: base, count: stream.count)
    while true {
      reader.refill()
      let header = reader.offset
      let final = reader.take(1)
      let type = reader.take(2)
      switch type {
      case 0:
        reader.alignToByte()
        reader.refill()
        let length = Int(reader.take(16))
        let complement = Int(reader.take(16))
        guard length ^ 0xffff == complement else {
          throw Self.failure("stored block length mismatch")
        }
        guard reader.skipBytes(length) else { throw Self.failure("stored block past the end") }
      case 1:
        try walkSymbols(&reader, literals: fixedLiteralCode, distances: fixedDistanceCode)
      case 2:
        try readDynamicHeader(&reader)
        try walkSymbols(&reader, literals: literalCode, distances: distanceCode)
      default:
        throw Self.failure("invalid block type 3")
      }
      guard !reader.isPastEnd else { throw Self.failure("deflate stream ends inside a block") }
      if final == 1 { return Location(headerBit: header, endBit: reader.offset) }
    }
  }

  /// Reads a dynamic block's code lengths (RFC 1951 section 3.2.7) and builds its two tables.
  private func readDynamicHeader(_ reader: inout BitReader) throws(EngineError) {
    reader.refill()
    let literalCount = Int(reader.take(5)) + 257
    let distanceCount = Int(reader.take(5)) + 1
    let codeLengthCount = Int(reader.take(4)) + 4
    guard literalCount <= 286, distanceCount <= 30 else {
      throw Self.failure("too many length or distance symbols")
    }
    var codeLengthLengths = [UInt8](repeating: 0, count: 19)
    for index in 0..<codeLengthCount {
      reader.refill()
      codeLengthLengths[Self.codeLengthOrder[index]] = UInt8(reader.take(3))
    }
    let built = codeLengthCode.build(lengths: codeLengthLengths[...]) { symbol, length in
      UInt32(length) | UInt32(symbol) << 16
    }
    guard built else { throw Self.failure("invalid code length code") }
    let total = literalCount + distanceCount
    // A local array: a stored one would pay for exclusivity checks on every access.
    var lengths = [UInt8](repeating: 0, count: 320)
    var index = 0
    while index < total {
      reader.refill()
      let entry = codeLengthCode.entries[Int(reader.peek(7))]
      guard entry & 0xff != 0 else { throw Self.failure("invalid code length symbol") }
      reader.consume(Int(entry & 0xff))
      let symbol = Int(entry >> 16)
      var repeatCount = 1
      var value: UInt8 = 0
      switch symbol {
      case 0...15: value = UInt8(symbol)
      case 16:
        guard index > 0 else { throw Self.failure("repeat with no previous length") }
        value = lengths[index - 1]
        repeatCount = 3 + Int(reader.take(2))
      case 17: repeatCount = 3 + Int(reader.take(3))
      default: repeatCount = 11 + Int(reader.take(7))
      }
      guard index + repeatCount <= total else { throw Self.failure("code lengths overflow") }
      for offset in 0..<repeatCount { lengths[index + offset] = value }
      index += repeatCount
    }
    guard lengths[256] != 0 else { throw Self.failure("no end-of-block code") }
    guard literalCode.build(lengths: lengths[0..<literalCount], entry: Self.literalEntry),
      distanceCode.build(
        lengths: lengths[literalCount..<total], entry: Self.distanceEntry)
    else { throw Self.failure("invalid Huffman code lengths") }
  }

  /// Skips the symbols of a Huffman-coded block up to and including its end-of-block code.
  private func walkSymbols(
    _ reader: inout BitReader, literals: HuffmanTable, distances: HuffmanTable
  ) throws(EngineError) {
    let literalEntries = literals.entries
    let distanceEntries = distances.entries
    let literalMask = UInt64(1 << Self.literalTableBits - 1)
    let distanceMask = UInt64(1 << Self.distanceTableBits - 1)
    // While 8 bytes remain from the next one to load, each step starts with at least 56 bits
    // buffered, all of them the stream's, and takes at most 20 + 28 (a length code with its
    // extra bits, and a distance code with its), so it needs no end check.
    while reader.canLoadWord {
      reader.refillWord()
      if try Self.skipSymbol(
        &reader, literals: literals, literalEntries: literalEntries, literalMask: literalMask,
        distances: distances, distanceEntries: distanceEntries, distanceMask: distanceMask)
      {
        return
      }
    }
    // The last bytes: refilled a byte at a time, checked for the end after every step.
    while true {
      reader.refill()
      if try Self.skipSymbol(
        &reader, literals: literals, literalEntries: literalEntries, literalMask: literalMask,
        distances: distances, distanceEntries: distanceEntries, distanceMask: distanceMask)
      {
        return
      }
      guard !reader.isPastEnd else { throw Self.failure("deflate stream ends inside a block") }
    }
  }

  /// Consumes one symbol from the front of `reader`'s buffer: its code and extra bits and,
  /// for a length, the distance code and extra bits after it. The buffer must hold the whole
  /// step (at most 20 + 28 bits) or the rest of the stream.
  ///
  /// - Returns: true when the symbol was the end-of-block code.
  /// - Throws: ``EngineError`` for a symbol that no valid block holds.
  @inline(__always)
  private static func skipSymbol(
    _ reader: inout BitReader, literals: HuffmanTable,
    literalEntries: UnsafeMutablePointer<UInt32>, literalMask: UInt64, distances: HuffmanTable,
    distanceEntries: UnsafeMutablePointer<UInt32>, distanceMask: UInt64
  ) throws(EngineError) -> Bool {
    var entry = literalEntries[Int(reader.buffer & literalMask)]
    let kind = entry & Self.kindMask
    if kind == Self.literal {
      reader.consume(Int(entry & 0xff))
      return false
    }
    if kind == Self.long { entry = literals.decodeLong(reader.buffer) }
    reader.consume(Int(entry & 0xff))
    switch entry & Self.kindMask {
    case Self.literal:
      return false
    case Self.length:
      var distanceEntry = distanceEntries[Int(reader.buffer & distanceMask)]
      if distanceEntry & Self.kindMask == Self.long {
        distanceEntry = distances.decodeLong(reader.buffer)
      }
      guard distanceEntry & Self.kindMask == Self.distance else {
        throw Self.failure("invalid distance symbol")
      }
      reader.consume(Int(distanceEntry & 0xff))
      return false
    case Self.endOfBlock:
      return true
    default:
      throw Self.failure("invalid literal/length symbol")
    }
  }

  /// The literal/length table entry of `symbol` with a code of `length` bits: a length
  /// symbol's extra bits (RFC 1951 section 3.2.5) are counted in the bits to consume.
  private static func literalEntry(_ symbol: Int, _ length: Int) -> UInt32 {
    switch symbol {
    case 0..<256: return literal | UInt32(length)
    case 256: return endOfBlock | UInt32(length)
    case 257..<265, 285: return Self.length | UInt32(length)
    case 265..<285: return Self.length | UInt32(length + (symbol - 261) / 4)
    default: return invalid | UInt32(length)
    }
  }

  /// The distance table entry of `symbol`: its extra bits (RFC 1951 section 3.2.5) counted in.
  private static func distanceEntry(_ symbol: Int, _ length: Int) -> UInt32 {
    switch symbol {
    case 0..<4: return distance | UInt32(length)
    case 4..<30: return distance | UInt32(length + symbol / 2 - 1)
    default: return invalid | UInt32(length)
    }
  }

  /// A table for literal/length or distance codes: no code is `invalid`, a long one `long`.
  private static func symbolTable(bits: Int) -> HuffmanTable {
    HuffmanTable(tableBits: bits, missing: invalid, long: long)
  }

  /// The order of the code length code's lengths in a dynamic header (RFC 1951 section 3.2.7).
  private static let codeLengthOrder = [
    16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
  ]

  private static func failure(_ what: String) -> EngineError {
    EngineError(library: .libdeflate, code: 0, detail: "cannot find the final block: \(what)")
  }
}

/// Reads a byte buffer as deflate's bit stream, least significant bit first, through a
/// 64-bit buffer refilled a word at a time. Reads past the end give zero bits and set
/// ``isPastEnd``; no byte beyond the buffer is ever read.
struct BitReader {
  private let base: UnsafePointer<UInt8>
  private let count: Int
  /// The next byte to load.
  private var next = 0
  /// Bits not yet consumed, lowest first.
  private(set) var buffer: UInt64 = 0
  /// How many of ``buffer``'s bits are loaded; negative once bits past the end were taken.
  private var available = 0

  /// The last byte a whole word can be loaded from (negative for streams under 8 bytes).
  private let lastWordStart: Int

  init(base: UnsafePointer<UInt8>, count: Int) {
    self.base = base
    self.count = count
    lastWordStart = count - 8
  }

  /// Bits consumed from the start.
  var offset: Int { next * 8 - available }
  /// True while a whole word can be loaded from the next byte to load: ``refillWord()`` may
  /// be used. Then no bit past the end was taken either: every caller takes at most 56 bits
  /// after a refill, which leaves at least 56 buffered or loads the last byte, so `available`
  /// goes negative only once `next == count`.
  var canLoadWord: Bool { next <= lastWordStart }
  /// True once more bits were consumed than the stream has.
  var isPastEnd: Bool { available < 0 }

  /// Loads bytes until at least 56 bits are buffered, with one unaligned 8-byte load and no
  /// branch. Only while ``canLoadWord``: the load stays inside the stream, and `available` is
  /// in 0...63 as the shift needs.
  @inline(__always)
  mutating func refillWord() {
    // Safe: `canLoadWord` means `next + 8 <= count`, so the 8 bytes loaded are in the stream.
    // Wrapping arithmetic cannot wrap: `available` is in 0...63 and `next` at most `count`.
    let word = UInt64(littleEndian: UnsafeRawPointer(base + next).loadUnaligned(as: UInt64.self))
    buffer |= word &<< UInt64(truncatingIfNeeded: available)
    // The whole bytes that fit: 7 less the whole bytes already buffered, which leaves 56 to
    // 63 bits, that is `available` with bits 3 to 5 set. Bits of the next byte may lie above
    // them; the next load puts the same bits there.
    next &+= 7 &- available &>> 3
    available |= 56
  }

  /// Loads bytes until at least 56 bits are buffered, or the input ends.
  @inline(__always)
  mutating func refill() {
    guard available >= 0 else { return }
    if next + 8 <= count {
      let word = UInt64(littleEndian: UnsafeRawPointer(base + next).loadUnaligned(as: UInt64.self))
      buffer |= word &<< UInt64(available)
      let taken = (63 - available) >> 3
      next += taken
      available += taken << 3
    } else {
      while available <= 56 && next < count {
        buffer |= UInt64(base[next]) << UInt64(available)
        next += 1
        available += 8
      }
    }
  }

  /// The next `bits` bits (at most 32), not consumed.
  @inline(__always)
  func peek(_ bits: Int) -> UInt64 { buffer & (1 << UInt64(bits) - 1) }

  /// Drops `bits` bits (at most 56 since the last refill).
  @inline(__always)
  mutating func consume(_ bits: Int) {
    buffer &>>= UInt64(truncatingIfNeeded: bits)
    available &-= bits
  }

  /// Reads `bits` bits (at most 32).
  @inline(__always)
  mutating func take(_ bits: Int) -> UInt64 {
    let value = peek(bits)
    consume(bits)
    return value
  }

  /// Skips to the next byte boundary.
  mutating func alignToByte() {
    consume(offset & 7 == 0 ? 0 : 8 - offset & 7)
  }

  /// Skips `bytes` whole bytes from a byte boundary; false when that passes the end.
  mutating func skipBytes(_ bytes: Int) -> Bool {
    guard available >= 0 else { return false }
    let target = offset / 8 + bytes
    guard target <= count else { return false }
    next = target
    buffer = 0
    available = 0
    return true
  }
}

/// A canonical Huffman code (RFC 1951 section 3.2.2) as a lookup table on the next `tableBits`
/// bits of the stream, with a slow path for the rarer, longer codes.
final class HuffmanTable {
  let tableBits: Int
  /// Entry per `tableBits`-bit index: from the `entry` function given to ``build``, or
  /// ``long`` for codes longer than `tableBits`, or ``missing`` where no code starts.
  let entries: UnsafeMutablePointer<UInt32>
  /// The entry of bits that start no code (an incomplete code's gaps).
  let missing: UInt32
  /// The entry of bits that start a code longer than `tableBits`.
  let long: UInt32
  /// Codes per length (16), for the slow path. Buffers rather than stored arrays: those
  /// would pay for exclusivity checks on every access, once per code built.
  private let countPerLength: UnsafeMutablePointer<Int>
  /// Entries of the symbols in canonical order (288), for the slow path.
  private let sortedEntries: UnsafeMutablePointer<UInt32>
  /// Scratch for ``build``: each length's next position in canonical order, and its next
  /// code (16 each).
  private let offsets: UnsafeMutablePointer<Int>
  private let nextCode: UnsafeMutablePointer<Int>

  init(tableBits: Int, missing: UInt32, long: UInt32) {
    self.tableBits = tableBits
    self.missing = missing
    self.long = long
    entries = .allocate(capacity: 1 << tableBits)
    entries.initialize(repeating: missing, count: 1 << tableBits)
    countPerLength = .allocate(capacity: 16)
    countPerLength.initialize(repeating: 0, count: 16)
    sortedEntries = .allocate(capacity: 288)
    sortedEntries.initialize(repeating: 0, count: 288)
    offsets = .allocate(capacity: 16)
    offsets.initialize(repeating: 0, count: 16)
    nextCode = .allocate(capacity: 16)
    nextCode.initialize(repeating: 0, count: 16)
  }

  deinit {
    entries.deallocate()
    countPerLength.deallocate()
    sortedEntries.deallocate()
    offsets.deallocate()
    nextCode.deallocate()
  }

  /// Builds the table for symbols `0..<lengths.count` with these code lengths (0: unused).
  ///
  /// - Parameter entry: the entry of a symbol and its code length.
  /// - Returns: false when the lengths oversubscribe the code (not a prefix code).
  func build(lengths: ArraySlice<UInt8>, entry: (Int, Int) -> UInt32) -> Bool {
    for length in 0..<16 { countPerLength[length] = 0 }
    for length in lengths { countPerLength[Int(length)] += 1 }
    countPerLength[0] = 0
    var left = 1
    for length in 1..<16 {
      left = left << 1 - countPerLength[length]
      if left < 0 { return false }
    }
    let size = 1 << tableBits
    // The first canonical code of each length, and the symbols sorted by (length, symbol).
    offsets.update(repeating: 0, count: 16)
    for length in 1..<15 { offsets[length + 1] = offsets[length] + countPerLength[length] }
    nextCode.update(repeating: 0, count: 16)
    var code = 0
    for length in 1..<16 {
      code = (code + countPerLength[length - 1]) << 1
      nextCode[length] = code
    }
    // A complete code (left 0) covers every index with a code or a long code's prefix.
    if left != 0 { entries.update(repeating: missing, count: size) }
    for (position, length) in lengths.enumerated() where length > 0 {
      let symbol = position
      let bits = Int(length)
      let value = entry(symbol, bits)
      sortedEntries[offsets[bits]] = value
      offsets[bits] += 1
      let canonical = nextCode[bits]
      nextCode[bits] += 1
      let reversed = Self.reverse(canonical, bits: bits)
      if bits <= tableBits {
        // Wrapping: `index` stays below twice `size`.
        let step = 1 &<< bits
        var index = reversed
        while index < size {
          entries[index] = value
          index &+= step
        }
      } else {
        entries[reversed & (size - 1)] = long
      }
    }
    return true
  }

  /// Decodes a code longer than `tableBits` from the next bits in `buffer`, bit by bit in
  /// canonical order; the entry, or ``missing`` when no code matches.
  func decodeLong(_ buffer: UInt64) -> UInt32 {
    var code = 0
    var first = 0
    var index = 0
    for length in 1..<16 {
      code |= Int((buffer >> UInt64(length - 1)) & 1)
      let count = countPerLength[length]
      if code - first < count {
        return sortedEntries[index + code - first]
      }
      index += count
      first = (first + count) << 1
      code <<= 1
    }
    return missing
  }

  /// `code`'s lowest `bits` bits in reverse order (Huffman codes are packed most significant
  /// bit first, RFC 1951 section 3.1.1).
  private static func reverse(_ code: Int, bits: Int) -> Int {
    var result = 0
    var value = code
    for _ in 0..<bits {
      result = result << 1 | value & 1
      value >>= 1
    }
    return result
  }
}
