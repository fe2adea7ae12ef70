import SqueezeTaskLog
import Testing

@testable import SqueezeCore

/// The progress line, the summary and the percent saved at the ends of `Int64`: a sparse
/// file on tmpfs can be 2^63 - 1 bytes long, and two of them are more than an `Int64` holds.
@Suite struct HugeTotalsTests {
  @Test func aSavedPercentOfEveryByteIsWrittenNotTrapped() {
    #expect(savedPercent(1, .max) == "-9.223372036854776e+20 %")
  }

  @Test func aProgressLineOverSparseFilesOfEveryByteIsDrawn() {
    // Everything done in half a second: the throughput is past Int64.
    let fast = ProgressLine.Totals(
      filesDone: 1, filesTotal: 2, bytesDone: .max, bytesTotal: .max, elapsed: 0.5)
    #expect(ProgressLine.plain(fast).contains("9.22 EB/9.22 EB, 9.22 EB/s"))
    // One byte in a long time of 2^63: the estimate is past Int.
    let slow = ProgressLine.Totals(
      filesDone: 0, filesTotal: 2, bytesDone: 1, bytesTotal: .max, elapsed: 1e9)
    #expect(ProgressLine.plain(slow).contains("ETA 2562047788015215:30:07"))
    #expect(!ProgressLine.bar(slow, columns: 120).isEmpty)
  }

  @Test func aSummaryOfEveryByteInHalfASecondIsWritten() {
    var results = RunResults()
    results.done = 2
    results.bytesIn = .max
    results.bytesOut = 1
    let line = RunSummary(
      operation: .compress, results: results, skipped: 0, discoveryFailures: 0,
      wallSeconds: 0.5, cpuSeconds: 0.4, hangs: HangReport()
    ).line
    #expect(line.contains("9.22 EB/s"), "\(line)")
  }
}
