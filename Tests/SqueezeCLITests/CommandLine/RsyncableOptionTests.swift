import SqueezeEngines
import Testing

@testable import SqueezeCLI
@testable import SqueezeCore

/// `--rsyncable` on the command line: what it sets, with which engine and block size, and
/// where it is refused.
@Suite struct RsyncableOptionTests {
  private func parse(_ arguments: [String]) -> Result<ParsedCommand, UsageError> {
    CommandLineParser.parse(arguments)
  }

  private func options(_ arguments: [String]) throws -> Options {
    guard case .success(.run(let options)) = parse(arguments) else {
      throw Unparsed(arguments: arguments)
    }
    return options
  }

  private struct Unparsed: Error {
    var arguments: [String]
  }

  @Test func itIsOffByDefaultAndTheChunksAreFixed() throws {
    let parsed = try options(["x"])
    #expect(!parsed.rsyncable)
    #expect(parsed.chunking == .fixed(size: Engine.fast.defaultChunkSize))
  }

  @Test(arguments: [
    (["--rsyncable", "x"], RsyncableChunking(targetChunkSize: 1 << 20)),
    (["--rsyncable", "--engine", "zlib", "x"], RsyncableChunking(targetChunkSize: 128 << 10)),
    (["--block-size", "4M", "x", "--rsyncable"], RsyncableChunking(targetChunkSize: 4 << 20)),
    (["-c", "--rsyncable"], RsyncableChunking(targetChunkSize: 1 << 20)),
  ])
  func itMakesTheEnginesChunksContentDefined(arguments: [String], rule: RsyncableChunking) throws {
    let parsed = try options(arguments)
    #expect(parsed.rsyncable)
    #expect(parsed.chunking == .contentDefined(rule))
  }

  @Test(arguments: [
    (["--rsyncable", "-d", "x.gz"], "--decompress"),
    (["--rsyncable", "-t", "x.gz"], "--test"),
    (["--rsyncable", "-l", "x.gz"], "--list"),
    (["-t", "-l", "--rsyncable", "x.gz"], "--list"),
  ])
  func modesThatDoNotCompressRefuseIt(arguments: [String], mode: String) {
    #expect(parse(arguments) == .failure(.conflict("--rsyncable", mode)))
  }
}
