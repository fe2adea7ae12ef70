import Foundation
import Glibc
import TestSupport
import Testing

/// Numbers from outside at the ends of their types, through the built binary: options past
/// what an `Int64` holds, and never a signal (Swift's overflow trap is SIGILL, status 132).
@Suite struct HostileNumberTests {
  @Test func olderThanPastAnInt64IsAUsageErrorNotATrap() throws {
    let folder = TemporaryFolder("older")
    try folder.write("a.txt", text: "alpha")
    let result = try SqueezeBinary.run(["--older-than", "999999999999999d", folder.url("a.txt")])
    #expect(result.signal == nil, "ended by signal \(result.signal ?? 0)")
    #expect(result.status == 64)
    #expect(
      result.stderrText.hasPrefix(
        "Error: The value '999999999999999d' is invalid for '--older-than <duration>': expected a duration from 1ns to 1000000d, such as 90s, 30m, 12h or 7d\n"
      ), "\(result.stderrText)")
    #expect(result.stderrText.contains("See 'squeeze --help' for more information."))
    #expect(!FileManager.default.fileExists(atPath: folder.url("a.txt.gz")))
  }

  @Test(arguments: [
    (
      arguments: ["--older-than", "999999999999999d"], option: "--older-than <duration>",
      range: "from 1ns to 1000000d"
    ),
    (
      arguments: ["--older-than=1e400d"], option: "--older-than <duration>",
      range: "from 1ns to 1000000d"
    ),
    (
      arguments: ["--sample-interval", "999999999999999d"], option: "--sample-interval <duration>",
      range: "from 100us to 1m"
    ),
    (
      arguments: ["--block-size", "99999999999999999999G"], option: "--block-size <size>",
      range: "from 32K to 64M"
    ),
    (
      arguments: ["--block-size", "8589934592G"], option: "--block-size <size>",
      range: "from 32K to 64M"
    ),
    (arguments: ["--jobs", "99999999999999999999"], option: "--jobs <n>", range: "from 1 to 4096"),
    (
      arguments: ["-p", "-9223372036854775809"], option: "--processes <n>", range: "from 1 to 4096"
    ),
    (arguments: ["--level", "99999999999999999999"], option: "--level <n>", range: "from 1 to 12"),
    (arguments: ["-99999999999999999999"], option: "-99999999999999999999", range: "from 1 to 12"),
    (
      arguments: ["--shard", "99999999999999999999/1"], option: "--shard <k>/<n>",
      range: "1 <= k <= n"
    ),
  ])
  func everyNumericOptionPastItsRangeIsStatus64NamingTheOption(
    arguments: [String], option: String, range: String
  ) throws {
    let folder = TemporaryFolder("range")
    try folder.write("a.txt", text: "alpha")
    let result = try SqueezeBinary.run(arguments + [folder.url("a.txt")])
    #expect(result.signal == nil, "\(arguments): ended by signal \(result.signal ?? 0)")
    #expect(result.status == 64, "\(arguments): \(result.stderrText)")
    #expect(
      result.stderrText.hasPrefix("Error: The value '"), "\(arguments): \(result.stderrText)")
    #expect(result.stderrText.contains("' is invalid for '\(option)': expected "))
    #expect(result.stderrText.contains(range), "the range is named: \(result.stderrText)")
  }
}
