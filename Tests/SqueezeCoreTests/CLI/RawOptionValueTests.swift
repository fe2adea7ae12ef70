import Testing

@testable import SqueezeCore

/// Option values are bytes, as positional paths are: a path-like value that is not UTF-8
/// (`-o`, `-S`, `--task-log`, `timeline -o`) keeps every byte, in every spelling.
@Suite struct RawOptionValueTests {
  /// `out` followed by bytes that are not UTF-8 (a lone continuation byte, an overlong
  /// lead, 0xFF).
  static let notUTF8: [UInt8] = Array("out".utf8) + [0x80, 0xC0, 0xFF]

  static func parse(_ arguments: [[UInt8]]) -> Result<ParsedCommand, UsageError> {
    CommandLineParser.parse(arguments.map { RawPath(bytes: $0) })
  }

  static func options(_ arguments: [[UInt8]]) throws -> Options {
    guard case .success(.run(let options)) = parse(arguments) else {
      throw Failed(result: "\(parse(arguments))")
    }
    return options
  }

  private struct Failed: Error {
    var result: String
  }

  /// Every way to give `-o` its value, with the value that is not UTF-8.
  static let outputSpellings: [(spelling: String, arguments: [[UInt8]])] = {
    let path = [UInt8]("x".utf8)
    return [
      ("separate -o", [Array("-o".utf8), notUTF8, path]),
      ("separate --output", [Array("--output".utf8), notUTF8, path]),
      ("--output=", [Array("--output=".utf8) + notUTF8, path]),
      ("attached -o", [Array("-o".utf8) + notUTF8, path]),
      ("after flags -ko", [Array("-ko".utf8) + notUTF8, path]),
    ]
  }()

  @Test(arguments: outputSpellings)
  func theOutputFolderKeepsItsBytes(spelling: String, arguments: [[UInt8]]) throws {
    #expect(try Self.options(arguments).output?.bytes == Self.notUTF8, "\(spelling)")
  }

  @Test func theSuffixAndTheTaskLogKeepTheirBytes() throws {
    let suffix: [UInt8] = [0x2E, 0x7A, 0xFF]
    #expect(try Self.options([Array("-S".utf8), suffix, Array("x".utf8)]).suffix.bytes == suffix)
    #expect(
      try Self.options([Array("--suffix=".utf8) + suffix, Array("x".utf8)]).suffix.bytes == suffix)
    let log = Self.notUTF8 + Array(".jsonl".utf8)
    #expect(
      try Self.options([Array("--task-log".utf8), log, Array("x".utf8)]).taskLog?.bytes == log)
    #expect(
      try Self.options([Array("--task-log=".utf8) + log, Array("x".utf8)]).taskLog?.bytes == log)
  }

  @Test func theTimelineOutputKeepsItsBytes() {
    let output = Self.notUTF8 + Array(".svg".utf8)
    for arguments in [
      [Array("timeline".utf8), Array("a.jsonl".utf8), Array("-o".utf8), output],
      [Array("timeline".utf8), Array("a.jsonl".utf8), Array("--output=".utf8) + output],
    ] {
      #expect(
        Self.parse(arguments)
          == .success(.timeline(TimelineOptions(log: "a.jsonl", output: RawPath(bytes: output)))))
    }
  }

  @Test func valuesAndOptionsThatAreNotUTF8AreShownWithEscapes() {
    #expect(
      Self.parse([Array("-j".utf8), [0x34, 0xFF], Array("x".utf8)])
        == .failure(
          .invalidValue(
            "4\\xff", option: "--jobs <n>", reason: "expected a whole number from 1 to 4096")))
    #expect(Self.parse([[0x2D, 0xFF], Array("x".utf8)]) == .failure(.unknownOption("-\\xff")))
    #expect(Self.parse([[0x2D, 0xC3, 0xA9], Array("x".utf8)]) == .failure(.unknownOption("-é")))
    #expect(
      Self.parse([[0x2D, 0x2D, 0x6A, 0xFF], Array("x".utf8)])
        == .failure(.unknownOption("--j\\xff")))
    #expect(
      Self.parse([Array("-S".utf8), [0x2F, 0xFF], Array("x".utf8)])
        == .failure(
          .invalidValue(
            "/\\xff", option: "--suffix <suffix>",
            reason: "expected a non-empty suffix without '/'")))
  }
}
