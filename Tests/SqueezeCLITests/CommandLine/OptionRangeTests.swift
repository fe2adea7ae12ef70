import SqueezeSystem
import Testing

@testable import SqueezeCLI
@testable import SqueezeCore

/// Every option that takes a number, at sizes past what an `Int64` holds and at its edges: a
/// usage error that names the option and the accepted range, never a trap.
@Suite struct OptionRangeTests {
  /// The reason given for a value, or nil when the command line parsed.
  static func invalidValue(_ arguments: [String]) -> (option: String, reason: String)? {
    guard case .failure(let error) = CommandLineParser.parse(arguments),
      case .invalidValue(_, let option, let reason) = error.underlying
    else { return nil }
    return (option, reason)
  }

  @Test(arguments: [
    (
      arguments: ["--older-than", "999999999999999d", "x"], option: "--older-than <duration>",
      range: "from 1ns to 1000000d"
    ),
    (
      arguments: ["--older-than", "1000001d", "x"], option: "--older-than <duration>",
      range: "from 1ns to 1000000d"
    ),
    (
      arguments: ["--older-than=99999999999999999999999999999999999999999s", "x"],
      option: "--older-than <duration>", range: "from 1ns to 1000000d"
    ),
    (
      arguments: ["--sample-interval", "999999999999999d", "x"],
      option: "--sample-interval <duration>", range: "from 100us to 60s"
    ),
    (
      arguments: ["--block-size", "99999999999999999999G", "x"], option: "--block-size <size>",
      range: "from 32K to 64M"
    ),
    (
      arguments: ["--block-size", "9223372036854775807", "x"], option: "--block-size <size>",
      range: "from 32K to 64M"
    ),
    (
      arguments: ["--block-size", "9007199254740992K", "x"], option: "--block-size <size>",
      range: "from 32K to 64M"
    ),
    (
      arguments: ["--jobs", "99999999999999999999", "x"], option: "--jobs <n>",
      range: "from 1 to 4096"
    ),
    (
      arguments: ["-j", "-9223372036854775808", "x"], option: "--jobs <n>",
      range: "from 1 to 4096"
    ),
    (
      arguments: ["-p", "9223372036854775808", "x"], option: "--processes <n>",
      range: "from 1 to 4096"
    ),
    (
      arguments: ["--level", "99999999999999999999", "x"], option: "--level <n>",
      range: "from 1 to 12"
    ),
    (
      arguments: ["-99999999999999999999", "x"], option: "-99999999999999999999",
      range: "from 1 to 12"
    ),
    (
      arguments: ["--shard", "99999999999999999999/99999999999999999999", "x"],
      option: "--shard <k>/<n>", range: "1 <= k <= n"
    ),
    (
      arguments: ["--shard", "1/-9223372036854775808", "x"], option: "--shard <k>/<n>",
      range: "1 <= k <= n"
    ),
  ])
  func aNumberPastTheRangeNamesTheOptionAndTheRange(
    arguments: [String], option: String, range: String
  ) throws {
    let invalid = try #require(Self.invalidValue(arguments), "\(arguments) parsed")
    #expect(invalid.option == option)
    #expect(invalid.reason.contains(range), "\(invalid.reason)")
  }

  /// `--help` and the range error write a duration option's bounds the same way: 60 seconds
  /// is `60s` in both, never `60s` in one and `1m` in the other.
  @Test(arguments: [
    (long: "older-than", tooBig: "1000001d", range: "1ns to 1000000d"),
    (long: "sample-interval", tooBig: "61s", range: "100us to 60s"),
  ])
  func theHelpAndTheRangeErrorWriteTheBoundsAlike(long: String, tooBig: String, range: String)
    throws
  {
    let help = try #require(OptionTable.long(long)).help
    #expect(help.contains("; \(range))."), "\(help)")
    let invalid = try #require(Self.invalidValue(["--\(long)", tooBig, "x"]))
    #expect(invalid.reason.hasPrefix("expected a duration from \(range), such as"), "\(invalid)")
  }

  @Test func theOlderThanMessageHasSwiftArgumentParsersShape() {
    #expect(
      CommandLineParser.parse(["--older-than", "999999999999999d", "x"])
        == .failure(
          .invalidValue(
            "999999999999999d", option: "--older-than <duration>",
            reason: "expected a duration from 1ns to 1000000d, such as 90s, 30m, 12h or 7d")))
  }

  @Test func theEdgesOfEachRangeAreAccepted() throws {
    func options(_ arguments: [String]) throws -> Options {
      guard case .success(.run(let options)) = CommandLineParser.parse(arguments + ["x"]) else {
        throw ParseFailed(arguments: arguments)
      }
      return options
    }
    #expect(try options(["--older-than", "1000000d"]).olderThan == 86_400_000_000)
    #expect(try options(["--older-than", "1ns"]).olderThan == 1e-9)
    #expect(try options(["--task-log", "t", "--sample-interval", "60s"]).sampleInterval == 60)
    #expect(
      try options(["--task-log", "t", "--sample-interval", "100us"]).sampleInterval == 0.0001)
    #expect(try options(["--block-size", "32K"]).blockSize == 32 << 10)
    #expect(try options(["--block-size", "64M"]).blockSize == 64 << 20)
    #expect(try options(["-j", "4096"]).jobs == 4096)
    #expect(try options(["-j", "+1"]).jobs == 1)
    #expect(
      try options(["--shard", "9223372036854775807/9223372036854775807"]).shard
        == Shard(index: .max, count: .max))
  }

  /// The selection an accepted `--older-than` makes: its cutoff is computed, even for the
  /// longest duration accepted.
  @Test func theLongestOlderThanGivesACutoffBeforeNow() throws {
    guard
      case .success(.run(let options)) = CommandLineParser.parse(
        ["--older-than", "1000000d", "x"])
    else {
      Issue.record("did not parse")
      return
    }
    let cutoff = try #require(
      RunConfiguration.selection(from: options, now: .now).modifiedBefore)
    #expect(cutoff < Timestamp.now)
    #expect(Timestamp.now.seconds - cutoff.seconds >= 86_400_000_000)
  }

  private struct ParseFailed: Error {
    var arguments: [String]
  }

  @Test(arguments: [
    (seconds: 1e-9, text: "1ns"), (seconds: 0.0001, text: "100us"), (seconds: 0.005, text: "5ms"),
    (seconds: 60, text: "60s"), (seconds: 90, text: "90s"),
    (seconds: 120, text: "2m"), (seconds: 3600, text: "60m"), (seconds: 86400, text: "24h"),
    (seconds: 1, text: "1s"),
    (seconds: 86_400_000_000, text: "1000000d"),
  ])
  func durationsAreWrittenInTheLongestWholeUnitButOneOfABigUnitInTheNext(
    seconds: Double, text: String
  ) {
    #expect(ValueParsers.durationText(seconds) == text)
    #expect(ValueParsers.duration(text) == seconds)
  }

  @Test func durationsRefuseSignsExponentsAndNonASCIIDigits() {
    for text in [
      "+5s", "-5s", "1e3s", "0x10s", "nans", "infs", "١s", "5.5.5s", ".s", "0s", "0.0ns",
    ] {
      #expect(ValueParsers.duration(text) == nil, "\(text)")
    }
    #expect(ValueParsers.duration(".5s") == 0.5)
    #expect(ValueParsers.duration("5µs") == 5e-6)
  }
}

/// Times at the ends of what a file system holds, and the arithmetic on them.
@Suite struct TimestampArithmeticTests {
  @Test(arguments: [
    (
      from: Timestamp(seconds: 100, nanoseconds: 500), duration: 1.5,
      expected: Timestamp(seconds: 98, nanoseconds: 500_000_500)
    ),
    (
      from: Timestamp(seconds: .min + 5, nanoseconds: 0), duration: 86_400,
      expected: Timestamp.earliest
    ),
    (
      from: Timestamp(seconds: .min, nanoseconds: 0), duration: 1e-9,
      expected: Timestamp.earliest
    ),
    (
      from: Timestamp(seconds: .max, nanoseconds: 999_999_999), duration: 9.3e18,
      expected: Timestamp(seconds: -76_627_963_145_224_193, nanoseconds: 999_999_999)
    ),
    (
      from: Timestamp(seconds: 0, nanoseconds: 0), duration: 0x1p63,
      expected: Timestamp.earliest
    ),
    (
      from: Timestamp(seconds: -1, nanoseconds: 0), duration: 0x1p63,
      expected: Timestamp.earliest
    ),
    (
      from: Timestamp(seconds: 1, nanoseconds: 0), duration: 1e300,
      expected: Timestamp.earliest
    ),
    (
      from: Timestamp(seconds: 7, nanoseconds: 1), duration: .infinity,
      expected: Timestamp(seconds: 7, nanoseconds: 1)
    ),
    (
      from: Timestamp(seconds: 7, nanoseconds: 1), duration: -.infinity,
      expected: Timestamp(seconds: 7, nanoseconds: 1)
    ),
  ])
  func subtractingADurationHoldsAtTheEarliestTime(
    from: Timestamp, duration: Double, expected: Timestamp
  ) {
    #expect(from.subtracting(seconds: duration) == expected)
  }

  @Test func secondsBetweenTimesAtOppositeEndsHold() {
    let latest = Timestamp(seconds: .max, nanoseconds: 999_999_999)
    #expect(latest.seconds(since: .earliest) == .max)
    #expect(Timestamp.earliest.seconds(since: latest) == .min)
    #expect(
      Timestamp(seconds: 10, nanoseconds: 0).seconds(since: .init(seconds: 4, nanoseconds: 9)) == 6)
  }
}
