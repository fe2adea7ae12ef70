import SqueezeGzip
import SqueezeTaskLog
import Testing

@testable import SqueezeCore
@testable import SqueezeSystem

/// `--json` comes from one Codable schema, and a summary that cannot be encoded is an error,
/// never a stand-in object.
@Suite struct JSONSummaryTests {
  static func summary(
    mode: RunMode = .compress, wallSeconds: Double = 1.25, plan: [DryRun.Step]? = nil
  ) -> JSONSummary {
    var results = RunResults()
    results.done = 2
    results.bytesIn = 3000
    results.bytesOut = 1000
    results.failures = [("src/bad", .interrupted)]
    var discovery = DiscoveryResult()
    discovery.skipCounts = [.symbolicLink: 1]
    discovery.failures = [DiscoveryFailure(path: "gone", cause: "No such file or directory")]
    return JSONSummary(
      mode: mode, results: results, discovery: discovery, jobs: 2,
      cpus: CPUAllowance(affinityCPUs: 2, quota: nil), level: .default, engine: .fast,
      blockSize: 1 << 20, isolation: .nonisolated, wallSeconds: wallSeconds, cpuSeconds: 2,
      hangs: HangReport(hangs: 1, microhangs: 0, worstLag: 0.5), dryRun: plan != nil, plan: plan)
  }

  @Test func everyKeyAndValueComesFromTheOneSchema() throws {
    let text = try Self.summary().encoded()
    #expect(
      text
        == #"{"affinityCPUs":2,"blockSize":1048576,"bytesIn":3000,"bytesOut":1000,"cgroupQuotaCPUs":null,"#
        + #""cpuSeconds":2,"cpus":2,"deletionsSkipped":false,"diskFull":null,"dryRun":false,"engine":"fast","#
        + #""files":{"compressed":2,"deleted":0,"failed":{"count":2,"list":[{"cause":"No such file or directory","path":"gone"},"#
        + #"{"cause":"interrupted before it was done","path":"src\/bad"}]},"#
        + #""folders":{"made":0,"upToDate":0,"updated":0},"grown":0,"hardLinked":0,"#
        + #""keptChanged":0,"keptForeign":0,"keptHardLinked":0,"notDone":0,"removed":0,"selected":0,"#
        + #""skipped":{"byReason":{"symbolicLink":1},"total":1},"stored":0,"symbolicLinks":{"upToDate":0,"written":0},"#
        + #""upToDate":0},"hangs":1,"interrupted":false,"isolation":"nonisolated","jobs":2,"level":6,"#
        + #""microhangs":0,"mode":"compress","ratio":0.3333,"savedPercent":66.67,"schema":2,"wallSeconds":1.25,"#
        + #""worstLagMs":500}"#
        + "\n")
  }

  @Test func aDryRunsPlanIsAnArrayOfSteps() throws {
    let plan = [
      DryRun.Step(action: .compress, path: "a", output: "a.gz"),
      DryRun.Step(action: .skip, path: "l", cause: "a symbolic link", reason: .symbolicLink),
      DryRun.Step(action: .hardLink, path: "h", output: "h.gz", cause: "a.gz"),
    ]
    let text = try Self.summary(plan: plan).encoded()
    #expect(
      text.contains(
        #""plan":[{"action":"compress","output":"a.gz","path":"a"},{"action":"skip","path":"l","reason":"symbolicLink"},{"action":"hardLink","of":"a.gz","output":"h.gz","path":"h"}]"#
      ), "\(text)")
  }

  @Test(arguments: [Double.nan, .infinity])
  func aSummaryThatCannotBeEncodedIsAnErrorNotAnEmptyObject(wallSeconds: Double) {
    #expect(throws: JSONSummary.EncodingFailure.self) {
      try Self.summary(wallSeconds: wallSeconds).encoded()
    }
    do {
      _ = try Self.summary(wallSeconds: wallSeconds).encoded()
    } catch {
      #expect(error.description.hasPrefix("cannot encode the --json summary: "))
    }
  }
}
