import SqueezeEngines
import SqueezeGzip
import Testing

@testable import SqueezeCLI
@testable import SqueezeCore

@Suite struct CommandLineParserTests {
  private func options(_ arguments: [String]) throws -> Options {
    guard case .success(.run(let options)) = CommandLineParser.parse(arguments) else {
      throw ParseFailed(result: "\(CommandLineParser.parse(arguments))")
    }
    return options
  }

  private struct ParseFailed: Error {
    var result: String
  }

  @Test func pathsOnlyGiveDefaults() throws {
    let parsed = try options(["a", "b/c"])
    #expect(parsed.paths == ["a", "b/c"])
    #expect(parsed.level == .default)
    #expect(parsed.jobs == nil)
    #expect(parsed.output == nil)
    #expect(parsed.verbosity == .normal)
  }

  @Test(arguments: [
    ["-o", "out", "-j", "3", "x"],
    ["--output", "out", "--jobs", "3", "x"],
    ["--output=out", "--jobs=3", "x"],
    ["-oout", "-j3", "x"],
    ["x", "-j", "3", "-o", "out"],
  ])
  func valuesCanBeSeparateAttachedOrAfterAnEqualsSign(arguments: [String]) throws {
    let parsed = try options(arguments)
    #expect(parsed.output == "out")
    #expect(parsed.jobs == 3)
    #expect(parsed.paths == ["x"])
  }

  @Test func shortFlagsCombine() throws {
    let parsed = try options(["-fv9", "x"])
    #expect(parsed.force)
    #expect(parsed.verbosity == .verbose)
    #expect(parsed.level == .best)
  }

  @Test func doubleDashEndsOptionsAndDashIsAPath() throws {
    let parsed = try options(["-c", "--", "-v", "-"])
    #expect(parsed.paths == ["-v", "-"])
    #expect(parsed.verbosity == .normal)
  }

  @Test func levelsFromDigitsAndLevelOption() throws {
    #expect(try options(["-1", "x"]).level == .fastest)
    #expect(try options(["--level", "7", "x"]).level == CompressionLevel(7))
    #expect(try options(["-9", "-3", "x"]).level == CompressionLevel(3))
    // Digits after one dash are one number, as pigz reads them; letters around them are flags.
    #expect(try options(["-11", "x"]).level == CompressionLevel(11))
    #expect(try options(["-12", "x"]).level == CompressionLevel(12))
    let combined = try options(["-v12f", "x"])
    #expect(
      combined.level == CompressionLevel(12) && combined.verbosity == .verbose && combined.force)
    #expect(try options(["--fast", "x"]).level == .fastest)
    #expect(try options(["--best", "x"]).level == .best)
  }

  @Test func theLevelIsCheckedAgainstTheEngineWhateverTheOrder() throws {
    #expect(try options(["--engine", "fast", "--level", "11", "x"]).level == CompressionLevel(11))
    #expect(try options(["--level", "11", "--engine", "fast", "x"]).engine == .fast)
    #expect(
      CommandLineParser.parse(["--level", "11", "--engine", "zlib", "x"])
        == CommandLineParser.parse(["--engine", "zlib", "--level", "11", "x"]))
    #expect(
      UsageError.levelNeedsOtherEngine(11, engine: .zlib).description
        == "level 11 needs --engine fast (zlib: 1 to 9)")
    #expect(try options(["--engine", "zlib", "-9", "x"]).level == .best)
  }

  @Test func theChunkSizeIsTheEnginesUnlessGiven() throws {
    #expect(try options(["x"]).chunkSize == 1 << 20)
    #expect(try options(["--engine", "zlib", "x"]).chunkSize == 128 << 10)
    #expect(try options(["--engine", "zlib", "--block-size", "256K", "x"]).chunkSize == 256 << 10)
    #expect(try options(["--block-size", "64K", "--engine", "fast", "x"]).chunkSize == 64 << 10)
  }

  @Test(arguments: [
    (arguments: ["--frobnicate", "x"], error: UsageError.unknownOption("--frobnicate")),
    (arguments: ["-Z", "x"], error: .unknownOption("-Z")),
    (arguments: ["x", "--jobs"], error: .missingValue(option: "--jobs <n>")),
    (
      arguments: ["-j", "abc", "x"],
      error: .invalidValue(
        "abc", option: "--jobs <n>", reason: "expected a whole number from 1 to 4096")
    ),
    (
      arguments: ["-j", "0", "x"],
      error: .invalidValue(
        "0", option: "--jobs <n>", reason: "expected a whole number from 1 to 4096")
    ),
    (arguments: ["--level=13", "x"], error: .invalidLevel(13)),
    (arguments: ["-0", "x"], error: .invalidLevel(0)),
    (arguments: ["-13", "x"], error: .invalidLevel(13)),
    (
      arguments: ["--level", "11", "--engine", "zlib", "x"],
      error: .levelNeedsOtherEngine(11, engine: .zlib)
    ),
    (
      arguments: ["--engine", "zlib", "-10", "x"], error: .levelNeedsOtherEngine(10, engine: .zlib)
    ),
    (
      arguments: ["--engine", "lzma", "x"],
      error: .invalidValue("lzma", option: "--engine <engine>", reason: "expected fast or zlib")
    ),
    (arguments: ["--quiet=yes", "x"], error: .unexpectedValue(option: "--quiet")),
    (arguments: ["--rm", "-c", "x"], error: .conflict("--rm", "--stdout")),
    (arguments: ["-c", "-o", "out", "x"], error: .conflict("--stdout", "--output")),
    (arguments: ["--rm", "-k", "x"], error: .conflict("--rm", "--keep")),
    (arguments: ["-t", "--rm", "x"], error: .conflict("--rm", "--test")),
    (arguments: ["a", "-", "b"], error: .standardInputAmongPaths),
    (
      arguments: ["--dry-run"],
      error: .needsPath(
        option: "--dry-run",
        reason:
          "with none, standard input is compressed to standard output; there are no files to plan"
      )
    ),
    (
      arguments: ["--one-file-sytem", "x"],
      error: .unknownOption("--one-file-sytem", suggestion: "--one-file-system")
    ),
    (arguments: ["--jbos=2", "x"], error: .unknownOption("--jbos", suggestion: "--jobs")),
    (
      arguments: ["-p", "0", "x"],
      error: .invalidValue(
        "0", option: "--processes <n>", reason: "expected a whole number from 1 to 4096")
    ),
    (arguments: ["--delete", "x"], error: .requires("--delete", "--output")),
    (arguments: ["--delete", "-d", "-o", "m", "x"], error: .conflict("--delete", "--decompress")),
    (arguments: ["--delete", "-c", "x"], error: .conflict("--delete", "--stdout")),
    (arguments: ["--delete", "-t", "x"], error: .conflict("--delete", "--test")),
    (arguments: ["--delete", "-l", "x"], error: .conflict("--delete", "--list")),
    (arguments: ["--delete", "--rm", "-o", "m", "x"], error: .conflict("--delete", "--rm")),
    (
      arguments: ["--delete", "--shard", "1/2", "-o", "m", "x"],
      error: .conflict("--delete", "--shard")
    ),
    (arguments: ["--delete", "-n", "-o", "m", "x"], error: .conflict("--delete", "--no-name")),
    (arguments: ["--max-delete=5", "-o", "m", "x"], error: .requires("--max-delete", "--delete")),
    (
      arguments: ["--sample-interval", "5ms", "x"],
      error: .requires("--sample-interval", "--task-log")
    ),
    (
      arguments: ["--sample-interval=1s", "-o", "m", "x/"],
      error: .requires("--sample-interval", "--task-log")
    ),
    (
      arguments: ["--delete", "--max-delete=-1", "-o", "m", "x"],
      error: .invalidValue(
        "-1", option: "--max-delete <n>", reason: "expected a whole number from 0 to 2147483647")
    ),
    (arguments: ["--link-dest", "p", "x"], error: .requires("--link-dest", "--output")),
    (
      arguments: ["--link-dest", "p", "-d", "-o", "m", "x"],
      error: .conflict("--link-dest", "--decompress")
    ),
    (arguments: ["--link-dest", "p", "-t", "x"], error: .conflict("--link-dest", "--test")),
    (arguments: ["--link-dest", "p", "-c", "x"], error: .conflict("--link-dest", "--stdout")),
    (
      arguments: ["--link-dest", "p", "--rm", "-o", "m", "x"],
      error: .conflict("--link-dest", "--rm")
    ),
    (
      arguments: ["--link-dest", "p", "--shard", "1/2", "-o", "m", "x"],
      error: .conflict("--link-dest", "--shard")
    ),
    (
      arguments: ["--link-dest", "p", "-n", "-o", "m", "x"],
      error: .conflict("--link-dest", "--no-name")
    ),
    (
      arguments: ["--link-dest=", "-o", "m", "x"],
      error: .invalidValue("", option: "--link-dest <dir>", reason: "expected a folder")
    ),
    (arguments: ["--check", "x"], error: .requires("--check", "--output")),
    (arguments: ["--check", "-d", "-o", "m", "x"], error: .conflict("--check", "--decompress")),
    (arguments: ["--check", "--delete", "-o", "m", "x"], error: .conflict("--check", "--delete")),
    (
      arguments: ["--check", "--dry-run", "-o", "m", "x"], error: .conflict("--check", "--dry-run")
    ),
    (arguments: ["--check", "--rm", "-o", "m", "x"], error: .conflict("--check", "--rm")),
    (
      arguments: ["--check", "--link-dest", "p", "-o", "m", "x"],
      error: .conflict("--check", "--link-dest")
    ),
  ])
  func usageErrorsNameTheOption(arguments: [String], error: UsageError) {
    #expect(CommandLineParser.parse(arguments) == .failure(error))
  }

  @Test func linkDestMayBeGivenMoreThanOnceAndKeepsItsOrder() throws {
    let parsed = try options(["--link-dest", "../b", "--link-dest=/a", "-o", "m", "x/"])
    #expect(parsed.linkDestinations == ["../b", "/a"])
  }

  @Test func helpAndVersionWinOverEverythingElse() {
    #expect(CommandLineParser.parse(["--bogus", "-h"]) == .success(.help))
    #expect(CommandLineParser.parse(["x", "--help"]) == .success(.help))
    #expect(CommandLineParser.parse(["--version"]) == .success(.version))
    #expect(CommandLineParser.parse(["-V"]) == .success(.version), "gzip's and pigz's -V")
    #expect(CommandLineParser.parse(["x", "-V"]) == .success(.version))
  }

  @Test func usageErrorTextHasSwiftArgumentParsersShape() {
    let text = HelpText.usageError(.unknownOption("--x"))
    #expect(
      text == """
        Error: Unknown option '--x'
        Usage: squeeze [<options>] [<path> ...]
          See 'squeeze --help' for more information.

        """)
  }

  @Test func helpListsEveryOptionInColumnsWithinEightyCharacters() {
    let help = HelpText.full
    for line in help.split(separator: "\n", omittingEmptySubsequences: false) {
      #expect(line.count <= 80, "too long: \(line)")
    }
    for option in OptionTable.options where !option.hidden {
      #expect(help.contains(option.label), "missing \(option.label)")
    }
    #expect(help.hasPrefix("OVERVIEW: "))
    #expect(help.contains("\nUSAGE: squeeze [<options>] [<path> ...]\n"))
    #expect(help.contains("\nOPTIONS:\n"))
    for group in OptionDefinition.Group.allCases {
      #expect(help.contains("\n\(group.rawValue):\n"))
    }
    // Help text starts at column 26 after a short label.
    let jobs = help.split(separator: "\n").first { $0.hasPrefix("  -j, --jobs <n>") }!
    #expect(String(jobs.prefix(26)) == "  -j, --jobs <n>          ")
    let unwrapped = help.split(separator: "\n").map { $0.trimmingPrefix(while: { $0 == " " }) }
      .joined(separator: " ")
    #expect(
      unwrapped.contains("(default: the CPUs this process may use: affinity and cgroup CPU quota)"))
    #expect(unwrapped.contains("(default: 6)"))
  }
}

@Suite struct DiagnosticOptionTests {
  @Test func isolationTaskLogSampleIntervalAndBlockSize() throws {
    guard
      case .success(.run(let options)) = CommandLineParser.parse([
        "--isolation", "actor", "--task-log", "t.jsonl", "--sample-interval", "5ms", "--block-size",
        "256K", "x",
      ])
    else {
      Issue.record("did not parse")
      return
    }
    #expect(options.isolation == .actor)
    #expect(options.taskLog == "t.jsonl")
    #expect(abs(options.sampleInterval - 0.005) < 1e-12)
    #expect(options.chunkSize == 256 * 1024)
  }

  @Test(arguments: [
    (arguments: ["--isolation", "threads", "x"], option: "--isolation <mode>"),
    (arguments: ["--sample-interval", "5", "x"], option: "--sample-interval <duration>"),
    (arguments: ["--sample-interval", "0ms", "x"], option: "--sample-interval <duration>"),
    (arguments: ["--block-size", "1K", "x"], option: "--block-size <size>"),
    (arguments: ["--block-size", "big", "x"], option: "--block-size <size>"),
  ])
  func badValuesAreUsageErrorsNamingTheOption(arguments: [String], option: String) {
    guard case .failure(.invalidValue(_, let named, _)) = CommandLineParser.parse(arguments) else {
      Issue.record("expected an invalid value for \(option)")
      return
    }
    #expect(named == option)
  }

  @Test(arguments: [
    (text: "5ms", seconds: 0.005), (text: "1.5s", seconds: 1.5), (text: "250us", seconds: 0.00025),
    (text: "30m", seconds: 1800), (text: "12h", seconds: 43200), (text: "7d", seconds: 604_800),
  ])
  func durationsNeedAUnit(text: String, seconds: Double) {
    #expect(abs(ValueParsers.duration(text)! - seconds) < 1e-9)
  }

  @Test func durationsAndSizesRefuseNonsense() {
    for text in ["", "5", "ms", "-5ms", "5 ms", "1e3s", "infs"] {
      #expect(ValueParsers.duration(text) == nil, "\(text)")
    }
    #expect(ValueParsers.size("128K") == 131072)
    #expect(ValueParsers.size("2M") == 2 << 20)
    #expect(ValueParsers.size("4096") == 4096)
    for text in ["", "K", "0K", "-1K", "1.5M", "99999999999999999G"] {
      #expect(ValueParsers.size(text) == nil, "\(text)")
    }
  }

  /// A size with a decimal point is refused, as pigz's `-b 1.5` and GNU `head -c 1.5K` refuse
  /// it, by what is wrong with it (it named only the range, which 1.5M is inside), with the
  /// whole number it stands for when there is one; a size out of range still names the range.
  @Test(arguments: [
    (
      value: "1.5M",
      reason: "expected a whole number of bytes, K, M or G (1.5M is 1536K), from 32K to 64M"
    ),
    (value: "1.3K", reason: "expected a whole number of bytes, K, M or G, from 32K to 64M"),
    (
      value: "2.50M",
      reason: "expected a whole number of bytes, K, M or G (2.50M is 2560K), from 32K to 64M"
    ),
    (value: "65536.5", reason: "expected a whole number of bytes, K, M or G, from 32K to 64M"),
    (
      value: "99999999999999999.5G",
      reason: "expected a whole number of bytes, K, M or G, from 32K to 64M"
    ),
    (value: "128M", reason: "expected a size from 32K to 64M"),
    (value: "1.5.0M", reason: "expected a size from 32K to 64M"),
  ])
  func aDecimalSizeIsRefusedAsNotWhole(value: String, reason: String) {
    #expect(
      CommandLineParser.parse(["--block-size", value, "x"])
        == .failure(.invalidValue(value, option: "--block-size <size>", reason: reason)))
  }

  @Test func timelineTakesALogAndAnOutput() {
    #expect(
      CommandLineParser.parse(["timeline", "a.jsonl", "-o", "a.html"])
        == .success(.timeline(TimelineOptions(log: "a.jsonl", output: "a.html"))))
    #expect(
      CommandLineParser.parse(["timeline", "a.jsonl"])
        == .success(.timeline(TimelineOptions(log: "a.jsonl", output: nil))))
    #expect(
      CommandLineParser.parse(["timeline"])
        == .failure(.inTimeline(.noArguments(.missingArgument("<task-log>")))))
    #expect(
      CommandLineParser.parse(["timeline", "-o", "a.svg"])
        == .failure(.inTimeline(.missingArgument("<task-log>"))))
    #expect(
      CommandLineParser.parse(["timeline", "a", "b"])
        == .failure(.inTimeline(.unexpectedArgument("b"))))
    #expect(
      CommandLineParser.parse(["timeline", "--outptu", "a.svg", "a"])
        == .failure(.inTimeline(.unknownOption("--outptu", suggestion: "--output"))))
    #expect(CommandLineParser.parse(["timeline", "--help"]) == .success(.timelineHelp))
    #expect(
      CommandLineParser.parse(["timeline", "a.jsonl", "-f", "-o", "a.html"])
        == .success(.timeline(TimelineOptions(log: "a.jsonl", output: "a.html", force: true))))
    #expect(
      CommandLineParser.parse(["timeline", "--force", "a.jsonl"])
        == .success(.timeline(TimelineOptions(log: "a.jsonl", output: nil, force: true))))
  }
}

@Suite struct UsageMessageTests {
  @Test func gzipModePrecedenceLetListWinOverTestAndBothOverDecompress() throws {
    // gzip 1.12: -l wins over -t, both over -d, in any order.
    let cases: [(arguments: [String], mode: RunMode)] = [
      (["-d", "-t", "x"], .test), (["-t", "-d", "x"], .test), (["-dt", "x"], .test),
      (["-d", "-l", "x"], .list), (["-l", "-d", "x"], .list),
      (["-t", "-l", "x"], .list), (["-l", "-t", "x"], .list), (["-dtl", "x"], .list),
    ]
    for (arguments, mode) in cases {
      guard case .success(.run(let options)) = CommandLineParser.parse(arguments) else {
        Issue.record("\(arguments) did not parse")
        continue
      }
      #expect(options.mode == mode, "\(arguments)")
    }
  }

  @Test func processesIsPigzsSpellingOfJobs() throws {
    for arguments in [["-p", "3", "x"], ["-p3", "x"], ["--processes=3", "x"]] {
      guard case .success(.run(let options)) = CommandLineParser.parse(arguments) else {
        Issue.record("\(arguments) did not parse")
        continue
      }
      #expect(options.jobs == 3)
    }
  }

  @Test(arguments: [
    (typed: "--versoin", suggestion: "--version"),
    (typed: "--decompres", suggestion: "--decompress"),
    (typed: "--jbos", suggestion: "--jobs"),
    (typed: "--quite", suggestion: "--quiet"),
  ])
  func aMistypedLongOptionSuggestsTheNearest(typed: String, suggestion: String) {
    #expect(
      CommandLineParser.parse([typed, "x"])
        == .failure(.unknownOption(typed, suggestion: suggestion)))
    #expect(
      HelpText.usageError(.unknownOption(typed, suggestion: suggestion)).hasPrefix(
        "Error: Unknown option '\(typed)'. Did you mean '\(suggestion)'?\nUsage: "))
  }

  @Test func farOffNamesAndShortOptionsGetNoSuggestion() {
    #expect(
      CommandLineParser.parse(["--frobnicate", "x"]) == .failure(.unknownOption("--frobnicate")))
    #expect(CommandLineParser.parse(["-Z", "x"]) == .failure(.unknownOption("-Z")))
  }

  @Test func editDistanceIsLevenshteins() {
    #expect("kitten".editDistance(to: "sitting") == 3)
    #expect("".editDistance(to: "abc") == 3)
    #expect("--version".editDistance(to: "--versoin") == 2)
    #expect("same".editDistance(to: "same") == 0)
  }

  @Test func timelineWithNoArgumentsPrintsTheErrorThenItsWholeHelp() {
    guard case .failure(let error) = CommandLineParser.parse(["timeline"]) else {
      Issue.record("expected a usage error")
      return
    }
    #expect(
      HelpText.usageError(error)
        == "Error: Missing expected argument '<task-log>'\n\n" + HelpText.timeline)
  }

  @Test func timelineErrorsShowTheTimelinesUsageAndHelpLine() {
    guard case .failure(let error) = CommandLineParser.parse(["timeline", "-o", "a.svg"]) else {
      Issue.record("expected a usage error")
      return
    }
    #expect(
      HelpText.usageError(error) == """
        Error: Missing expected argument '<task-log>'
        Help:  <task-log>  A log written by 'squeeze --task-log <file>'.
        Usage: squeeze timeline <task-log> [--output <file>] [--force]
          See 'squeeze timeline --help' for more information.

        """)
  }

  @Test func jsonWithNoPathSaysWhyItNeedsOne() {
    guard case .failure(let error) = CommandLineParser.parse(["--json"]) else {
      Issue.record("expected a usage error")
      return
    }
    let text = HelpText.usageError(error)
    #expect(
      text.hasPrefix(
        "Error: '--json' needs a <path>: with none, standard input is compressed to standard output, where the JSON summary would be mixed into the data\nHelp:  <path>  Files and folders"
      ))
    #expect(text.hasSuffix("See 'squeeze --help' for more information.\n"))
  }

  @Test func anInvalidValueNamesTheOptionsHelp() {
    let text = HelpText.usageError(
      .invalidValue("x", option: "--jobs <n>", reason: "expected a whole number from 1 to 4096"))
    #expect(
      text.contains(
        "\nHelp:  --jobs <n>  How many files or chunks are worked on at once (1 to 4096).\n"))
  }
}
