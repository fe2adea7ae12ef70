import Foundation
import SqueezeSystem
import Testing

@testable import SqueezeCore
@testable import TestSupport

/// Progress counts this run's work: the numbers the reporter is given come from
/// the plan, which leaves up-to-date files out of the totals and counts them apart.
@Suite struct ProgressTotalsTests {
  /// Plans a run of `arguments` the way ``RunCommand`` does, without running it.
  static func plan(
    _ arguments: [String], mirror: String?, removesSources: Bool = false
  ) async throws -> RunPlan {
    try await RunPlanTests.plan(arguments, mirror: mirror, removesSources: removesSources).plan
  }

  @Test func aReRunAfterChangingOneBigFileOfManyIsMeasuredAgainstThatFileOnly() async throws {
    let folder = TemporaryFolder("totals")
    // A mirror of one copy, in-place outputs of another.
    let runs = [([folder.url("A/")], Optional(folder.url("M"))), ([folder.url("B")], nil)]
    for copy in ["A", "B"] {
      for index in 0..<300 {
        try folder.write(
          "\(copy)/d\(index % 6)/f\(index).txt", TestData.text(700 + index, seed: UInt64(index)))
      }
      try folder.write("\(copy)/big.bin", TestData.random(3 << 20))
    }
    for (arguments, mirror) in runs {
      let first = try SqueezeBinary.run((mirror.map { ["-o", $0] } ?? []) + arguments)
      #expect(first.status == 0, "\(first.stderrText)")
      let fresh = try await Self.plan(arguments, mirror: mirror)
      #expect(fresh.progressTotals == ProgressTotals(files: 0, bytes: 0, upToDate: 301))
    }
    for copy in ["A", "B"] {
      try folder.write("\(copy)/big.bin", TestData.random(3 << 20, seed: 99))
    }
    for (arguments, mirror) in runs {
      let plan = try await Self.plan(arguments, mirror: mirror)
      #expect(plan.progressTotals == ProgressTotals(files: 1, bytes: 3 << 20, upToDate: 300))
      let reporter = await ProgressReporter(
        style: .none, totals: plan.progressTotals, startTime: MonotonicClock.now())
      #expect(await reporter.totals == plan.progressTotals)
      // With --rm nothing is trusted to be current: every file is work again.
      let removing = try await Self.plan(arguments, mirror: mirror, removesSources: true)
      #expect(removing.progressTotals.files == 301 && removing.progressTotals.upToDate == 0)
    }
  }
}
