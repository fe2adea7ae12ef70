import Glibc
import SqueezeGzip
import SqueezeSystem
import SqueezeTaskLog
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

@Suite struct NarrowBarTests {
  static let cases: [ProgressLine.Totals] = [
    ProgressLine.Totals(
      filesDone: 1234, filesTotal: 5678, bytesDone: 56_700_000, bytesTotal: 120_000_000,
      elapsed: 1.5),
    ProgressLine.Totals(
      filesDone: 0, filesTotal: 1, bytesDone: 3, bytesTotal: 3, elapsed: 0.004),
    ProgressLine.Totals(
      filesDone: 123_456, filesTotal: 1_234_567, bytesDone: 987_654_321_000,
      bytesTotal: 999_999_999_999, elapsed: 4000),
  ]

  /// Every field the line can show, whole.
  static func fields(_ totals: ProgressLine.Totals) -> Set<String> {
    Set(ProgressLine.plain(totals).dropFirst("squeeze: ".count).components(separatedBy: ", "))
  }

  @Test(arguments: Array(1...100))
  func aNarrowTerminalDropsWholeFieldsAndNeverCutsANumber(columns: Int) {
    for totals in Self.cases {
      let line = ProgressLine.bar(totals, columns: columns)
      #expect(line.count <= max(0, columns - 1), "\(columns): \(line)")
      var details = line
      if details.hasPrefix("["), let end = details.firstIndex(of: "]") {
        details = String(details[details.index(end, offsetBy: 2)...])
      }
      guard !details.isEmpty else { continue }
      if details.hasSuffix(" %") && !details.contains("files") {
        #expect(Int(details.dropLast(2)) != nil, "a whole percentage: \(details)")
        continue
      }
      for field in details.components(separatedBy: "  ") {
        #expect(Self.fields(totals).contains(field), "\(columns) columns: cut field '\(field)'")
      }
      #expect(details.contains(" files"), "the file count stays longest: \(details)")
    }
  }

  @Test func fiftyColumnsKeepTheETAWhole() {
    let totals = ProgressLine.Totals(
      filesDone: 1234, filesTotal: 5678, bytesDone: 56_700_000, bytesTotal: 120_000_000,
      elapsed: 1.5)
    #expect(ProgressLine.bar(totals, columns: 50) == "1,234/5,678 files  56.7 MB/120 MB  ETA 0:02")
    #expect(ProgressLine.bar(totals, columns: 30) == "1,234/5,678 files  ETA 0:02")
    #expect(ProgressLine.bar(totals, columns: 12) == "47 %")
    #expect(ProgressLine.bar(totals, columns: 3) == "")
  }
}

@Suite struct RunSummaryTests {
  static func summary(
    _ operation: Operation, done: Int, bytesIn: Int64, bytesOut: Int64, upToDate: Int = 0,
    grown: Int = 0
  ) -> String {
    var results = RunResults()
    results.done = done
    results.bytesIn = bytesIn
    results.bytesOut = bytesOut
    results.upToDate = upToDate
    results.grown = grown
    return RunSummary(
      operation: operation, results: results, skipped: 0, discoveryFailures: 0,
      wallSeconds: 0.5, cpuSeconds: 0.4, hangs: HangReport()
    ).line
  }

  @Test func idleAndEmptyRunsSayWhatHappenedWithoutZeros() {
    #expect(
      Self.summary(.compress, done: 0, bytesIn: 0, bytesOut: 0, upToDate: 3).hasPrefix(
        "squeeze: nothing compressed, 0.500 s, 3 up to date"))
    #expect(
      Self.summary(.compress, done: 1, bytesIn: 0, bytesOut: 20).hasPrefix(
        "squeeze: 1 empty file compressed, 0.500 s"))
    #expect(
      Self.summary(.decompress, done: 2, bytesIn: 40, bytesOut: 0).hasPrefix(
        "squeeze: 2 empty files decompressed, 0.500 s"))
    #expect(
      Self.summary(.test, done: 0, bytesIn: 0, bytesOut: 0).hasPrefix(
        "squeeze: nothing tested, 0.500 s"))
  }

  /// `-t` over files that all failed their test tested them: the line says none passed,
  /// not "nothing tested", which reads as if nothing had been looked at.
  @Test func aTestRunWhoseFilesAllFailedSaysNoneTestedOK() {
    var results = RunResults()
    results.failures = ["a.gz", "b.gz", "c.gz"].map {
      (path: RawPath($0), failure: FileFailure.badGzip(.badMagic))
    }
    let line = RunSummary(
      operation: .test, results: results, skipped: 0, discoveryFailures: 0,
      wallSeconds: 0.5, cpuSeconds: 0.4, hangs: HangReport()
    ).line
    #expect(line.hasPrefix("squeeze: no file tested OK, 0.500 s, 3 failed"), "\(line)")
    // A path that does not exist is no file tested: nothing was.
    let missing = RunSummary(
      operation: .test, results: RunResults(), skipped: 0, discoveryFailures: 1,
      wallSeconds: 0.5, cpuSeconds: 0.4, hangs: HangReport()
    ).line
    #expect(missing.hasPrefix("squeeze: nothing tested, 0.500 s, 1 failed"), "\(missing)")
  }

  /// A run stopped early says how many files it did not do, in the same count the full
  /// disk's own message gives; a run stopped after its last file says only that it stopped.
  @Test func aStoppedRunSaysHowManyFilesWereNotDone() throws {
    var results = RunResults()
    results.done = 2
    results.bytesIn = 100
    results.bytesOut = 50
    results.interrupted = true
    func line(notDone: Int) -> String {
      RunSummary(
        operation: .compress, results: results, skipped: 0, discoveryFailures: 0,
        wallSeconds: 0.5, cpuSeconds: 0.4, hangs: HangReport(), notDone: notDone
      ).line
    }
    #expect(line(notDone: 16_998).hasSuffix(", interrupted (16,998 files not done)"))
    #expect(line(notDone: 1).hasSuffix(", interrupted (1 file not done)"))
    #expect(line(notDone: 0).hasSuffix(", interrupted"))
    results.fullDisk = FullDisk(
      file: "x", failure: .cannotWriteOutput("x.gz", SystemError(code: ENOSPC)))
    #expect(line(notDone: 2).hasSuffix(", stopped: no room left (2 files not done)"))
    // A run that was not stopped says nothing of files not done.
    results.interrupted = false
    results.fullDisk = nil
    #expect(!line(notDone: 3).contains("not done"))
  }

  @Test func grownFilesAreCountedAndAGrownTotalIsNotANegativeSaving() {
    let line = Self.summary(.compress, done: 2, bytesIn: 100, bytesOut: 150, grown: 2)
    #expect(
      line.hasPrefix(
        "squeeze: 2 files compressed, 100 B → 150 B (grew by 50 B), 0.500 s, 200 B/s, 2 grew"))
    #expect(
      Self.summary(.compress, done: 1, bytesIn: 1000, bytesOut: 300).hasPrefix(
        "squeeze: 1 file compressed, 1.00 kB → 300 B (70.0 % saved), 0.500 s, 2.00 kB/s"))
  }

  @Test(arguments: [(label: "everyday", shows: false), (label: "diagnostics", shows: true)])
  func theMainActorIsSpokenOfOnlyWhenDiagnosticsWereAskedFor(label: String, shows: Bool) {
    var results = RunResults()
    results.done = 1
    results.bytesIn = 1000
    results.bytesOut = 300
    let line = RunSummary(
      operation: .compress, results: results, skipped: 0, discoveryFailures: 0,
      wallSeconds: 0.5, cpuSeconds: 0.4, hangs: HangReport(hangs: 1, microhangs: 2, worstLag: 0.6),
      showsMainActor: shows
    ).line
    let tail = "; main actor: worst lag 600 ms, 1 hang, 2 microhangs"
    #expect(line.hasSuffix(tail) == shows, "\(label): \(line)")
    #expect(line.contains("hang") == shows, "\(label): \(line)")
  }

  @Test func storedFilesAreSaidApartFromFilesThatGrew() {
    var results = RunResults()
    results.done = 4
    results.bytesIn = 200_000
    results.bytesOut = 150_000
    results.grown = 3
    results.stored.add(bytesIn: 1000, bytesOut: 1023)
    results.stored.add(bytesIn: 70_000, bytesOut: 70_028)
    let line = RunSummary(
      operation: .compress, results: results, skipped: 0, discoveryFailures: 0,
      wallSeconds: 0.5, cpuSeconds: 0.4, hangs: HangReport()
    ).line
    #expect(
      line.hasSuffix(", 1 grew, 2 already compressed, stored (+23 B to 28 B each)"), "\(line)")
    var same = StoredFiles()
    same.add(bytesIn: 10, bytesOut: 33)
    same.add(bytesIn: 20, bytesOut: 43)
    #expect(same.phrase == "2 already compressed, stored (+23 B each)")
    #expect(same.grown == 2)
    #expect(StoredFiles().phrase == nil)
    #expect(
      RunSummary.compressedLine("x.gz", bytesIn: 1000, bytesOut: 1023, stored: true)
        == "x.gz: 1.00 kB → 1.02 kB, already compressed, stored (+23 B)")
  }

  @Test func foldersMadeAndUpdatedAreSaidOnlyWhenThereAreSome() {
    var results = RunResults()
    results.upToDate = 3
    results.foldersUpToDate = 5
    func line() -> String {
      RunSummary(
        operation: .compress, results: results, skipped: 0, discoveryFailures: 0,
        wallSeconds: 0.5, cpuSeconds: 0.4, hangs: HangReport()
      ).line
    }
    // Folders already right, or none at all (a compression in place): not a word of them.
    #expect(line() == "squeeze: nothing compressed, 0.500 s, 3 up to date")
    results.foldersMade = 1
    results.foldersUpdated = 2
    #expect(
      line()
        == "squeeze: nothing compressed, 0.500 s, 3 up to date, 1 folder made, 2 folders updated")
    results.foldersMade = 1_200
    results.foldersUpdated = 1
    #expect(line().hasSuffix(", 1,200 folders made, 1 folder updated"), "\(line())")
  }

  @Test func verboseLinesNameGrownAndEmptyFiles() {
    #expect(
      RunSummary.compressedLine("a", bytesIn: 2, bytesOut: 30) == "a: 2 B → 30 B, grew by 28 B")
    #expect(RunSummary.compressedLine("e", bytesIn: 0, bytesOut: 20) == "e: 0 B → 20 B (empty)")
    #expect(
      RunSummary.compressedLine("t", bytesIn: 1000, bytesOut: 300)
        == "t: 1.00 kB → 300 B, 70.0 % saved")
  }
}
