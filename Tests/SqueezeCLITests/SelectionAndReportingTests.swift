import Foundation
import Glibc
import TestSupport
import Testing

/// `--include`, `--exclude`, `--older-than`, `--shard`, `--one-file-system`, the small
/// gzip options, `--json`, and an unusable output folder.
@Suite struct SelectionAndReportingTests {
  @Test func includeAndExcludeSelectFilesAndPruneFolders() throws {
    let folder = TemporaryFolder("filters")
    for path in [
      "app.log", "app.txt", "sub/deep.log", "cache/x.log", "keep/cache/y.log", "secret.log",
    ] {
      try folder.write("in/\(path)", Array(path.utf8))
    }
    let result = try SqueezeBinary.run([
      "--include", "*.log", "--exclude", "secret.log", "--exclude", "/cache/", "-v",
      folder.url("in"),
    ])
    #expect(result.status == 0, "\(result.stderrText)")
    let compressed = TemporaryFolder.files(in: folder.url("in")).filter { $0.hasSuffix(".gz") }
    #expect(compressed == ["app.log.gz", "keep/cache/y.log.gz", "sub/deep.log.gz"])
    #expect(result.stderrText.contains("in/cache: skipped: excluded by --include/--exclude"))
    #expect(!result.stderrText.contains("in/cache/x.log"), "an excluded folder is not entered")
  }

  @Test func olderThanTakesOnlyOldFiles() throws {
    let folder = TemporaryFolder("older")
    try folder.write("in/old.log", Array("old".utf8))
    try folder.write("in/new.log", Array("new".utf8))
    var times = [
      timespec(tv_sec: time(nil) - 3 * 86400, tv_nsec: 0),
      timespec(tv_sec: time(nil) - 3 * 86400, tv_nsec: 0),
    ]
    utimensat(AT_FDCWD, folder.url("in/old.log"), &times, 0)
    let result = try SqueezeBinary.run(["--older-than", "1d", "--rm", folder.url("in")])
    #expect(result.status == 0)
    #expect(TemporaryFolder.files(in: folder.url("in")) == ["new.log", "old.log.gz"])
  }

  @Test func threeShardsPartitionAThousandFilesExactly() throws {
    let folder = TemporaryFolder("shards")
    for index in 0..<1000 {
      try folder.write("in/d\(index % 13)/f\(index).txt", Array("\(index)".utf8))
    }
    var seen: [String: Int] = [:]
    for shard in 1...3 {
      let out = folder.url("out\(shard)")
      let result = try SqueezeBinary.run(["--shard", "\(shard)/3", "-o", out, folder.url("in/")])
      #expect(result.status == 0)
      let files = TemporaryFolder.files(in: out)
      #expect(files.count > 250 && files.count < 420, "shard \(shard) has \(files.count)")
      for file in files { seen[file, default: 0] += 1 }
    }
    #expect(seen.count == 1000)
    #expect(seen.values.allSatisfy { $0 == 1 })
    // Stable: the same shard picks the same files again.
    let again = try SqueezeBinary.run([
      "--shard", "2/3", "--dry-run", "-o", folder.url("out2"), folder.url("in/"),
    ])
    #expect(
      again.stderrText.contains("would be compressed")
        && again.stderrText.contains("0 would be compressed"))
  }

  @Test func smallGzipOptions() throws {
    let folder = TemporaryFolder("small-options")
    let text = TestData.text(100_000, seed: 8)
    try folder.write("in/t.txt", text)
    #expect(
      try SqueezeBinary.run(["-k", "--best", "-n", "-S", ".z", folder.url("in")]).status == 0)
    let bytes = try folder.read("in/t.txt.z")
    #expect(bytes[3] & 0x08 == 0, "-n stores no name")
    #expect(Array(bytes[4..<8]) == [0, 0, 0, 0], "-n stores no time")
    #expect(bytes[8] == 2, "--best sets XFL 2")
    #expect(
      try Shell.run("/bin/gzip", ["-dc", "-S", ".z", folder.url("in/t.txt.z")]).stdout == text)
    #expect(
      try SqueezeBinary.run(["--fast", "-o", folder.url("fast"), folder.url("in/t.txt")]).status
        == 0)
    #expect(try folder.read("fast/t.txt.gz")[8] == 4, "--fast sets XFL 4")
    let emptySuffix = try SqueezeBinary.run(["-S", "", folder.url("in")])
    #expect(emptySuffix.status == 64)
  }

  @Test(
    .tags(.system), .systemTier,
    .enabled(if: TestMachine.canMountPrivately, "needs root and unshare for a private tmpfs mount"))
  func oneFileSystemStaysOnTheArgumentsFileSystem() throws {
    let folder = TemporaryFolder("onefs")
    try folder.write("in/top.txt", Array("top".utf8))
    try folder.makeFolder("in/mnt")
    let script = """
      mount -t tmpfs none \(Shell.quote(folder.url("in/mnt"))) && echo inside > \(Shell.quote(folder.url("in/mnt/inner.txt"))) && \
      \(Shell.quote(SqueezeBinary.path)) --one-file-system -v -o \(Shell.quote(folder.url("out"))) \(Shell.quote(folder.url("in/")))
      """
    let result = try Shell.run("/usr/bin/unshare", ["-m", "/bin/sh", "-c", script])
    #expect(result.status == 0, "\(result.stderrText)")
    #expect(result.stderrText.contains("in/mnt: skipped: on another file system"))
    #expect(TemporaryFolder.files(in: folder.url("out")) == ["top.txt.gz"])
  }

  @Test func jsonSummarizesTheRunOnStdout() throws {
    let folder = TemporaryFolder("json")
    try folder.write("in/a.txt", TestData.text(5000, seed: 1))
    try folder.write("in/b.gz", Array("skip me".utf8))
    symlink("a.txt", folder.url("in/link"))
    let result = try SqueezeBinary.run(["--json", folder.url("in"), folder.url("missing")])
    #expect(result.status == 1)
    let object = try #require(
      JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any])
    #expect(object["mode"] as? String == "compress")
    #expect(object["isolation"] as? String == "nonisolated")
    #expect((object["level"] as? NSNumber)?.intValue == 6)
    #expect(object["engine"] as? String == "fast")
    #expect((object["blockSize"] as? NSNumber)?.intValue == 1 << 20, "the fast engine's chunk size")
    #expect((object["bytesIn"] as? NSNumber)?.intValue == 5000)
    for key in [
      "bytesOut", "ratio", "wallSeconds", "cpuSeconds", "jobs", "hangs", "microhangs", "worstLagMs",
      "interrupted", "dryRun",
    ] {
      #expect(object[key] != nil, "missing \(key)")
    }
    #expect(object["diskFull"] is NSNull, "always there, null unless a full disk stopped the run")
    let files = try #require(object["files"] as? [String: Any])
    #expect((files["compressed"] as? NSNumber)?.intValue == 1)
    let skipped = try #require(files["skipped"] as? [String: Any])
    let reasons = try #require(skipped["byReason"] as? [String: Int])
    #expect(reasons == ["alreadyCompressed": 1, "symbolicLink": 1])
    let failed = try #require(files["failed"] as? [String: Any])
    let list = try #require(failed["list"] as? [[String: String]])
    #expect(list.count == 1)
    #expect(list.first?["path"] == folder.url("missing"))
    #expect(list.first?["cause"] == "No such file or directory (errno 2)")
  }

  @Test(
    .tags(.system), .systemTier,
    .enabled(if: TestMachine.isRoot, "needs root to run squeeze as the user nobody"))
  func anUnusableOutputFolderStopsTheRunAtOnce() throws {
    let folder = TemporaryFolder("bad-output")
    let binary = try SqueezeBinary.publicCopy(in: folder)
    for index in 0..<20 { try folder.write("in/f\(index).txt", Array("x".utf8)) }
    chmod(folder.url("in"), 0o755)
    try folder.makeFolder("readonly")
    chmod(folder.url("readonly"), 0o555)
    let result = try SqueezeBinary.runAsNobody(
      binary, ["-o", folder.url("readonly/out"), folder.url("in/")])
    #expect(result.status == 1)
    let lines = result.stderrText.split(separator: "\n")
    #expect(lines.count == 1, "one message, not one per file: \(result.stderrText)")
    #expect(
      result.stderrText.contains(
        "cannot create output folder '\(folder.url("readonly/out"))': Permission denied"))
    // --json still reports the settings the run had.
    let json = try SqueezeBinary.runAsNobody(
      binary, ["--json", "-j", "3", "-o", folder.url("readonly/out"), folder.url("in/")])
    #expect(json.status == 1)
    let object = try JSONSerialization.jsonObject(with: Data(json.stdout)) as? [String: Any]
    #expect(object?["jobs"] as? Int == 3, "\(json.stdoutText)")
  }

  @Test func aSkippedArgumentIsToldAboutOnceUnderVerbose() throws {
    let folder = TemporaryFolder("verbose-skip")
    try folder.write("in/a.txt", text: "a")
    let result = try SqueezeBinary.run([
      "-v", "-o", folder.url("out"), "/dev/null", folder.url("in/"),
    ])
    #expect(result.status == 0)
    let mentions = result.stderrText.split(separator: "\n").filter { $0.contains("/dev/null") }
    #expect(mentions.count == 1, "\(result.stderrText)")
  }

  @Test func progressStylesWhenStderrIsNotATerminal() throws {
    let folder = TemporaryFolder("progress")
    for index in 0..<20 { try folder.write("in/f\(index).txt", TestData.text(3_000 + index)) }
    func run(_ style: String) throws -> String {
      let result = try SqueezeBinary.run(
        ["--progress", style, "-f", "-o", folder.url("out-\(style)"), folder.url("in/")])
      #expect(result.status == 0, "\(result.stderrText)")
      return result.stderrText
    }
    // cron: auto and none print nothing on success.
    #expect(try run("auto").isEmpty)
    #expect(try run("none").isEmpty)
    // plain: lines for a log, no terminal control, and the summary.
    let plain = try run("plain")
    #expect(plain.contains("20 files compressed"), "\(plain)")
    #expect(!plain.contains("\r") && !plain.contains("\u{1B}["))
    // bar: drawn anyway, as asked, then cleared for the summary.
    let bar = try run("bar")
    #expect(bar.contains("\r["), "\(bar)")
    #expect(bar.contains("20 files compressed"))
  }

  @Test func helpListsEveryOptionWithExamples() throws {
    let help = try SqueezeBinary.run(["--help"]).stdoutText
    for option in [
      "--decompress", "--test", "--list", "--output", "--stdout", "--keep", "--suffix", "--force",
      "--rm",
      "--dry-run", "--include", "--exclude", "--older-than", "--follow-symlinks",
      "--one-file-system",
      "--shard", "--fast", "--best", "--level", "--no-name", "--name", "--jobs", "--block-size",
      "--progress", "--quiet", "--verbose", "--json", "--isolation", "--task-log",
      "--sample-interval",
    ] {
      #expect(help.contains(option), "\(option) missing from --help")
    }
    #expect(help.contains("$ squeeze -o /backup/photos /home/me/photos/"))
    #expect(help.contains("--older-than 1d --rm"))
    #expect(help.contains("$ squeeze -d "))
  }
}
