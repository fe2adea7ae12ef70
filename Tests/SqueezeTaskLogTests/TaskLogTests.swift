import CSystem
import Dispatch
import Foundation
import Glibc
import Synchronization
import TestSupport
import Testing

@testable import SqueezeSystem
@testable import SqueezeTaskLog

@Suite struct TaskLogTests {
  private func object(_ line: [UInt8]) throws -> [String: Any] {
    try #require(JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
  }

  @Test func encodesEveryFieldKindAsValidJSON() throws {
    let line = JSONWriter.line { line in
      line.field("event", literal: "task")
      line.field("t", 1.5, decimals: 6)
      line.field("id", 42)
      line.field("negative", -7)
      line.field("file", "a \"quoted\" \\ name\nwith\tcontrol \u{1}")
      line.field("flag", true)
    }
    #expect(line.last == UInt8(ascii: "\n"))
    let parsed = try object(line)
    #expect(parsed["event"] as? String == "task")
    #expect((parsed["t"] as? NSNumber)?.doubleValue == 1.5)
    #expect((parsed["id"] as? NSNumber)?.intValue == 42)
    #expect((parsed["negative"] as? NSNumber)?.intValue == -7)
    #expect(parsed["file"] as? String == "a \"quoted\" \\ name\nwith\tcontrol \u{1}")
    #expect(parsed["flag"] as? Bool == true)
  }

  /// The heartbeat runs from the moment the log opens; on a loaded machine the main actor
  /// can lag 250 ms or more before the run writes its start event. The log still begins with
  /// its start event (and so a later run recognizes it as a task log and replaces it).
  @Test func aLogWhoseFirstRecordedEventWasAHangBeginsWithItsStartEvent() throws {
    let folder = TemporaryFolder("early-hang")
    let path = folder.url("run.jsonl")
    let log = try TaskLog(path: RawPath(path), startTime: MonotonicClock.now())
    log.hang(startingAt: MonotonicClock.now(), duration: 0.3, severity: .microhang)
    log.warning("recorded before the start event")
    log.flush()
    #expect(try folder.read("run.jsonl").isEmpty, "nothing is written before the start event")
    log.start(
      version: "1", isolation: "nonisolated", jobs: 2, level: 6, engine: "zlib", cpus: 2,
      files: 1, bytes: 1, chunkSize: 131072)
    log.hang(startingAt: MonotonicClock.now(), duration: 0.6, severity: .hang)
    log.flush()
    let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
    #expect(lines.count == 4)
    #expect(lines[0].hasPrefix(#"{"event":"start""#))
    #expect(lines[1].hasPrefix(#"{"event":"hang""#) && lines[1].contains("microhang"))
    #expect(lines[2].hasPrefix(#"{"event":"warning""#))
    let data = try TaskLogData.parse(try folder.read("run.jsonl"))
    #expect(data.hangs.count == 2)
    // A later run replaces it without -f: it is a task log.
    #expect(throws: Never.self) { _ = try TaskLog(path: RawPath(path), startTime: 0) }
  }

  @Test(arguments: [
    (value: 0.0, decimals: 3, text: "0.000"),
    (value: 1.0005, decimals: 3, text: "1.001"),
    (value: 12.25, decimals: 1, text: "12.3"),
    (value: -0.5, decimals: 2, text: "-0.50"),
    (value: 3.0, decimals: 0, text: "3"),
    (value: Double.nan, decimals: 2, text: "0"),
    (value: 1e300, decimals: 3, text: "0"),
  ])
  func decimalsAreFixedPoint(value: Double, decimals: Int, text: String) {
    var json = JSONWriter()
    json.decimal(value, decimals: decimals)
    #expect(String(decoding: json.bytes, as: UTF8.self) == text)
  }

  @Test func integersCoverTheWholeRange() {
    for value in [Int64.min, Int64.min + 1, -1, 0, 9, 10, 1_234_567_890, Int64.max] {
      var json = JSONWriter()
      json.integer(value)
      #expect(String(decoding: json.bytes, as: UTF8.self) == String(value))
    }
  }

  /// Each log hears a thread's queue once, even when another log starts in between (tests
  /// run logs side by side in one process; the first log heard the queue again before).
  @Test func anotherLogStartingDoesNotMakeALogHearAQueueTwice() throws {
    let folder = TemporaryFolder("log-queues")
    let path = folder.url("first.jsonl")
    let log = try TaskLog(path: RawPath(path), startTime: MonotonicClock.now())
    log.start(
      version: "1", isolation: "nonisolated", jobs: 2, level: 6, engine: "fast", cpus: 2,
      files: 2, bytes: 2, chunkSize: 131072)
    let tracker = TaskTracker(log: log)
    let first = tracker.create(id: 1, file: "a")
    first.run()
    let other = try TaskLog(path: RawPath(folder.url("second.jsonl")), startTime: 0)
    let second = tracker.create(id: 2, file: "b")
    second.run()
    other.flush()
    log.flush()
    let text = try String(contentsOfFile: path, encoding: .utf8)
    #expect(text.contains(#""event":"start""#), "the log was written: \(text)")
    let queues = text.split(separator: "\n").filter { $0.contains(#""queue":"#) }
    // At most one: none when this thread is none of Dispatch's queues' (squeeze's own).
    #expect(queues.count <= 1, "\(text)")
  }

  @Test func theLogWritesEachSchema3EventWithItsKeys() throws {
    let folder = TemporaryFolder("log")
    let path = folder.url("run.jsonl")
    let log = try TaskLog(path: RawPath(path), startTime: MonotonicClock.now())
    log.start(
      version: "1", isolation: "actor", jobs: 4, level: 6, engine: "zlib", cpus: 2,
      files: 3, bytes: 99, chunkSize: 131072)
    log.thread(
      tid: 7, name: "squeeze-boundar", given: "squeeze-boundaries", at: MonotonicClock.now())
    let tracker = TaskTracker(log: log)
    log.sample(
      tracker.counters, mainActorLagMilliseconds: 0.4,
      threads: [
        ThreadStates.Reading(tid: 7, state: .blocked, systemCall: 74),
        ThreadStates.Reading(tid: 8, state: .idle, systemCall: nil),
      ])
    let task = tracker.create(id: 1, file: RawPath(bytes: [0x61, 0xFF]))
    task.run()
    let chunk = task.chunk(0)
    task.suspend(.chunks)
    chunk.start()
    chunk.end()
    task.run()
    task.enqueue(on: .actor)
    task.run()
    task.fail("cannot read: Input/output error (errno 5)", file: RawPath(bytes: [0x61, 0xFF]))
    tracker.failedBeforeStart(id: 2, file: "b", error: "output collision")
    log.hang(startingAt: MonotonicClock.now(), duration: 0.612, severity: .hang)
    log.end(
      files: 3, failed: 0, bytesIn: 99, bytesOut: 50, maxRunning: 1, maxEnqueued: 2,
      hangs: HangReport(hangs: 1, microhangs: 0, worstLag: 0.612), leakedContinuations: 0)
    log.flush()
    let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
    let all = try lines.map {
      try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
    }
    // The thread that ran the task's code said, once, which Dispatch queue it ran a job from
    // (this test runs on one of the cooperative pool's), before its first running event.
    let queues = all.filter { $0["queue"] != nil }
    #expect(queues.count <= 1)
    if let queue = queues.first {
      #expect(Set(queue.keys).isSubset(of: ["event", "t", "tid", "queue", "qos"]))
      #expect((queue["tid"] as? NSNumber)?.int32Value == squeeze_thread_id())
      let position = all.firstIndex { $0["queue"] != nil } ?? 0
      let running = all.firstIndex { $0["state"] as? String == "running" } ?? 0
      #expect(position < running)
    }
    let events = all.filter { $0["queue"] == nil }
    func kind(_ event: [String: Any]) -> String {
      let name = event["event"] as? String ?? "?"
      guard name == "task" || name == "chunk" else { return name }
      return name + " " + (event["state"] as? String ?? "?")
    }
    #expect(
      events.map(kind) == [
        "start", "thread", "sample", "task enqueued", "task running", "chunk enqueued",
        "task suspended", "chunk running", "chunk finished", "task enqueued", "task running",
        "task enqueued", "task running", "task failed", "task failed", "hang", "end",
      ])
    let expectedKeys: [String: Set<String>] = [
      "start": [
        "event", "t", "schema", "version", "arch", "isolation", "jobs", "level", "engine", "cpus",
        "files", "bytes", "blockSize",
      ],
      "thread": ["event", "t", "tid", "name", "given"],
      "sample": [
        "event", "t", "running", "enqueued", "suspended", "alive", "total", "completed",
        "actorQueue", "threads", "mainActorLagMs",
      ],
      "task running": ["event", "t", "id", "state", "thread"],
      "task suspended": ["event", "t", "id", "state", "reason"],
      "task failed": ["event", "t", "id", "file", "state", "error"],
      "chunk enqueued": ["event", "t", "id", "chunk", "state"],
      "chunk running": ["event", "t", "id", "chunk", "state", "thread"],
      "chunk finished": ["event", "t", "id", "chunk", "state"],
      "hang": ["event", "t", "durationMs", "severity"],
      "end": [
        "event", "t", "files", "failed", "bytesIn", "bytesOut", "maxRunning", "maxEnqueued",
        "hangs", "microhangs", "worstLagMs", "leakedContinuations", "samplerCPUSeconds",
      ],
    ]
    for event in events {
      if let keys = expectedKeys[kind(event)] {
        #expect(Set(event.keys) == keys, "\(kind(event))")
      }
    }
    #expect((events[0]["schema"] as? NSNumber)?.intValue == 3)
    #expect(events[1]["name"] as? String == "squeeze-boundar")
    #expect(events[1]["given"] as? String == "squeeze-boundaries", "the name squeeze gave, whole")
    let threads = try #require(events[2]["threads"] as? [[String: Any]])
    #expect(threads.count == 2)
    #expect(threads[0]["state"] as? String == "blocked")
    #expect((threads[0]["syscall"] as? NSNumber)?.intValue == 74)
    #expect(threads[1]["syscall"] == nil)
    #expect(events[3]["file"] as? String == "a\\xff", "names are shown losslessly")
    #expect(events[3]["on"] as? String == "pool")
    #expect(events[4]["file"] == nil, "the file is named on a task's first event only")
    #expect(
      (events[4]["thread"] as? NSNumber)?.int32Value == squeeze_thread_id(),
      "a running span records its thread")
    #expect(events[6]["reason"] as? String == "chunks")
    #expect(events[9]["on"] as? String == "pool", "the chunk's end resumed its task")
    #expect(events[11]["on"] as? String == "actor")
    #expect(events[13]["error"] as? String == "cannot read: Input/output error (errno 5)")
    #expect(events[13]["file"] as? String == "a\\xff", "a failure names its file")
    #expect(events[14]["file"] as? String == "b", "a file that failed before its task started")
    #expect((events[15]["durationMs"] as? NSNumber)?.doubleValue == 612)
    #expect(events[15]["severity"] as? String == "hang")
    // Task, chunk and sample events take their time under the log's lock: never backwards.
    let times = events.filter { ["task", "chunk", "sample"].contains($0["event"] as? String) }
      .compactMap { ($0["t"] as? NSNumber)?.doubleValue }
    #expect(times == times.sorted())
  }

  @Test(arguments: [
    (lag: 0.249, severity: HangSeverity?.none),
    (lag: 0.25, severity: .microhang),
    (lag: 0.499, severity: .microhang),
    (lag: 0.5, severity: .hang),
    (lag: 3.0, severity: .hang),
  ])
  func hangThresholdsAre250And500Milliseconds(lag: Double, severity: HangSeverity?) {
    #expect(HangSeverity(lag: lag) == severity)
  }

  @MainActor
  @Test func theHeartbeatMeasuresABlockedMainActor() async throws {
    // The heartbeat measures real lag, so a loaded machine (the CLI tests run beside this
    // one) can add a lag of its own. An attempt free of outside lag must see the 300 ms
    // block as exactly one microhang; a heartbeat that missed it or counted it twice fails
    // every attempt.
    var reports: [HangReport] = []
    for _ in 0..<5 {
      let heartbeat = MainActorHeartbeat(period: 0.002, log: nil)
      heartbeat.start()
      try await Task.sleep(for: .milliseconds(30))
      // Block the main actor for 300 ms: one microhang.
      let blockUntil = MonotonicClock.now() + 0.3
      while MonotonicClock.now() < blockUntil {}
      try await Task.sleep(for: .milliseconds(30))
      let report = heartbeat.stop()
      reports.append(report)
      if report.microhangs == 1 && report.hangs == 0 && report.worstLag < 0.5 { break }
    }
    let clean = reports.last!
    #expect(clean.microhangs == 1, "\(reports)")
    #expect(clean.hangs == 0, "\(reports)")
    #expect(clean.worstLag >= 0.25 && clean.worstLag < 0.5, "\(reports)")
  }

  /// The sampler takes its time, then asks for the lag; a beat sent in between has waited
  /// no time then, never a negative time (which the log's reader refuses as out of range).
  @MainActor
  @Test func aBeatSentAfterTheSamplersTimeIsNoLagNotANegativeOne() {
    let heartbeat = MainActorHeartbeat(period: 0.001, log: nil)
    let before = MonotonicClock.now()
    heartbeat.start()
    // The main actor is held here, so the first beat stays in flight once it is sent.
    while heartbeat.currentLag(at: before + 1_000) < 500 {}
    #expect(heartbeat.currentLag(at: before) == 0)
    _ = heartbeat.stop()
  }
}

/// Thread states come from /proc/self/task: a thread spinning is running, one waiting on a
/// semaphore (futex) is idle, one reading an empty pipe is blocked in `read`.
@Suite struct ThreadStatesTests {
  final class Flag: Sendable {
    let state = Lock((tid: Int32(0), stop: false))
  }

  @Test func threadsAreSeenRunningIdleAndBlockedWithTheirNames() throws {
    var pipeEnds: [Int32] = [0, 0]
    try #require(pipe(&pipeEnds) == 0)
    defer {
      close(pipeEnds[0])
    }
    let spinner = Flag()
    let sleeper = Flag()
    let reader = Flag()
    let semaphore = DispatchSemaphore(value: 0)
    let readEnd = pipeEnds[0]
    Thread {
      ThreadName.set("test-spinner")
      spinner.state.withLock { $0.tid = squeeze_thread_id() }
      while !spinner.state.withLock({ $0.stop }) {}
    }.start()
    Thread {
      ThreadName.set("test-sleeper")
      sleeper.state.withLock { $0.tid = squeeze_thread_id() }
      semaphore.wait()
    }.start()
    Thread {
      ThreadName.set("test-reader")
      reader.state.withLock { $0.tid = squeeze_thread_id() }
      var byte: UInt8 = 0
      _ = read(readEnd, &byte, 1)
    }.start()
    defer {
      spinner.state.withLock { $0.stop = true }
      semaphore.signal()
      var byte: UInt8 = 1
      _ = write(pipeEnds[1], &byte, 1)
      close(pipeEnds[1])
    }
    var states = ThreadStates()
    var seen: [String: ThreadStates.Reading] = [:]
    var names: [Int32: String] = [:]
    for _ in 0..<200 {
      usleep(10_000)
      let (readings, named) = states.read()
      for thread in named { names[thread.tid] = thread.name }
      for (flag, name) in [(spinner, "spinner"), (sleeper, "sleeper"), (reader, "reader")] {
        let tid = flag.state.withLock { $0.tid }
        if let reading = readings.first(where: { $0.tid == tid }) { seen[name] = reading }
      }
      if seen["spinner"]?.state == .running && seen["sleeper"]?.state == .idle
        && seen["reader"]?.state == .blocked
      {
        break
      }
    }
    #expect(seen["spinner"]?.state == .running)
    #expect(seen["sleeper"]?.state == .idle, "a futex wait is idle")
    #expect(seen["reader"]?.state == .blocked)
    #if arch(x86_64)
      #expect(seen["reader"]?.systemCall == 0, "blocked in read(2)")
    #endif
    #expect(names[spinner.state.withLock { $0.tid }] == "test-spinner", "named (15 bytes at most)")
    #expect(names[squeeze_thread_id()] != nil, "the reading thread is listed too")
    #expect(
      states.read().readings.first { $0.tid == squeeze_thread_id() }?.state == .idle,
      "the reader reports itself idle: it sleeps between samples")
  }
}
