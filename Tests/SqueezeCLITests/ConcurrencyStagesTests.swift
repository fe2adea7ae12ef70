import Foundation
import SqueezeTaskLog
import SqueezeTimeline
import TestSupport
import Testing

@testable import SqueezeCore

/// The session's stages run for real: each isolation mode compresses the same folder into
/// identical outputs, and its task-state log shows the stage's signature.
@Suite struct ConcurrencyStagesTests {
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

  /// What replaying a log's task and chunk events in order shows.
  struct Replay {
    /// The most running spans open at once.
    var maxRunning = 0
    /// Moments where two open running spans shared a thread (must be none).
    var sharedThreads: [String] = []
    /// Running spans without a thread.
    var withoutThread = 0
    /// Samples whose counts differ from the replay at their place in the log (none: the
    /// sampler reads the counters under the log's lock).
    var sampleMismatches = 0
    /// Thread ids that ran each task's own code or a chunk.
    var threadsRunning: Set<Int32> = []

    init(_ data: TaskLogData) {
      var open: [Int64: Int32] = [:]
      var cursor = [Int](repeating: 0, count: data.tasks.count)
      var counts = [Int](repeating: 0, count: data.changes.count + 1)
      var enqueued = 0
      var enqueuedAt = [Int](repeating: 0, count: data.changes.count + 1)
      var chunkEnqueued: Set<Int64> = []
      for (number, change) in data.changes.enumerated() {
        let task = data.tasks[change.task]
        if change.chunk < 0 {
          let position = cursor[change.task]
          cursor[change.task] += 1
          let transition = task.transitions[position]
          let key = Int64(change.task) << 32 | 0xFFFF_FFFF
          if position > 0 && task.transitions[position - 1].state == .enqueued { enqueued -= 1 }
          if transition.state == .enqueued { enqueued += 1 }
          open[key] = nil
          if transition.state == .running {
            if transition.thread == 0 { withoutThread += 1 }
            if open.values.contains(transition.thread) {
              sharedThreads.append("\(task.file) at \(transition.time)")
            }
            open[key] = transition.thread
            threadsRunning.insert(transition.thread)
          }
        } else {
          let chunk = task.chunks[change.chunk]
          let key = Int64(change.task) << 32 | Int64(change.chunk)
          switch change.chunkState {
          case .enqueued:
            enqueued += 1
            chunkEnqueued.insert(key)
          case .running:
            if chunkEnqueued.remove(key) != nil { enqueued -= 1 }
            if chunk.thread == 0 { withoutThread += 1 }
            if open.values.contains(chunk.thread) {
              sharedThreads.append("\(task.file) chunk \(chunk.index) at \(change.time)")
            }
            open[key] = chunk.thread
            threadsRunning.insert(chunk.thread)
          default:
            if chunkEnqueued.remove(key) != nil { enqueued -= 1 }
            open[key] = nil
          }
        }
        maxRunning = max(maxRunning, open.count)
        counts[number + 1] = open.count
        enqueuedAt[number + 1] = enqueued
      }
      for sample in data.samples
      where sample.running != counts[sample.changesBefore]
        || sample.enqueued != enqueuedAt[sample.changesBefore]
      {
        sampleMismatches += 1
      }
    }
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
      #expect(data.start.schema == 3)
      #expect(data.start.jobs == 4)
      #expect(data.tasks.count == files, "\(isolation): one task per file")
      #expect(data.tasks.allSatisfy { $0.transitions.last?.state == .finished }, "\(isolation)")
      #expect(data.tasks.allSatisfy { $0.transitions.first?.state == .enqueued }, "\(isolation)")
      #expect(data.samples.last?.total == files, "\(isolation): total counts every file")
      #expect(data.samples.last?.alive == 0)
      let end = try #require(data.end)
      #expect(end.files == files)
      #expect(end.failed == 0)
      #expect(end.leakedContinuations == 0, "\(isolation): every continuation was resumed")
      #expect((end.samplerCPUSeconds ?? 0) > 0, "the sampler says what it cost")
      // Running is measured: every running span names its thread, no thread ever holds two
      // at once, so running equals the number of distinct threads running at every moment,
      // and the samples agree with the events around them.
      let replay = Replay(data)
      #expect(replay.withoutThread == 0, "\(isolation)")
      #expect(replay.sharedThreads.isEmpty, "\(isolation): \(replay.sharedThreads.prefix(3))")
      #expect(replay.sampleMismatches == 0, "\(isolation)")
      #expect(end.maxRunning == replay.maxRunning, "\(isolation): maxRunning is the replay's")
      let cpus = data.start.cpus
      let names = Dictionary(
        data.threadNames.filter { !$0.name.isEmpty }.map { ($0.tid, $0.name) },
        uniquingKeysWith: { _, last in last })
      // What squeeze knows of the threads that ran tasks, beyond the kernel's 15 bytes: the
      // Dispatch queue each ran jobs from (with its QoS), or the name squeeze gave it.
      var queues: [Int32: Set<String>] = [:]
      var given: [Int32: String] = [:]
      for thread in data.threadNames {
        if let queue = thread.queue {
          queues[thread.tid, default: []].insert(queue + " " + (thread.qos ?? "-"))
        }
        if let name = thread.given { given[thread.tid] = name }
      }
      let known = replay.threadsRunning.map { tid in
        given[tid].map { [$0] } ?? queues[tid]?.sorted() ?? []
      }
      switch isolation {
      case .mainActor:
        #expect(known == [["com.apple.main-thread -"]], "the main queue's worker")
      case .actor:
        #expect(known == [["squeeze-actor"]])
      case .nonisolated, .blocking:
        #expect(
          known.allSatisfy { $0 == ["Swift global concurrent queue user-initiated"] },
          "\(isolation): \(known)")
      case .detached:
        #expect(
          known.contains { $0.contains("Swift global concurrent queue default") }, "\(known)")
      }
      // The heartbeat's main-actor jobs say which thread runs the main actor: one that is
      // not the process's main thread (on Linux, after dispatchMain()).
      let mainQueue = Set(
        data.threadNames.filter { $0.queue == "com.apple.main-thread" }.map(\.tid))
      let mainThread = given.first { $0.value == "main thread" }?.key
      #expect(!mainQueue.isEmpty && mainThread != nil && !mainQueue.contains(mainThread ?? 0))
      switch isolation {
      case .mainActor, .actor:
        #expect(end.maxRunning == 1, "\(isolation) compresses one file at a time")
        #expect(replay.threadsRunning.count == 1, "\(isolation): on one thread")
        if isolation == .actor {
          #expect(replay.threadsRunning.map { names[$0] } == ["squeeze-actor"])
        }
      case .nonisolated, .blocking:
        #expect(end.maxRunning <= min(4, cpus), "\(isolation): at most min(jobs, cores)")
        #expect(
          replay.threadsRunning.allSatisfy { names[$0]?.hasSuffix("-qos") == true },
          "\(isolation): on the cooperative pool's threads")
      case .detached:
        // What was found (2 cores, thread ids from the log): Task.detached drops its
        // creator's priority, so the files' tasks run at default priority, on the
        // default-qos pool; awaiting a handle from the user-initiated creator escalates that
        // task (the big file, awaited first) and its chunks onto the user-initiated pool.
        // Each pool is as wide as the cores, so up to twice the cores compress at once
        // (4 threads on 2 cores in the README's demo): the log's thread lanes show it.
        let pools = Set(replay.threadsRunning.compactMap { names[$0] })
        #expect(pools.contains { $0.hasSuffix("default-qos") }, "\(pools)")
        #expect(end.maxRunning <= 2 * cpus, "two pools, each as wide as the cores")
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

  /// A parallel restore (`-d` of a big file the fast engine wrote in chunks) logs its chunks
  /// with the same hooks as compression: each on its thread, never two on one thread.
  @Test func aParallelRestoreLogsItsChunksOnTheirThreads() throws {
    let folder = TemporaryFolder("restorelog")
    let text = TestData.text(6_000_000, seed: 7)
    try folder.write("in/big.txt", text)
    #expect(
      try SqueezeBinary.run(["-j", "2", "-o", folder.url("gz"), folder.url("in") + "/"]).status == 0
    )
    let log = folder.url("restore.jsonl")
    let result = try SqueezeBinary.run([
      "-d", "-j", "2", "--task-log", log, "--sample-interval", "1ms", "-o", folder.url("out"),
      folder.url("gz") + "/",
    ])
    #expect(result.status == 0, "\(result.stderrText)")
    #expect(try folder.read("out/big.txt") == text)
    let data = try TaskLogData.parse(try folder.read("restore.jsonl"))
    let task = try #require(data.tasks.first)
    #expect(task.chunks.count > 1, "restored in chunks")
    #expect(task.chunks.allSatisfy { $0.thread != 0 && $0.ended != nil })
    let replay = Replay(data)
    #expect(replay.sharedThreads.isEmpty)
    #expect(replay.sampleMismatches == 0)
    #expect(data.end?.leakedContinuations == 0)
    #expect(data.end?.maxRunning ?? 0 <= min(2, data.start.cpus))
  }

  /// `--isolation blocking` makes the durability syncs and the cold-cache reads on the pool
  /// threads that run the tasks; `nonisolated` leaves syncs to the publisher's thread. Seen
  /// with strace, whose thread ids are the log's.
  @Test(.tags(.system), .systemTier, arguments: [Isolation.blocking, .nonisolated])
  func blockingCallsRunWhereTheModeSays(isolation: Isolation) throws {
    let folder = TemporaryFolder("blocking")
    for index in 0..<30 {
      try folder.write("in/f\(index).txt", TestData.text(3_000 + index * 100, seed: UInt64(index)))
    }
    let log = folder.url("run.jsonl")
    let trace = folder.url("trace")
    let result = try Shell.run(
      "/usr/bin/strace",
      [
        "-f", "-qq", "-e", "trace=fsync,syncfs,fadvise64", "-o", trace, SqueezeBinary.path,
        "-j", "2", "--isolation", isolation.rawValue, "--task-log", log, "-o",
        folder.url("out"), folder.url("in"),
      ])
    #expect(result.status == 0, "\(result.stderrText)")
    let data = try TaskLogData.parse(try folder.read("run.jsonl"))
    let names = Dictionary(
      data.threadNames.filter { !$0.name.isEmpty }.map { ($0.tid, $0.name) },
      uniquingKeysWith: { _, last in last })
    let taskThreads = Replay(data).threadsRunning
    var calls: [String: [Int32]] = [:]
    for line in try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n") {
      let fields = line.split(separator: " ", maxSplits: 1)
      guard fields.count == 2, let tid = Int32(fields[0]) else { continue }
      // strace pads the thread id: "9323  fsync(5)".
      let call = String(fields[1].drop { $0 == " " }.prefix { $0 != "(" })
      calls[call, default: []].append(tid)
    }
    let publisher = names.first { $0.value == "squeeze-publish" }?.key
    if isolation == .blocking {
      #expect(calls["fsync"]?.count ?? 0 >= 30, "one sync per file: \(calls.keys)")
      #expect(calls["fsync"]?.allSatisfy(taskThreads.contains) == true, "on the tasks' threads")
      #expect(calls["fadvise64"]?.allSatisfy(taskThreads.contains) == true)
      #expect(
        data.tasks.allSatisfy { task in !task.transitions.contains { $0.reason == .publication } },
        "no task waits for a publisher")
    } else {
      #expect(calls["fsync"] == nil, "no sync per file")
      #expect(calls["fadvise64"] == nil)
      #expect(calls["syncfs"]?.contains { $0 == publisher } == true, "on the publisher's thread")
      #expect(
        calls["syncfs"]?.allSatisfy { !taskThreads.contains($0) } == true,
        "never on the tasks' threads")
    }
  }

  /// A file that fails before its task can start (two sources, one output) is in the log as
  /// a failed task with its file and error, and in the timeline's lanes.
  @Test func aFileThatFailsBeforeStartingIsInTheLogAndTheTimeline() throws {
    let folder = TemporaryFolder("prefail")
    try folder.write("a/same.txt", text: "one\n")
    try folder.write("b/same.txt", text: "two\n")
    let log = folder.url("run.jsonl")
    let result = try SqueezeBinary.run([
      "--task-log", log, "-o", folder.url("out"), folder.url("a/same.txt"),
      folder.url("b/same.txt"),
    ])
    #expect(result.status == 1)
    let data = try TaskLogData.parse(try folder.read("run.jsonl"))
    let failed = data.tasks.filter { $0.transitions.last?.state == .failed }
    #expect(failed.count == 1)
    #expect(failed.first?.transitions.count == 1, "failed before its task started")
    #expect(failed.first?.file.hasSuffix("same.txt") == true)
    #expect(failed.first?.error?.isEmpty == false)
    #expect(data.end?.failed == 1)
    let drawn = try SqueezeBinary.run(["timeline", log, "-o", folder.url("run.svg")])
    #expect(drawn.status == 0)
    let svg = try String(contentsOfFile: folder.url("run.svg"), encoding: .utf8)
    #expect(svg.contains("class=\"failed\""))
    #expect(
      svg.contains(SVGBuilder.escape(failed.first?.error ?? "?")), "its story names the error")
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
    #expect(drawn.stderrText.contains("wrote timeline '\(folder.url("run.svg"))'"), "says where")
    let svg = try String(contentsOfFile: folder.url("run.svg"), encoding: .utf8)
    #expect(svg.hasPrefix("<?xml"))
    #expect(svg.contains("id=\"running-track\""))
    let page = try SqueezeBinary.run(["timeline", log, "-o", folder.url("page.html")])
    #expect(page.status == 0)
    #expect(page.stderrText.contains("page.html"))
    #expect(
      try String(contentsOfFile: folder.url("page.html"), encoding: .utf8).hasPrefix(
        "<!DOCTYPE html>"))
    let trace = try SqueezeBinary.run(["timeline", log, "-o", folder.url("trace.json")])
    #expect(trace.status == 0)
    #expect(trace.stderrText.contains("Chrome trace"))
    let object = try JSONSerialization.jsonObject(with: Data(try folder.read("trace.json")))
    #expect((object as? [String: Any])?["traceEvents"] is [Any])
    // Another extension is a usage error, and nothing is written.
    let png = try SqueezeBinary.run(["timeline", log, "-o", folder.url("run.png")])
    #expect(png.status == 64)
    #expect(png.stderrText.hasPrefix("Error: The value '\(folder.url("run.png"))' is invalid"))
    #expect(!FileManager.default.fileExists(atPath: folder.url("run.png")))
    try folder.write("bogus.jsonl", text: "not json\n")
    let bad = try SqueezeBinary.run(["timeline", folder.url("bogus.jsonl")])
    #expect(bad.status == 1)
    #expect(
      bad.stderrText == "squeeze: '\(folder.url("bogus.jsonl"))': line 1: not a JSON object\n")
    let missing = try SqueezeBinary.run(["timeline", folder.url("nope.jsonl")])
    #expect(missing.status == 1)
    #expect(
      missing.stderrText.contains(
        "cannot read '\(folder.url("nope.jsonl"))': No such file or directory (errno 2)"))
  }

  /// The line after drawing counts in words that agree with the number: the log of a run
  /// over one file has "1 task", not "1 tasks".
  @Test func theTimelineLineSaysOneTaskInTheSingular() throws {
    let folder = TemporaryFolder("timeline-one")
    try folder.write("in/a.txt", text: "a")
    let log = folder.url("run.jsonl")
    let run = try SqueezeBinary.run(["--task-log", log, "-o", folder.url("out"), folder.url("in/")])
    #expect(run.status == 0, "\(run.stderrText)")
    let drawn = try SqueezeBinary.run(["timeline", log])
    #expect(drawn.status == 0, "\(drawn.stderrText)")
    #expect(drawn.stderrText.contains(", 1 task, "), "\(drawn.stderrText)")
    #expect(!drawn.stderrText.contains("1 tasks"), "\(drawn.stderrText)")
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
@Suite struct TaskLogFileTests {
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
    // /dev/full fails every write with ENOSPC, as a full disk does: status 74.
    #expect(result.status == 74)
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
    // And the command says so, not only the picture.
    #expect(
      drawn.stderrText.contains(
        "squeeze: warning: '\(log)' stops before the run's end (killed, or still running): drew its first "
      ), "\(drawn.stderrText)")
    // A whole run's log draws with no warning.
    let whole = folder.url("whole.jsonl")
    try FileManager.default.removeItem(atPath: folder.url("out"))
    #expect(
      try SqueezeBinary.run(["-1", "--task-log", whole, "-o", folder.url("out"), folder.url("in/")])
        .status == 0)
    let wholeDrawn = try SqueezeBinary.run(["timeline", whole, "-o", folder.url("whole.svg")])
    #expect(wholeDrawn.status == 0, "\(wholeDrawn.stderrText)")
    #expect(!wholeDrawn.stderrText.contains("warning"), "\(wholeDrawn.stderrText)")
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
@Suite struct BlockParallelTests {
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
