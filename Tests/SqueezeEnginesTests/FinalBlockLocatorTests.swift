import CLibdeflate
import CZlib
import Foundation
import TestSupport
import Testing

@testable import SqueezeEngines

/// The final block of a raw deflate stream as zlib's `inflate` finds it with `Z_BLOCK`, which
/// stops after every block's end-of-block code (or stored bytes) and reports the bits left
/// unused in the last byte it took (zlib manual, `inflate`, `data_type`): the reference the
/// locator is compared with.
func zlibFinalBlock(_ stream: [UInt8]) throws -> FinalBlockLocator.Location {
  var z = z_stream()
  guard squeeze_inflateInit2(&z, -15) == Z_OK else {
    throw EngineError(library: .zlib, code: -1, detail: "init")
  }
  defer { inflateEnd(&z) }
  var input = stream
  var output = [UInt8](repeating: 0, count: 1 << 16)
  return try input.withUnsafeMutableBufferPointer { inputPointer in
    try output.withUnsafeMutableBufferPointer { outputPointer in
      z.next_in = inputPointer.baseAddress
      z.avail_in = UInt32(inputPointer.count)
      var blockStart = 0
      while true {
        // The output is thrown away; zlib keeps its own window.
        z.next_out = outputPointer.baseAddress
        z.avail_out = UInt32(outputPointer.count)
        let code = inflate(&z, Z_BLOCK)
        guard code == Z_OK else {
          throw EngineError(library: .zlib, code: code, detail: "inflate(Z_BLOCK) gave \(code)")
        }
        guard z.data_type & 128 != 0 else { continue }
        let bit = Int(z.total_in) * 8 - Int(z.data_type & 63)
        if z.data_type & 64 != 0 {
          return FinalBlockLocator.Location(headerBit: blockStart, endBit: bit)
        }
        blockStart = bit
      }
    }
  }
}

/// Writes a deflate stream bit by bit (RFC 1951 section 3.1.1): values least significant bit
/// first, Huffman codes most significant bit first.
struct DeflateWriter {
  private(set) var bytes: [UInt8] = []
  private var bitCount = 0

  mutating func write(_ value: Int, bits: Int) {
    for index in 0..<bits {
      if bitCount % 8 == 0 { bytes.append(0) }
      bytes[bytes.count - 1] |= UInt8((value >> index) & 1) << UInt8(bitCount % 8)
      bitCount += 1
    }
  }

  mutating func writeCode(_ code: Int, length: Int) {
    for index in stride(from: length - 1, through: 0, by: -1) { write(code >> index & 1, bits: 1) }
  }

  /// Pads with zero bits to the next byte boundary.
  mutating func align() { bitCount = bytes.count * 8 }

  /// A stored block holding `data`.
  mutating func storedBlock(_ data: [UInt8], final: Bool) {
    write(final ? 1 : 0, bits: 1)
    write(0, bits: 2)
    align()
    write(data.count, bits: 16)
    write(data.count ^ 0xffff, bits: 16)
    bytes += data
    bitCount = bytes.count * 8
  }

  /// A Huffman-coded block: fixed codes when `literalLengths` is nil, else a dynamic header
  /// with these code lengths (which must make complete codes). Ends with end-of-block.
  mutating func huffmanBlock(
    _ symbols: [DeflateSymbol], literalLengths: [Int]?, distanceLengths: [Int], final: Bool
  ) {
    write(final ? 1 : 0, bits: 1)
    let literals: [Int]
    let distances: [Int]
    if let literalLengths {
      write(2, bits: 2)
      literals = literalLengths
      distances = distanceLengths
      write(literals.count - 257, bits: 5)
      write(distances.count - 1, bits: 5)
      write(19 - 4, bits: 4)
      // A complete code length code: 13 lengths of 4 bits and 6 of 5.
      let codeLengthLengths = (0..<19).map { $0 < 13 ? 4 : 5 }
      for symbol in [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15] {
        write(codeLengthLengths[symbol], bits: 3)
      }
      let codeLengthCodes = Self.canonical(codeLengthLengths)
      for length in literals + distances {
        writeCode(codeLengthCodes[length], length: codeLengthLengths[length])
      }
    } else {
      write(1, bits: 2)
      literals = (0..<288).map { $0 < 144 ? 8 : $0 < 256 ? 9 : $0 < 280 ? 7 : 8 }
      distances = [Int](repeating: 5, count: 30)
    }
    let literalCodes = Self.canonical(literals)
    let distanceCodes = Self.canonical(distances)
    for symbol in symbols + [.literal(256)] {
      switch symbol {
      case .literal(let value):
        writeCode(literalCodes[value], length: literals[value])
      case .match(let length, let lengthExtra, let distance, let distanceExtra):
        writeCode(literalCodes[length], length: literals[length])
        let lengthBits = length >= 265 && length < 285 ? (length - 261) / 4 : 0
        write(lengthExtra, bits: lengthBits)
        writeCode(distanceCodes[distance], length: distances[distance])
        write(distanceExtra, bits: distance < 4 ? 0 : distance / 2 - 1)
      }
    }
  }

  /// The canonical codes of these lengths (RFC 1951 section 3.2.2).
  static func canonical(_ lengths: [Int]) -> [Int] {
    var countPerLength = [Int](repeating: 0, count: 16)
    for length in lengths where length > 0 { countPerLength[length] += 1 }
    var nextCode = [Int](repeating: 0, count: 16)
    var code = 0
    for length in 1..<16 {
      code = (code + countPerLength[length - 1]) << 1
      nextCode[length] = code
    }
    return lengths.map { length in
      guard length > 0 else { return 0 }
      defer { nextCode[length] += 1 }
      return nextCode[length]
    }
  }
}

/// A literal/length symbol (256 is end-of-block, written by the block itself) or a match.
enum DeflateSymbol {
  case literal(Int)
  case match(length: Int, lengthExtra: Int, distance: Int, distanceExtra: Int)
}

@Suite struct FinalBlockLocatorTests {
  /// Code lengths of 6 bits for literals 0 to 61, end-of-block and length symbol 257 (a
  /// complete code of 64 codes): every symbol is one lookup, and no code is long.
  static let sixBitCode: [Int] = (0..<258).map { $0 < 62 || $0 >= 256 ? 6 : 0 }

  /// Code lengths 1, 2, ... 14, 15, 15 (complete): literal 0 has a 1-bit code, literal 9 a
  /// code of exactly the literal/length table's 10 bits, and literals 10 to 13, end-of-block
  /// and length 265 (1 extra bit) codes longer than the table's bits.
  static let longCode: [Int] = (0..<266).map { symbol in
    switch symbol {
    case 0..<14: return symbol + 1
    case 256: return 15
    case 265: return 15
    default: return 0
    }
  }

  /// `count` symbols drawn from `literals` and one match kind, seeded; starts with two literals
  /// so that distances 1 and 2 reach back into data.
  static func symbols(
    _ count: Int, literals: [Int], match: DeflateSymbol, seed: UInt64
  ) -> [DeflateSymbol] {
    let choices = TestData.random(count, seed: seed)
    var result: [DeflateSymbol] = [.literal(literals[0]), .literal(literals[0])]
    for choice in choices {
      result.append(
        Int(choice) % 5 == 0 ? match : .literal(literals[Int(choice) % literals.count]))
    }
    return result
  }

  /// Partners for the walk of two streams side by side, with where zlib finds their final
  /// blocks: a stream of several blocks (libdeflate's level 1 on 300 KB of text), one of a
  /// single block (on 20 KB) and the shortest, one fixed final block with no symbols.
  static let partners: [(stream: [UInt8], location: FinalBlockLocator.Location)] = {
    var result: [(stream: [UInt8], location: FinalBlockLocator.Location)] = []
    for size in [300_000, 20_000] {
      guard let stream = try? libdeflateCompress(TestData.text(size, seed: 99), level: 1),
        let location = try? zlibFinalBlock(stream)
      else { return [] }
      result.append((stream, location))
    }
    result.append(([0x03, 0x00], FinalBlockLocator.Location(headerBit: 0, endBit: 10)))
    return result
  }()

  /// Expects the locator to find what zlib finds in `stream`, walking it alone and beside
  /// each of ``partners``, first and second.
  func expectLocatorMatchesZlib(
    _ stream: [UInt8], _ comment: Comment, sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    let reference = try zlibFinalBlock(stream)
    let locator = FinalBlockLocator()
    let location = try stream.withUnsafeBytes { try locator.locate($0) }
    #expect(location == reference, comment, sourceLocation: sourceLocation)
    #expect(Self.partners.count == 3)
    for (partner, partnerLocation) in Self.partners {
      let (first, second) = try stream.withUnsafeBytes { one in
        try partner.withUnsafeBytes { two in try locator.locate(one, two) }
      }
      #expect(
        first == reference && second == partnerLocation, "\(comment), walked first",
        sourceLocation: sourceLocation)
      let (third, fourth) = try partner.withUnsafeBytes { one in
        try stream.withUnsafeBytes { two in try locator.locate(one, two) }
      }
      #expect(
        third == partnerLocation && fourth == reference, "\(comment), walked second",
        sourceLocation: sourceLocation)
    }
  }

  @Test(
    "streams of every length around the end of the word refills, ending after literals or a match"
  )
  func streamsAroundTheLastWord() throws {
    let match = DeflateSymbol.match(length: 257, lengthExtra: 0, distance: 1, distanceExtra: 0)
    let tails = [[DeflateSymbol.literal(3), .literal(61)], [.literal(5)], [match], []]
    for count in Array(0..<24) + Array(2000..<2012) {
      for tail in tails {
        let body = Self.symbols(
          count, literals: Array(0..<62), match: match, seed: UInt64(count) + 1)
        var writer = DeflateWriter()
        writer.huffmanBlock(
          body + tail, literalLengths: Self.sixBitCode, distanceLengths: [1, 1], final: true)
        try expectLocatorMatchesZlib(writer.bytes, "\(count) symbols and \(tail.count) more")
      }
    }
  }

  @Test("runs of 1-bit literals, codes of exactly the table's bits, and longer codes")
  func codesLongerThanTheTable() throws {
    let match = DeflateSymbol.match(length: 265, lengthExtra: 1, distance: 0, distanceExtra: 0)
    for (count, literals) in [
      (40, [0]), (3000, [0]), (3000, Array(0..<14)), (3000, [9, 10, 11, 12, 13]),
    ] {
      var writer = DeflateWriter()
      writer.huffmanBlock(
        Self.symbols(count, literals: literals, match: match, seed: UInt64(count)),
        literalLengths: Self.longCode, distanceLengths: [1, 1], final: false)
      writer.huffmanBlock(
        Self.symbols(count, literals: literals.reversed(), match: match, seed: 7),
        literalLengths: Self.longCode, distanceLengths: [1, 1], final: true)
      try expectLocatorMatchesZlib(writer.bytes, "\(count) symbols of \(literals)")
    }
  }

  @Test("stored, fixed and dynamic blocks in one stream, and every cut of it is rejected")
  func mixedBlocks() throws {
    let match = DeflateSymbol.match(length: 270, lengthExtra: 3, distance: 9, distanceExtra: 5)
    let literals = Array(0..<62)
    var writer = DeflateWriter()
    writer.storedBlock(TestData.random(100), final: false)
    writer.huffmanBlock(
      Self.symbols(500, literals: literals, match: .literal(9), seed: 3), literalLengths: nil,
      distanceLengths: [], final: false)
    writer.storedBlock([], final: false)
    writer.huffmanBlock(
      [.literal(1)] + Self.symbols(3000, literals: literals, match: match, seed: 4),
      literalLengths: nil, distanceLengths: [], final: false)
    writer.huffmanBlock(
      Self.symbols(1000, literals: literals, match: .literal(2), seed: 5),
      literalLengths: Self.sixBitCode, distanceLengths: [1, 1], final: true)
    let stream = writer.bytes
    try expectLocatorMatchesZlib(stream, "the whole stream")
    let locator = FinalBlockLocator()
    for cut in 0..<stream.count {
      #expect(throws: EngineError.self, "cut at \(cut)") {
        try stream[..<cut].withUnsafeBytes { _ = try locator.locate($0) }
      }
      // Beside a whole stream of one block, in either place.
      #expect(throws: EngineError.self, "cut at \(cut), walked first") {
        try stream[..<cut].withUnsafeBytes { one in
          try Self.partners[1].stream.withUnsafeBytes { two in _ = try locator.locate(one, two) }
        }
      }
      #expect(throws: EngineError.self, "cut at \(cut), walked second") {
        try Self.partners[1].stream.withUnsafeBytes { one in
          try stream[..<cut].withUnsafeBytes { two in _ = try locator.locate(one, two) }
        }
      }
    }
    // A stored final block alone.
    var stored = DeflateWriter()
    stored.storedBlock(TestData.random(20), final: true)
    try expectLocatorMatchesZlib(stored.bytes, "one stored block")
  }

  /// Seeded inputs of the shapes that give libdeflate's codes their range: text, random bytes
  /// (stored), a few frequent bytes (1- to 4-bit codes), geometric frequencies (codes up to 15
  /// bits), runs, and pieces of each, of random sizes.
  static func input(_ index: Int, seed: UInt64) -> [UInt8] {
    let noise = TestData.random(400_000, seed: seed)
    let size = Int(noise[0]) << 10 | Int(noise[1]) << 2 | Int(noise[2]) & 3
    switch index % 6 {
    case 0: return TestData.text(size, seed: seed)
    case 1: return Array(noise[..<min(size, noise.count)])
    case 2: return noise[..<min(size, noise.count)].map { $0 & 3 == 0 ? $0 >> 6 : 0x41 }
    case 3:
      return (0..<min(size, noise.count / 4)).map { at in
        let word = noise[at * 4..<at * 4 + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return UInt8(word.trailingZeroBitCount * 7)
      }
    case 4: return [UInt8](repeating: noise[3], count: size)
    default:
      var result: [UInt8] = []
      for piece in 0..<5 { result += input(piece, seed: seed &+ UInt64(piece)).prefix(size / 5) }
      return result
    }
  }

  @Test("the locator agrees with zlib on libdeflate's output at every level", arguments: 0...12)
  func agreesWithZlibOnLibdeflate(level: Int) throws {
    for index in 0..<12 {
      let data = Self.input(index, seed: UInt64(level * 100 + index))
      try expectLocatorMatchesZlib(
        try libdeflateCompress(data, level: level), "input \(index) of \(data.count) bytes")
    }
  }

  @Test(
    "the locator agrees with zlib on zlib's output: stored, fixed, Huffman-only, run-length",
    arguments: [Z_DEFAULT_STRATEGY, Z_FIXED, Z_HUFFMAN_ONLY, Z_RLE])
  func agreesWithZlibOnZlib(strategy: Int32) throws {
    for index in 0..<6 {
      let data = Self.input(index, seed: UInt64(strategy) * 7 + UInt64(index))
      for level: Int32 in [0, 1, 9] {
        var z = z_stream()
        try #require(squeeze_deflateInit2(&z, level, -15, 8, strategy) == Z_OK)
        defer { deflateEnd(&z) }
        var input = data
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&z, UInt(data.count))) + 64)
        let produced = input.withUnsafeMutableBufferPointer { inputPointer in
          output.withUnsafeMutableBufferPointer { outputPointer in
            z.next_in = inputPointer.baseAddress
            z.avail_in = UInt32(inputPointer.count)
            z.next_out = outputPointer.baseAddress
            z.avail_out = UInt32(outputPointer.count)
            // A block ends half way, so the final block is not the first.
            z.avail_in = UInt32(inputPointer.count / 2)
            _ = deflate(&z, Z_BLOCK)
            z.avail_in += UInt32(inputPointer.count - inputPointer.count / 2)
            let code = deflate(&z, Z_FINISH)
            return code == Z_STREAM_END ? outputPointer.count - Int(z.avail_out) : 0
          }
        }
        try #require(produced > 0)
        try expectLocatorMatchesZlib(
          Array(output[..<produced]), "input \(index), level \(level)")
      }
    }
  }
}
