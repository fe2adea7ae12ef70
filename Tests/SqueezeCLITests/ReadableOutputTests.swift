import Foundation
import Glibc
import TestSupport
import Testing

/// What a person reads: summaries that make sense for empty and idle runs, files that grew,
/// standard output left empty when standard input cannot be read, and one message for a
/// read-only file system (a real read-only mount).
@Suite struct ReadableOutputTests {
  @Test func anEmptyFileAndAnIdleRunGetSummariesWithoutZeros() throws {
    let folder = TemporaryFolder("empty-summary")
    try folder.write("in/empty", [])
    let first = try SqueezeBinary.run(["-v", folder.url("in")])
    #expect(first.status == 0)
    #expect(first.stderrText.contains("in/empty: 0 B → "), "\(first.stderrText)")
    #expect(first.stderrText.contains(" (empty)\n"))
    #expect(first.stderrText.contains("squeeze: 1 empty file compressed, "))
    let summary = try #require(first.stderrText.split(separator: "\n").last)
    #expect(!summary.contains("0 B →") && !summary.contains("B/s") && !summary.contains("saved"))
    let again = try SqueezeBinary.run(["-v", folder.url("in")])
    let idle = try #require(again.stderrText.split(separator: "\n").last)
    #expect(idle.hasPrefix("squeeze: nothing compressed, "), "\(idle)")
    #expect(idle.contains(", 1 up to date"))
    #expect(!idle.contains("B/s") && !idle.contains("0 files"))
  }

  @Test func filesThatGrewAreCountedAndNamedUnderVerbose() throws {
    let folder = TemporaryFolder("grew")
    try folder.write("in/tiny.txt", Array("hi".utf8))
    try folder.write("in/noise.bin", TestData.random(50_000))
    try folder.write("in/text.txt", TestData.text(50_000))
    let result = try SqueezeBinary.run(["-v", folder.url("in")])
    #expect(result.status == 0)
    let lines = result.stderrText.split(separator: "\n").map(String.init)
    #expect(
      lines.contains { $0.contains("in/tiny.txt: 2 B → ") && $0.contains(" B, grew by ") },
      "\(lines)")
    #expect(lines.contains { $0.contains("in/noise.bin: 50.0 kB → ") && $0.contains(", grew by ") })
    #expect(lines.contains { $0.contains("in/text.txt: 50.0 kB → ") && $0.hasSuffix(" % saved") })
    #expect(lines.last?.contains(", 2 grew") == true, "\(lines.last ?? "")")
    // Quiet runs say nothing; --json counts them.
    try FileManager.default.removeItem(atPath: folder.url("in/tiny.txt.gz"))
    let json = try SqueezeBinary.run(["--json", folder.url("in")])
    let object = try #require(
      JSONSerialization.jsonObject(with: Data(json.stdout)) as? [String: Any])
    let files = try #require(object["files"] as? [String: Any])
    #expect(files["grown"] as? Int == 1)
  }

  @Test func standardInputThatCannotBeReadLeavesStandardOutputEmpty() throws {
    let folder = TemporaryFolder("stdin-fails")
    try folder.makeFolder("dir")
    // A folder on standard input: the first read fails with EISDIR.
    let result = try Shell.run(
      "/bin/sh", ["-c", "exec \"$0\" -c < \"$1\"", SqueezeBinary.path, folder.url("dir")])
    #expect(result.status == 1)
    #expect(result.stdout.isEmpty, "\(result.stdout.count) bytes on stdout")
    #expect(result.stderrText.contains("(standard input): cannot read: Is a directory (errno 21)"))
    // A file whose first read fails (EIO), named with -c: no member is started either.
    let mem = try SqueezeBinary.run(["-c", "/proc/self/mem"])
    #expect(mem.status == 1)
    #expect(mem.stdout.isEmpty)
  }

  @Test(
    .tags(.system), .systemTier,
    .enabled(
      if: TestMachine.canMountPrivately, "needs root and unshare for a private read-only mount"))
  func aReadOnlyFileSystemIsReportedOnceAndTheRunGoesOn() throws {
    let folder = TemporaryFolder("read-only")
    for index in 0..<50 { try folder.write("ro/sub\(index % 3)/f\(index).txt", TestData.text(500)) }
    try folder.write("rw/x.txt", TestData.text(5000))
    let readOnly = folder.url("ro")
    // A read-only bind mount of the folder, in a mount namespace of the test's own.
    let script = """
      mount --bind \(Shell.quote(readOnly)) \(Shell.quote(readOnly)) && \
      mount -o remount,bind,ro \(Shell.quote(readOnly)) && \
      exec \(Shell.quote(SqueezeBinary.path)) --json --progress plain \(Shell.quote(readOnly)) \(Shell.quote(folder.url("rw")))
      """
    let result = try Shell.run("/usr/bin/unshare", ["-m", "/bin/sh", "-c", script])
    #expect(result.status == 1)
    let messages = result.stderrText.split(separator: "\n").filter { $0.contains("Read-only") }
    #expect(messages.count == 1, "\(result.stderrText)")
    #expect(
      messages.first?.hasPrefix("squeeze: \(readOnly): read-only file system: ") == true,
      "\(messages)")
    #expect(result.stderrText.contains(", 50 failed"))
    let object = try #require(
      JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any])
    let files = try #require(object["files"] as? [String: Any])
    #expect((files["failed"] as? [String: Any])?["count"] as? Int == 50)
    #expect(files["compressed"] as? Int == 1)
    #expect(try SystemGzip.decompress(folder.url("rw/x.txt.gz")) == TestData.text(5000))
    #expect(TemporaryFolder.files(in: readOnly).allSatisfy { !$0.contains(".gz") })
  }
}
