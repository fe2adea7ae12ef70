import Foundation
import Testing

@testable import SqueezeCore

/// Replays every command line the parser's fuzzer saved (`scripts/fuzz arguments` saves them
/// in Tests/Fuzz/regressions/arguments: the arguments separated by NUL bytes) through the
/// checks of ``ArgumentPropertyTests``: a usage error with a message, or options in range
/// from which a run can start.
///
/// - crash-a5d193ac…: `--older-than 999999999999999d x`, the command line that ended squeeze
///   with SIGILL: the cutoff, now less 8.64e19 seconds, did not fit an Int64 (fixed: the
///   option accepts up to 1000000d, and the cutoff holds at the earliest time).
/// - crash-871f44af…: the same trap as the fuzzer found it in the code before the fix, after
///   47,584 inputs: `--older-than 801922337203685477580 7d` among mutated arguments.
@Suite struct ArgumentsRegressionTests {
  static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(
      "Fuzz/regressions/arguments")

  static var inputs: [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
  }

  @Test func thereAreSavedInputs() {
    #expect(!Self.inputs.isEmpty)
  }

  @Test(arguments: inputs)
  func aSavedCommandLineParsesInRangeOrIsAUsageError(name: String) throws {
    let bytes = Array(try Data(contentsOf: Self.folder.appendingPathComponent(name)))
    let arguments = bytes.split(separator: 0, omittingEmptySubsequences: false).map(Array.init)
    let problems = ArgumentPropertyTests.problems(parsing: arguments)
    #expect(problems.isEmpty, "\(name): \(problems)")
  }
}
