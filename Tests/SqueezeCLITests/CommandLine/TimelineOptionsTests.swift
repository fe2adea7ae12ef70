import Testing

@testable import SqueezeCLI
@testable import SqueezeCore

@Suite struct TimelineOptionsTests {
  @Test func theDefaultPictureIsTheLogsNameWithSVG() {
    #expect(TimelineOptions(log: "runs/a.jsonl", output: nil).resolvedOutput == "runs/a.svg")
    #expect(TimelineOptions(log: "log", output: nil).resolvedOutput == "log.svg")
    #expect(TimelineOptions(log: "a.jsonl", output: "x.html").resolvedOutput == "x.html")
  }
}
