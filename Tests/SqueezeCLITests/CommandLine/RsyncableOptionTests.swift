import SqueezeEngines
import Testing

@testable import SqueezeCLI
@testable import SqueezeCore

/// `--rsyncable` on the command line: what it sets, with which engine and block size, and
/// that the modes which do not compress take it and ignore it.
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

  /// Like gzip and pigz, and like `-1` and `--block-size`: the option shapes compressed
  /// output only, so a restore, a test or a listing takes it and does nothing with it.
  @Test(arguments: [
    (["--rsyncable", "-d", "x.gz"], RunMode.decompress),
    (["-d", "x.gz", "--rsyncable"], RunMode.decompress),
    (["--rsyncable", "-t", "x.gz"], RunMode.test),
    (["--rsyncable", "-l", "x.gz"], RunMode.list),
    (["-t", "-l", "--rsyncable", "x.gz"], RunMode.list),
  ])
  func modesThatDoNotCompressAcceptAndIgnoreIt(arguments: [String], mode: RunMode) throws {
    let parsed = try options(arguments)
    #expect(parsed.mode == mode)
    #expect(parsed.paths == ["x.gz"])
  }
}
