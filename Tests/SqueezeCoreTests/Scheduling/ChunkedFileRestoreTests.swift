import Glibc
import SqueezeGzip
import TestSupport
import Testing

@testable import SqueezeCore

/// The second decode, by zlib, of a file restored to standard output: what was already
/// sent is skipped, never sent twice.
@Suite struct ChunkedFileRestoreTests {
  static let data = TestData.text(300_000, seed: 3)

  /// A gzip file of ``data``, open for reading, and its folder (kept alive by the caller).
  static func openGzip(_ name: String) throws -> (TemporaryFolder, Int32) {
    let folder = TemporaryFolder(name)
    let path = try folder.write(
      "x.gz", try Shell.run("/bin/gzip", ["-c"], input: data).stdout)
    let descriptor = open(path, O_RDONLY)
    try #require(descriptor >= 0)
    return (folder, descriptor)
  }

  @Test(arguments: [0, 1, 131_072, 299_999, 300_000])
  func zlibsRedoSendsOnlyWhatWasNotSent(given: Int) throws {
    let (folder, descriptor) = try Self.openGzip("redo-skip-\(given)")
    defer { close(descriptor) }
    _ = folder
    var sent: [UInt8] = []
    let decoder = try ChunkedFileRestore.decodeAgainWithZlib(
      descriptor, skipping: Int64(given), passesTrailingDataThrough: false,
      fault: .truncated(offset: 9), stop: nil
    ) { chunk in sent += chunk }
    #expect(sent == Array(Self.data[given...]))
    #expect(decoder.totalOutput == Int64(Self.data.count))
  }

  /// More sent than zlib restores: the two decodes disagree, and the first fault stands.
  @Test func zlibRestoringLessThanWasSentKeepsTheFirstFault() throws {
    let (folder, descriptor) = try Self.openGzip("redo-short")
    defer { close(descriptor) }
    _ = folder
    var sent = 0
    #expect(throws: FileFailure.badGzip(.truncated(offset: 9))) {
      try ChunkedFileRestore.decodeAgainWithZlib(
        descriptor, skipping: Int64(Self.data.count + 1), passesTrailingDataThrough: false,
        fault: .truncated(offset: 9), stop: nil
      ) { chunk in sent += chunk.count }
    }
    #expect(sent == 0)
  }
}
