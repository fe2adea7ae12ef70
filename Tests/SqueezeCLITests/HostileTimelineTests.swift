import Foundation
import Glibc
import SqueezeCore
import TestSupport
import Testing

/// `squeeze timeline` run on logs written to hurt it: it fails with a message naming the line
/// (status 1), or draws.
@Suite struct HostileTimelineTests {
  static let start =
    #"{"event":"start","t":0,"schema":2,"version":"t","arch":"x86_64","isolation":"nonisolated","jobs":2,"level":6,"cpus":2,"files":1,"bytes":10,"blockSize":131072}"#

  @Test(arguments: [
    (
      line: #"{"event":"task","t":1e13,"id":1,"state":"running","thread":5}"#,
      message: #"line 3: "t" is out of range (1e+13; expected 0 to 1e+9)"#
    ),
    (
      line: #"{"event":"hang","t":0.5,"durationMs":1e300,"severity":"hang"}"#,
      message: #"line 3: "durationMs" is out of range (1e+300; expected 0 to 1e+12)"#
    ),
  ])
  func aNumberOutOfRangeFailsWithStatus1NamingTheLogAndTheLine(line: String, message: String)
    throws
  {
    let folder = TemporaryFolder("hostile-log")
    let log = try folder.write(
      "run.jsonl",
      text: [Self.start, #"{"event":"task","t":0,"id":1,"file":"a","state":"enqueued"}"#, line]
        .map { $0 + "\n" }.joined())
    for output in ["run.svg", "run.html", "run.json"] {
      let result = try SqueezeBinary.run(["timeline", log, "-o", folder.url(output)])
      #expect(result.status == 1, "\(output): \(result.stderrText)")
      #expect(result.stderrText == "squeeze: '\(log)': \(message)\n")
      #expect(!FileManager.default.fileExists(atPath: folder.url(output)))
    }
  }
}
