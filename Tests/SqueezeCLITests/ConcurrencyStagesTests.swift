import Foundation
import TestSupport
import Testing

@testable import SqueezeCore

/// The session's stages run for real: each isolation mode compresses the same folder into
/// identical outputs, and its task-state log shows the stage's signature.
@Suite(.serialized) struct ConcurrencyStagesTests {
  /// A folder of 40 small files and one file of several 32 KiB blocks.
  static func makeFolder(_ folder: TemporaryFolder) throws -> Int {
    for index in 0..<40 {
      try folder.write(
        "in/d\(index % 4)/small-\(index).txt", TestData.text(500 + index * 300, seed: UInt64(index))
      )
    }
    try folder.write("in/big.bin", TestData.text(300_000, seed: 99))
    return 41
  }

  static func outputs(in folder: String) throws -> [String: [UInt8]] {
    var result: [String: [UInt8]] = [:]
    for path in TemporaryFolder.files(in: folder) {
      result[path] = Array(try Data(contentsOf: URL(fileURLWithPath: folder + "/" + path)))
    }
    return result
  }

  @Test func everyIsolationProducesIdenticalOutputAndItsSignature() throws {
    let folder = TemporaryFolder("stages")
    let files = try Self.makeFolder(folder)
    var reference: [String: [UInt8]]? = nil
    for isolation in Isolation.allCases {
      let log = folder.url("\(isolation.rawValue).jsonl")
      let result = try SqueezeBinary.run([
        "-j", "4", "--block-size", "32K", "--isolation", isolation.rawValue, "--task-log", log,
        "--sample-interval", "1ms", "-o", folder.url("out-\(isolation.rawValue)"),
        folder.url("in/"),
      ])
      #expect(result.status == 0, "\(isolation): \(result.stderrText)")
      let data = try TaskLogData.parse(Array(try Data(contentsOf: URL(fileURLWithPath: log))))
      #expect(data.start.isolation == isolation.rawValue)
      #expect(data.start.jobs == 4)
      #expect(data.tasks.count == files, "\(isolation): one task per file")
      #expect(data.tasks.allSatisfy { $0.transitions.last?.state == .finished }, "\(isolation)")
      #expect(data.tasks.allSatisfy { $0.transitions.first?.state == .enqueued }, "\(isolation)")
      #expect(data.samples.last?.total == files, "\(isolation): total counts every file")
      #expect(data.samples.last?.alive == 0)
      let end = try #require(data.end)
      #expect(end.files == files)
      #expect(end.failed == 0)
      if isolation == .mainActor || isolation == .actor {
        #expect(end.maxRunning == 1, "\(isolation) compresses one file at a time")
        #expect(data.samples.allSatisfy { $0.running <= 1 })
      } else {
        #expect(end.maxRunning >= 1)
      }
      let outputs = try Self.outputs(in: folder.url("out-\(isolation.rawValue)"))
      #expect(outputs.count == files)
      if let reference {
        #expect(outputs == reference, "\(isolation) writes the same bytes as main-actor")
      } else {
        reference = outputs
      }
    }
    let big = try #require(reference?["big.bin.gz"])
    #expect(
      try SystemGzip.decompress(folder.url("out-nonisolated/big.bin.gz"))
        == TestData.text(300_000, seed: 99))
    #expect(big.count > 0)
  }

  @Test func theTimelineCommandDrawsALog() throws {
    let folder = TemporaryFolder("timeline")
    _ = try Self.makeFolder(folder)
    let log = folder.url("run.jsonl")
    #expect(
      try SqueezeBinary.run(["--task-log", log, "-o", folder.url("out"), folder.url("in/")]).status
        == 0)
    let drawn = try SqueezeBinary.run(["timeline", log])
    #expect(drawn.status == 0, "\(drawn.stderrText)")
    let svg = try String(contentsOfFile: folder.url("run.svg"), encoding: .utf8)
    #expect(svg.hasPrefix("<?xml"))
    #expect(svg.contains("id=\"running-track\""))
    let page = try SqueezeBinary.run(["timeline", log, "-o", folder.url("page.html")])
    #expect(page.status == 0)
    #expect(
      try String(contentsOfFile: folder.url("page.html"), encoding: .utf8).hasPrefix(
        "<!DOCTYPE html>"))
    try folder.write("bogus.jsonl", text: "not json\n")
    let bad = try SqueezeBinary.run(["timeline", folder.url("bogus.jsonl")])
    #expect(bad.status == 1)
    #expect(bad.stderrText.contains("bogus.jsonl: not a task-state log: line 1: not a JSON object"))
    let missing = try SqueezeBinary.run(["timeline", folder.url("nope.jsonl")])
    #expect(missing.status == 1)
    #expect(missing.stderrText.contains("nope.jsonl: cannot read: No such file or directory"))
  }

  @Test func anUnwritableTaskLogStopsTheRunAtOnce() throws {
    let folder = TemporaryFolder("badlog")
    try folder.write("in/a.txt", text: "a")
    let result = try SqueezeBinary.run([
      "--task-log", folder.url("no/such/dir/log.jsonl"), folder.url("in"),
    ])
    #expect(result.status == 1)
    #expect(result.stderrText.contains("cannot create task log"))
    #expect(!FileManager.default.fileExists(atPath: folder.url("in/a.txt.gz")))
  }
}

/// The task-state log is an output like any other: it never replaces someone's file, is
/// never compressed by its own run, reaches the disk while the run goes on, and a failure
/// to write it is a failed run.
@Suite(.serialized) struct TaskLogFileTests {
  @Test func aFileThatIsNotATaskLogIsNeverReplaced() throws {
    let folder = TemporaryFolder("logsafe")
    let data = TestData.text(50_000, seed: 3)
    try folder.write("in/data.txt", data)
    let refused = try SqueezeBinary.run([
      "--task-log", folder.url("in/data.txt"), "-o", folder.url("out"), folder.url("in/"),
    ])
    #expect(refused.status == 1)
    #expect(
      refused.stderrText.contains("data.txt' exists and is not a squeeze task log; not replaced"),
      "\(refused.stderrText)")
    #expect(try folder.read("in/data.txt") == data, "the file is untouched")
    #expect(!FileManager.default.fileExists(atPath: folder.url("out/data.txt.gz")))

    // -f replaces it, and the run does not compress its own log.
    let forced = try SqueezeBinary.run([
      "-f", "-v", "--task-log", folder.url("in/data.txt"), "-o", folder.url("out"),
      folder.url("in/"),
    ])
    #expect(forced.status == 0, "\(forced.stderrText)")
    #expect(try folder.read("in/data.txt").starts(with: Array(#"{"event":"start""#.utf8)))
    #expect(!FileManager.default.fileExists(atPath: folder.url("out/data.txt.gz")))
    #expect(forced.stderrText.contains("this run's task log (--task-log)"))
  }

  @Test func aLogInsideTheInputIsLeftOutAndAnEarlierLogIsReplaced() throws {
    let folder = TemporaryFolder("loginside")
    try folder.write("in/a.txt", TestData.text(5_000))
    let log = folder.url("in/run.jsonl")
    for _ in 0..<2 {
      let result = try SqueezeBinary.run(["--task-log", log, folder.url("in")])
      #expect(result.status == 0, "an earlier log is replaced without -f: \(result.stderrText)")
      #expect(!FileManager.default.fileExists(atPath: log + ".gz"), "the log is not compressed")
      let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
      #expect(lines.first?.hasPrefix(#"{"event":"start""#) == true)
      #expect(lines.filter { $0.hasPrefix(#"{"event":"start""#) }.count == 1, "one run's log")
    }
    // Named directly, it is skipped with a word, not compressed.
    let direct = try SqueezeBinary.run(["--task-log", log, log, folder.url("in/a.txt")])
    #expect(direct.status == 0)
    #expect(direct.stderrText.contains("is this run's task log (--task-log); not compressed"))
    #expect(!FileManager.default.fileExists(atPath: log + ".gz"))
  }

  @Test func aLogThatCannotBeWrittenFailsTheRun() throws {
    let folder = TemporaryFolder("logfull")
    try folder.write("in/a.txt", TestData.text(5_000))
    let result = try SqueezeBinary.run(["--task-log", "/dev/full", folder.url("in")])
    #expect(result.status == 1)
    #expect(
      result.stderrText.contains("cannot write task log '/dev/full': No space left on device"))
    #expect(FileManager.default.fileExists(atPath: folder.url("in/a.txt.gz")), "the work is done")
  }

  @Test func aKilledRunLeavesALogTheTimelineDraws() throws {
    let folder = TemporaryFolder("logkill")
    // Several seconds of work at -9 on one core, on the main actor.
    for index in 0..<6 {
      try folder.write("in/f\(index).txt", TestData.text(8_000_000, seed: UInt64(index)))
    }
    let log = folder.url("run.jsonl")
    let result = try SqueezeBinary.run([
      "-9", "-j", "1", "--isolation", "main-actor", "--task-log", log, "-o", folder.url("out"),
      folder.url("in/"),
    ]) { pid in
      // Killed as soon as the log has reached the disk (within about a second of the start),
      // long before the run could end.
      for _ in 0..<200 {
        var status = stat()
        if stat(log, &status) == 0 && status.st_size > 0 { break }
        usleep(50_000)
      }
      usleep(200_000)
      kill(pid, SIGKILL)
    }
    #expect(result.signal == SIGKILL, "the run was still going: \(result.stderrText)")
    let text = try String(contentsOfFile: log, encoding: .utf8)
    #expect(text.hasPrefix(#"{"event":"start""#), "written while the run went on")
    #expect(text.contains(#""event":"sample""#))
    #expect(!text.contains(#""event":"end""#))
    let drawn = try SqueezeBinary.run(["timeline", log, "-o", folder.url("killed.svg")])
    #expect(drawn.status == 0, "\(drawn.stderrText)")
    let svg = try String(contentsOfFile: folder.url("killed.svg"), encoding: .utf8)
    #expect(svg.contains("the log stops early: the run did not finish"))
  }

  @Test func aSecondRunGetsANewLogFileAndLinksAreNotFollowed() throws {
    let folder = TemporaryFolder("logshare")
    try folder.write("in/a.txt", TestData.text(5_000))
    let log = folder.url("run.jsonl")
    #expect(try SqueezeBinary.run(["--task-log", log, folder.url("in")]).status == 0)
    // A run still writing the old log keeps its own file: the new one is a new inode.
    let open = FileHandle(forReadingAtPath: log)
    var before = stat()
    stat(log, &before)
    #expect(try SqueezeBinary.run(["-f", "--task-log", log, folder.url("in")]).status == 0)
    var after = stat()
    stat(log, &after)
    #expect(before.st_ino != after.st_ino, "replaced by a new file, not emptied in place")
    try open?.close()
    // A link at the log path is not followed; with -f the link itself is replaced.
    try folder.write("target.txt", text: "precious\n")
    symlink(folder.url("target.txt"), folder.url("link.jsonl"))
    let refused = try SqueezeBinary.run(["--task-log", folder.url("link.jsonl"), folder.url("in")])
    #expect(refused.status == 1)
    #expect(refused.stderrText.contains("is a symbolic link; not followed"))
    let forced = try SqueezeBinary.run([
      "-f", "--task-log", folder.url("link.jsonl"), folder.url("in"),
    ])
    #expect(forced.status == 0, "\(forced.stderrText)")
    #expect(try folder.read("target.txt") == Array("precious\n".utf8), "the target is untouched")
    var link = stat()
    lstat(folder.url("link.jsonl"), &link)
    #expect(link.st_mode & S_IFMT == S_IFREG, "the link was replaced by the log")
  }

  @Test func aLogOnStandardOutputOrAPipeIsWrittenAsItIs() throws {
    let folder = TemporaryFolder("logpipe")
    for index in 0..<30 {
      try folder.write("in/f\(index)", TestData.text(200_000, seed: UInt64(index)))
    }
    let squeeze = Shell.quote(SqueezeBinary.path)
    let input = Shell.quote(folder.url("in"))
    let file = Shell.quote(folder.url("kept.txt"))
    // /dev/stdout is the descriptor already open: `>>` appends after what is there.
    let appended = try Shell.sh(
      "echo earlier > \(file) && \(squeeze) -f --task-log /dev/stdout \(input) >> \(file)")
    #expect(appended.status == 0, "\(appended.stderrText)")
    let text = try String(contentsOfFile: folder.url("kept.txt"), encoding: .utf8)
    #expect(text.hasPrefix("earlier\n{\"event\":\"start\""), "\(text.prefix(80))")
    // A pipe whose reader goes away: the run goes on, says so, and ends with status 1.
    let pipe = Shell.quote(folder.url("fifo"))
    let cut = try Shell.sh(
      "mkfifo \(pipe) && (head -c 10 \(pipe) > /dev/null &) && sleep 0.2 && \(squeeze) -f --task-log \(pipe) \(input)"
    )
    #expect(cut.status == 1, "\(cut.stderrText)")
    #expect(
      cut.stderrText.contains("cannot write task log") && cut.stderrText.contains("Broken pipe"))
    #expect(
      (try FileManager.default.contentsOfDirectory(atPath: folder.url("in"))).filter {
        $0.hasSuffix(".gz")
      }.count == 30, "every file still done")
    // A pipe nobody reads is refused at once instead of waiting.
    let unread = try SqueezeBinary.run(["-f", "--task-log", folder.url("fifo"), folder.url("in")])
    #expect(unread.status == 1)
    #expect(unread.stderrText.contains("is a named pipe that no process is reading"))
  }

  @Test func theTimelineNeverReplacesTheLogItDraws() throws {
    let folder = TemporaryFolder("logself")
    try folder.write("in/a.txt", TestData.text(5_000))
    let log = folder.url("run.svg")
    #expect(try SqueezeBinary.run(["--task-log", log, folder.url("in")]).status == 0)
    let before = try folder.read("run.svg")
    let drawn = try SqueezeBinary.run(["timeline", log])
    #expect(drawn.status == 1)
    #expect(drawn.stderrText.contains("is the log being drawn; not replaced"))
    #expect(try folder.read("run.svg") == before)
  }
}

/// Block-parallel compression: one member that gunzip reads, the same bytes whatever the
/// width.
@Suite(.serialized) struct BlockParallelTests {
  @Test func outputIsIdenticalWhateverTheJobs() throws {
    let folder = TemporaryFolder("blocks")
    let text = TestData.text(1_500_000, seed: 5)
    try folder.write("in/big.txt", text)
    var outputs: [[UInt8]] = []
    for jobs in ["1", "2", "4", "7"] {
      let out = folder.url("out-\(jobs)")
      let result = try SqueezeBinary.run([
        "-j", jobs, "--block-size", "64K", "-o", out, folder.url("in/"),
      ])
      #expect(result.status == 0, "\(result.stderrText)")
      outputs.append(try folder.read("out-\(jobs)/big.txt.gz"))
    }
    #expect(Set(outputs.map { $0 }).count == 1, "every width writes the same bytes")
    #expect(try SystemGzip.decompress(folder.url("out-1/big.txt.gz")) == text)
  }

  @Test(arguments: [0, 1, 32767, 32768, 32769, 65536, 98305])
  func sizesAroundBlockBoundariesRoundTrip(size: Int) throws {
    let folder = TemporaryFolder("boundary")
    let bytes = TestData.random(size, seed: UInt64(size) + 1)
    try folder.write("in/f.bin", bytes)
    let result = try SqueezeBinary.run(["--block-size", "32K", folder.url("in")])
    #expect(result.status == 0, "\(result.stderrText)")
    #expect(try SystemGzip.decompress(folder.url("in/f.bin.gz")) == bytes)
  }

  @Test func manyBigFilesAndSmallOnesShareTheWidth() throws {
    let folder = TemporaryFolder("mixed")
    var expected: [String: [UInt8]] = [:]
    for index in 0..<6 {
      let bytes = TestData.text(200_000 + index * 50_000, seed: UInt64(index))
      try folder.write("in/big-\(index).txt", bytes)
      expected["big-\(index).txt"] = bytes
    }
    for index in 0..<30 {
      let bytes = TestData.text(1_000 + index, seed: UInt64(100 + index))
      try folder.write("in/small-\(index).txt", bytes)
      expected["small-\(index).txt"] = bytes
    }
    let result = try SqueezeBinary.run(["-j", "3", "--block-size", "32K", folder.url("in")])
    #expect(result.status == 0, "\(result.stderrText)")
    for (name, bytes) in expected {
      #expect(try SystemGzip.decompress(folder.url("in/\(name).gz")) == bytes, "\(name)")
    }
  }
}
