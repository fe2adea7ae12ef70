import Testing

@testable import SqueezeCore

/// Totals of file sizes and the figures made from them, at the ends of `Int64`: a sparse file
/// on tmpfs can be 2^63 - 1 bytes long, and two of them are more than an `Int64` holds.
@Suite struct SaturatingArithmeticTests {
  @Test(arguments: [
    (left: Int64.max, right: Int64(1), sum: Int64.max),
    (left: Int64.max, right: Int64.max, sum: Int64.max),
    (left: Int64.min, right: Int64(-1), sum: Int64.min),
    (left: Int64(40), right: Int64(2), sum: Int64(42)),
    (left: Int64.max, right: Int64.min, sum: Int64(-1)),
  ])
  func sumsHoldAtTheEnds(left: Int64, right: Int64, sum: Int64) {
    #expect(left.addingSaturated(right) == sum)
  }

  @Test(arguments: [
    (value: 1e300, result: Int64.max), (value: 0x1p63, result: Int64.max),
    (value: -0x1p63, result: Int64.min), (value: -1e300, result: Int64.min),
    (value: Double.infinity, result: Int64.max), (value: -Double.infinity, result: Int64.min),
    (value: Double.nan, result: Int64(0)), (value: -2.9, result: Int64(-2)),
    (value: 0x1p62, result: Int64(1) << 62),
  ])
  func doublesBecomeIntegersHeldAtTheEnds(value: Double, result: Int64) {
    #expect(Int64(saturating: value) == result)
    #expect(Int(saturating: value) == Int(result))
  }

  @Test func figuresFromHugeTotalsAreWrittenNotTrapped() {
    #expect(ByteFormat.fixed(1e300, 1) == "1e+300")
    #expect(ByteFormat.fixed(-9.3e18, 0) == "-9.3e+18")
    #expect(ByteFormat.fixed(12.345, 2) == "12.35", "ordinary values keep their decimals")
    #expect(ByteFormat.clock(1e300) == "2562047788015215:30:07")
    #expect(ByteFormat.clock(.infinity) == "--:--")
    #expect(savedPercent(1, .max) == "-9.223372036854776e+20 %")
    #expect(ByteFormat.percent(.max, of: 1) == "9.223372036854776e+20 %")
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
