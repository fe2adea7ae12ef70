import Glibc
import Testing

@testable import SqueezeCore

@Suite struct ProgressTests {
  @Test(arguments: [
    (bytes: Int64(0), text: "0 B"),
    (bytes: Int64(999), text: "999 B"),
    (bytes: Int64(1000), text: "1.00 kB"),
    (bytes: Int64(1234), text: "1.23 kB"),
    (bytes: Int64(45_600_000), text: "45.6 MB"),
    (bytes: Int64(789_000_000_000), text: "789 GB"),
  ])
  func bytesUseDecimalUnitsWithThreeDigits(bytes: Int64, text: String) {
    #expect(ByteFormat.format(bytes) == text)
  }

  @Test func countsAndClocks() {
    #expect(ByteFormat.count(1_234_567) == "1,234,567")
    #expect(ByteFormat.count(12) == "12")
    #expect(ByteFormat.clock(75) == "1:15")
    #expect(ByteFormat.clock(3725) == "1:02:05")
    #expect(ByteFormat.percent(1, of: 3) == "33.3 %")
  }

  @Test(arguments: [20, 40, 80, 200])
  func theBarNeverFillsTheLastColumn(columns: Int) {
    let totals = ProgressLine.Totals(
      filesDone: 1234, filesTotal: 5678, bytesDone: 56_700_000, bytesTotal: 120_000_000,
      elapsed: 1.5)
    let line = ProgressLine.bar(totals, columns: columns)
    #expect(line.count <= columns - 1)
    if columns >= 80 {
      #expect(line.contains("1,234/5,678 files"))
      #expect(line.contains("56.7 MB/120 MB"))
      #expect(line.contains("37.8 MB/s"))
      #expect(line.contains("ETA 0:02"))
      #expect(line.hasPrefix("["))
    }
  }

  @Test func theFeedCoalescesPostsIntoFewWakeups() async {
    let feed = ProgressFeed(minimumInterval: 60)
    for _ in 0..<10_000 { feed.addBytes(3) }
    feed.fileDone(failed: false)
    feed.fileDone(failed: true)
    feed.message("one")
    feed.finish()
    var wakeups = 0
    for await _ in feed.wakeups { wakeups += 1 }
    #expect(wakeups == 1)
    let snapshot = feed.drain()
    #expect(snapshot.bytesDone == 30_000)
    #expect(snapshot.filesDone == 2)
    #expect(snapshot.filesFailed == 1)
    #expect(snapshot.messages == ["one"])
    #expect(feed.drain().messages.isEmpty)
  }
}

@Suite struct ProgressReporterTests {
  /// Reads what was written to the pipe so far.
  static func drain(_ descriptor: Int32) -> String {
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
      let count = read(descriptor, &buffer, buffer.count)
      if count <= 0 { break }
      bytes.append(contentsOf: buffer[..<count])
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  @MainActor
  @Test func plainProgressWritesALineEveryIntervalForLogs() throws {
    var ends: [Int32] = [0, 0]
    #expect(pipe(&ends) == 0)
    defer {
      close(ends[0])
      close(ends[1])
    }
    _ = fcntl(ends[0], F_SETFL, O_NONBLOCK)
    let reporter = ProgressReporter(
      style: .plain, output: TextOutput(descriptor: ends[1]), filesTotal: 10, bytesTotal: 1000,
      startTime: MonotonicClock.now() - 1, plainInterval: 0)
    #expect(reporter.display == .plain)
    var snapshot = ProgressFeed.Snapshot()
    snapshot.filesDone = 4
    snapshot.bytesDone = 400
    snapshot.messages = ["squeeze: x: an error"]
    reporter.show(snapshot)
    let text = Self.drain(ends[0])
    #expect(text.contains("squeeze: x: an error\n"))
    #expect(text.contains("squeeze: 4/10 files, 400 B/1.00 kB, "))
    #expect(!text.contains("\u{1B}["), "no terminal control in plain lines")
  }

  @MainActor
  @Test func theBarIsDrawnOnlyOnATerminal() {
    var ends: [Int32] = [0, 0]
    #expect(pipe(&ends) == 0)
    defer {
      close(ends[0])
      close(ends[1])
    }
    let reporter = ProgressReporter(
      style: .auto, output: TextOutput(descriptor: ends[1]), filesTotal: 1, bytesTotal: 1,
      startTime: MonotonicClock.now())
    #expect(reporter.display == .none)
    let forced = ProgressReporter(
      style: .bar, output: TextOutput(descriptor: ends[1]), filesTotal: 1, bytesTotal: 1,
      startTime: MonotonicClock.now())
    #expect(forced.display == .bar, "--progress bar draws it wherever stderr goes")
  }
}
