import Foundation
import Glibc
import SqueezeSystem
import Testing

@testable import SqueezeCore
@testable import TestSupport

/// `--dry-run` writes its plan in pieces, never as one string, and the pieces join into
/// exactly a line per step.
struct DryRunTextTests {
  @Test func aPlanLongerThanOnePieceIsWrittenWholeAndInOrder() throws {
    let steps = (0..<3_000).map { index in
      DryRun.Step(
        action: index % 3 == 0 ? .upToDate : .compress,
        path: RawPath("tree/folder-\(index / 100)/a-file-with-a-long-name-\(index).txt"),
        output: RawPath("tree/folder-\(index / 100)/a-file-with-a-long-name-\(index).txt.gz"))
    }
    let expected = steps.map { $0.line + "\n" }.joined()
    #expect(expected.utf8.count > 3 * (64 << 10))
    let folder = TemporaryFolder("dry-run-text")
    let path = folder.url("plan.txt")
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    try #require(descriptor >= 0)
    let written = DryRun.write(steps, to: TextOutput(descriptor: descriptor))
    close(descriptor)
    #expect(written == .written)
    #expect(String(decoding: try folder.read("plan.txt"), as: UTF8.self) == expected)
  }

  @Test func aWriteThatFailsStopsThePlanAndSaysSo() throws {
    let steps = [DryRun.Step(action: .upToDate, path: "a")]
    // A descriptor open for reading only: write(2) fails with EBADF.
    let descriptor = open("/dev/null", O_RDONLY)
    try #require(descriptor >= 0)
    defer { close(descriptor) }
    #expect(DryRun.write(steps, to: TextOutput(descriptor: descriptor)) == .failed)
  }
}
