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
  private static let literalMask = UInt64(1 << literalTableBits - 1)
  private static let distanceMask = UInt64(1 << distanceTableBits - 1)

  /// Table entries: the low 8 bits are the bits to consume (code and extra bits), the next
  /// byte the kind. A length entry also has its third byte set (``distanceFollows``), and an
  /// entry the fast step cannot take (end of block, long code, invalid) its top bit
  /// (``special``), so a literal and a length with its distance are skipped by the same
  /// instructions, with no branch between them.
  private static let literal: UInt32 = 0 << 8
  private static let length: UInt32 = 1 << 8 | distanceFollows
  private static let endOfBlock: UInt32 = 2 << 8 | special
  private static let distance: UInt32 = 3 << 8
  private static let long: UInt32 = 4 << 8 | special
  private static let invalid: UInt32 = 5 << 8 | special
  private static let kindMask: UInt32 = 0xff << 8
  /// In a length entry: all ones in the byte that masks the distance's bits into the step.
  private static let distanceFollows: UInt32 = 0xff << 16
  /// Set in entries the fast step hands to the slow one.
  private static let special: UInt32 = 1 << 31

  /// The literal/length and distance codes of the block being walked in each of the two
  /// streams ``locate(_:_:)`` walks side by side (``locate(_:)`` uses the first).
  private let firstCodes = BlockCodes()
  private let secondCodes = BlockCodes()
  /// The fixed codes of RFC 1951 section 3.2.6, built once.
  private let fixedCodes = BlockCodes()
  /// The code length code of a dynamic header (entries: length | symbol << 16; 0 for none).
  private let codeLengthCode = HuffmanTable(tableBits: 7, missing: 0, long: 0)

  init() {
    var fixed = [UInt8](repeating: 8, count: 288)
    for symbol in 144..<256 { fixed[symbol] = 9 }
    for symbol in 256..<280 { fixed[symbol] = 7 }
    _ = fixedCodes.literals.build(lengths: fixed[...], entry: FinalBlockLocator.literalEntry)
    _ = fixedCodes.distances.build(
      lengths: [UInt8](repeating: 5, count: 30)[...], entry: FinalBlockLocator.distanceEntry)
  }

  /// Walks `stream` block by block to its final block.
  ///
  /// - Returns: where the final block's header and end are, in bits.
  /// - Throws: ``EngineError`` (library libdeflate, code 0) when the data is not a complete
  ///   deflate stream.
  func locate(_ stream: UnsafeRawBufferPointer) throws(EngineError) -> Location {
    var walk = try Walk(stream, codes: fixedCodes)
    try openBlock(&walk, codes: firstCodes)
    return try finish(&walk, codes: firstCodes)
  }

  /// Walks two streams to their final blocks, a symbol of one and a symbol of the other in
  /// turn.
  ///
  /// Skipping a symbol is a chain of dependent steps (a table load gives the bits to drop,
  /// which give the next load's index), so one walk leaves the core waiting most of the
  /// time; two independent walks interleaved fill those waits. On the corpus's 132 MB tar cut
  /// into 512 KiB pieces at libdeflate's level 1, a C model of both loops took 0.083 s side
  /// by side against 0.125 s one stream at a time.
  ///
  /// - Returns: where each stream's final block is, as ``locate(_:)`` gives it.
  /// - Throws: ``EngineError`` as ``locate(_:)`` does, for either stream.
  func locate(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer)
    throws(EngineError) -> (Location, Location)
  {
    var one = try Walk(first, codes: fixedCodes)
    var two = try Walk(second, codes: fixedCodes)
    try openBlock(&one, codes: firstCodes)
    try openBlock(&two, codes: secondCodes)
    // The loop works on copies in locals, which stay in registers; a walk is written back
    // only around a slow step.
    var first = one.reader
    var second = two.reader
    var firstTables = (one.literalEntries, one.distanceEntries)
    var secondTables = (two.literalEntries, two.distanceEntries)
    while one.location == nil, two.location == nil, first.canLoadWord, second.canLoadWord {
      first.refillWord()
      second.refillWord()
      if !Self.fastStep(&first, firstTables.0, firstTables.1) {
        one.reader = first
        try slowStep(&one, codes: firstCodes)
        first = one.reader
        firstTables = (one.literalEntries, one.distanceEntries)
      }
      if !Self.fastStep(&second, secondTables.0, secondTables.1) {
        two.reader = second
        try slowStep(&two, codes: secondCodes)
        second = two.reader
        secondTables = (two.literalEntries, two.distanceEntries)
      }
    }
    one.reader = first
    two.reader = second
    return (try finish(&one, codes: firstCodes), try finish(&two, codes: secondCodes))
  }

  /// One stream's walk: where it is and the tables of the block it is in.
  private struct Walk {
    var reader: BitReader
    /// The current Huffman-coded block's table entries (``BlockCodes``).
    var literalEntries: UnsafeMutablePointer<UInt32>
    var distanceEntries: UnsafeMutablePointer<UInt32>
    /// Whether the current block uses the fixed codes.
    var isFixed = false
    /// The current block's header bit and BFINAL.
    var headerBit = 0
    var isFinal = false
    /// Set once the final block has been walked.
    var location: Location?

    /// A walk from the stream's start; `codes` stand in until the first block is opened.
    init(_ stream: UnsafeRawBufferPointer, codes: BlockCodes) throws(EngineError) {
      guard let base = stream.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
        throw FinalBlockLocator.failure("empty deflate stream")
      }
      reader = BitReader(base: base, count: stream.count)
      literalEntries = codes.literals.entries
      distanceEntries = codes.distances.entries
    }
  }

  /// Reads block headers until a Huffman-coded block is open (its tables built), skipping
  /// stored blocks, or until the final block was a stored one (the walk's location set).
  private func openBlock(_ walk: inout Walk, codes: BlockCodes) throws(EngineError) {
    while true {
      walk.reader.refill()
      walk.headerBit = walk.reader.offset
      walk.isFinal = walk.reader.take(1) == 1
      let type = walk.reader.take(2)
      switch type {
      case 0:
        walk.reader.alignToByte()
        walk.reader.refill()
        let length = Int(walk.reader.take(16))
        let complement = Int(walk.reader.take(16))
        guard length ^ 0xffff == complement else {
          throw Self.failure("stored block length mismatch")
        }
        guard walk.reader.skipBytes(length) else {
          throw Self.failure("stored block past the end")
        }
        if walk.isFinal {
          walk.location = Location(headerBit: walk.headerBit, endBit: walk.reader.offset)
          return
        }
      case 1:
        walk.isFixed = true
        walk.literalEntries = fixedCodes.literals.entries
        walk.distanceEntries = fixedCodes.distances.entries
        return
      case 2:
        try readDynamicHeader(&walk.reader, into: codes)
        walk.isFixed = false
        walk.literalEntries = codes.literals.entries
        walk.distanceEntries = codes.distances.entries
        return
      default:
        throw Self.failure("invalid block type 3")
      }
    }
  }

  /// Walks on until the final block has been walked.
  private func finish(_ walk: inout Walk, codes: BlockCodes) throws(EngineError) -> Location {
    // The loop works on copies in locals, which stay in registers; the walk is written back
    // only around a slow step.
    var reader = walk.reader
    var literalEntries = walk.literalEntries
    var distanceEntries = walk.distanceEntries
    while walk.location == nil {
      // While 8 bytes remain from the next one to load, each step starts with at least 56
      // bits buffered, all of them the stream's, and takes at most 20 + 28 (a length code
      // with its extra bits, and a distance code with its), so it needs no end check.
      if reader.canLoadWord {
        reader.refillWord()
        if Self.fastStep(&reader, literalEntries, distanceEntries) { continue }
        walk.reader = reader
        try slowStep(&walk, codes: codes)
      } else {
        // The last bytes: refilled a byte at a time, checked for the end after every step.
        reader.refill()
        walk.reader = reader
        try slowStep(&walk, codes: codes)
        guard !walk.reader.isPastEnd else {
          throw Self.failure("deflate stream ends inside a block")
        }
      }
      reader = walk.reader
      literalEntries = walk.literalEntries
      distanceEntries = walk.distanceEntries
    }
    return walk.location!
  }

  /// Skips a literal, or a length and its distance, with no branch between the two: both
  /// tables are looked up, and the distance's bits are masked out of the step unless the
  /// literal/length entry is a length's. The buffer must hold the whole step.
  ///
  /// - Returns: false, with nothing consumed, for an entry the slow step must take (end of
  ///   block, a code longer than the tables, an invalid one).
  @inline(__always)
  private static func fastStep(
    _ reader: inout BitReader, _ literalEntries: UnsafeMutablePointer<UInt32>,
    _ distanceEntries: UnsafeMutablePointer<UInt32>
  ) -> Bool {
    let buffer = reader.buffer
    let entry = literalEntries[Int(truncatingIfNeeded: buffer & literalMask)]
    let rest = buffer &>> UInt64(truncatingIfNeeded: entry & 0xff)
    let distanceEntry = distanceEntries[Int(truncatingIfNeeded: rest & distanceMask)]
    // The distance entry counts only after a length: its special bit is moved under the
    // length's mask byte, which is shifted over the top byte.
    guard (entry | distanceEntry & entry &<< 8) & special == 0 else { return false }
    let bits = entry & 0xff &+ distanceEntry & entry &>> 16 & 0xff
    reader.consume(Int(truncatingIfNeeded: bits))
    return true
  }

  /// Takes one symbol the fast step handed over (or any symbol, from the last bytes): a code
  /// longer than the tables, the end of a block (and the next block's header), or an
  /// invalid code.
  ///
  /// - Throws: ``EngineError`` for a symbol that no valid block holds, or a next block that
  ///   is not valid.
  private func slowStep(_ walk: inout Walk, codes: BlockCodes) throws(EngineError) {
    let tables = walk.isFixed ? fixedCodes : codes
    guard try Self.skipSymbol(&walk.reader, codes: tables) else { return }
    guard !walk.reader.isPastEnd else { throw Self.failure("deflate stream ends inside a block") }
    if walk.isFinal {
      walk.location = Location(headerBit: walk.headerBit, endBit: walk.reader.offset)
      return
    }
    try openBlock(&walk, codes: codes)
  }

  /// Reads a dynamic block's code lengths (RFC 1951 section 3.2.7) and builds its two tables.
  private func readDynamicHeader(_ reader: inout BitReader, into codes: BlockCodes)
    throws(EngineError)
  {
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
    guard codes.literals.build(lengths: lengths[0..<literalCount], entry: Self.literalEntry),
      codes.distances.build(
        lengths: lengths[literalCount..<total], entry: Self.distanceEntry)
    else { throw Self.failure("invalid Huffman code lengths") }
  }

  /// Consumes one symbol from the front of `reader`'s buffer: its code and extra bits and,
  /// for a length, the distance code and extra bits after it. The buffer must hold the whole
  /// step (at most 20 + 28 bits) or the rest of the stream.
  ///
  /// - Returns: true when the symbol was the end-of-block code.
  /// - Throws: ``EngineError`` for a symbol that no valid block holds.
  private static func skipSymbol(_ reader: inout BitReader, codes: BlockCodes)
    throws(EngineError) -> Bool
  {
    var entry = codes.literals.entries[Int(reader.buffer & literalMask)]
    if entry & kindMask == long & kindMask { entry = codes.literals.decodeLong(reader.buffer) }
    reader.consume(Int(entry & 0xff))
    switch entry & kindMask {
    case literal & kindMask:
      return false
    case length & kindMask:
      var distanceEntry = codes.distances.entries[Int(reader.buffer & distanceMask)]
      if distanceEntry & kindMask == long & kindMask {
        distanceEntry = codes.distances.decodeLong(reader.buffer)
      }
      guard distanceEntry & kindMask == distance & kindMask else {
        throw failure("invalid distance symbol")
      }
      reader.consume(Int(distanceEntry & 0xff))
      return false
    case endOfBlock & kindMask:
      return true
    default:
      throw failure("invalid literal/length symbol")
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

  /// The literal/length and distance tables of one block.
  private final class BlockCodes {
    let literals = HuffmanTable(
      tableBits: FinalBlockLocator.literalTableBits, missing: FinalBlockLocator.invalid,
      long: FinalBlockLocator.long)
    let distances = HuffmanTable(
      tableBits: FinalBlockLocator.distanceTableBits, missing: FinalBlockLocator.invalid,
      long: FinalBlockLocator.long)
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
