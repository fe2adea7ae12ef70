import Glibc
import SqueezeSystem
import Testing

@testable import SqueezeCore
@testable import TestSupport

/// Files' messages come from their outcomes, on the reporter's side: the scheduler passes
/// on only the outcomes that can print something.
@Suite struct FileMessagesTests {
  static func list(_ folder: TemporaryFolder) throws -> FileList {
    try folder.write("in/a.txt", text: "a")
    try folder.write("in/b.txt", text: "b")
    return Discovery.run(
      arguments: [RawPath(folder.url("in"))], options: DiscoveryOptions(),
      bases: BaseDirectories(), namer: TemporaryNamer()
    ).files
  }

  @Test(arguments: [
    (verbosity: Verbosity.quiet, prints: [false, true, false, false]),
    (verbosity: .normal, prints: [false, true, true, false]),
    (verbosity: .verbose, prints: [true, true, true, false]),
  ])
  func onlyOutcomesThatPrintAreSent(verbosity: Verbosity, prints: [Bool]) {
    let outcomes: [FileOutcome] = [
      .verified(bytesIn: 1, bytesOut: 2),
      .failed(.outputExists("x.gz")),
      .done(bytesIn: 1, bytesOut: 2, output: MessagePath("x.gz"), removal: .keptChanged, held: nil),
      .failed(.interrupted),
    ]
    #expect(outcomes.map { FileMessages.mayPrint($0, verbosity: verbosity) } == prints)
  }

  @Test func aFailurePrintsItsLineAndVerboseLinesNameTheFile() throws {
    let folder = TemporaryFolder("file-messages")
    let list = try Self.list(folder)
    var messages = FileMessages(list: list, operation: .test, verbosity: .verbose)
    let a = folder.url("in/a.txt")
    #expect(messages.lines(for: .verified(bytesIn: 1, bytesOut: 2), file: 0) == ["\(a): OK"])
    #expect(messages.lines(for: .alreadyCurrent, file: 0) == ["\(a): up to date"])
    #expect(
      messages.lines(for: .failed(.outputExists("a.txt.gz")), file: 0)
        == ["squeeze: \(a): \(FileFailure.outputExists("a.txt.gz"))"])
    #expect(messages.lines(for: .failed(.interrupted), file: 0).isEmpty)
  }

  @Test func failuresOnAReadOnlyFileSystemPrintOneLine() throws {
    let folder = TemporaryFolder("file-messages-ro")
    let list = try Self.list(folder)
    var messages = FileMessages(list: list, operation: .compress, verbosity: .normal)
    let readOnly = SystemError(code: EROFS)
    let first = messages.lines(
      for: .failed(.cannotCreateOutput(RawPath(folder.url("in/a.txt.gz")), readOnly)), file: 0)
    let second = messages.lines(
      for: .failed(.cannotCreateOutput(RawPath(folder.url("in/b.txt.gz")), readOnly)), file: 1)
    #expect(first.count == 1)
    #expect(first.first?.contains("read-only file system") == true)
    #expect(second.isEmpty)
  }
}
