import Foundation
import Testing

@testable import SqueezeCLI
@testable import SqueezeCore

/// `--help`, the man page and the three completion scripts agree with the option table, and
/// so with each other: each document is read back on its own terms (the help's label column,
/// the man page's `.It Fl` lines, bash's word list, zsh's `_arguments` specs, fish's `-s`/`-l`)
/// and must name exactly the options that parse.
@Suite struct CommandDocumentationTests {
  /// Every spelling that parses, for squeeze and for `squeeze timeline`.
  static let rootSpellings = Set(OptionTable.options.flatMap(\.spellings))
  static let timelineSpellings = Set(TimelineOptionTable.options.flatMap(\.spellings))

  @Test func helpListsExactlyTheOptionsThatParse() {
    #expect(Self.helpOptions(HelpText.full) == Self.rootSpellings)
    #expect(Self.helpOptions(HelpText.timeline) == Self.timelineSpellings)
  }

  @Test func theManPageListsExactlyTheOptionsThatParse() throws {
    let page = ManualPage.render(.squeeze)
    let parts = page.components(separatedBy: ".Ss squeeze timeline\n")
    try #require(parts.count == 2, "the man page has a subsection for squeeze timeline")
    #expect(Self.manualOptions(parts[0]) == Self.rootSpellings)
    #expect(Self.manualOptions(parts[1]) == Self.timelineSpellings)
  }

  @Test func bashCompletesExactlyTheOptionsThatParse() throws {
    let script = CompletionScript.render(.squeeze, for: .bash)
    let root = try #require(Self.body(of: "_squeeze", in: script))
    let timeline = try #require(Self.body(of: "_squeeze_timeline", in: script))
    #expect(Self.bashWords(root) == Self.rootSpellings)
    #expect(Self.bashWords(timeline) == Self.timelineSpellings)
    #expect(script.hasSuffix("complete -F _squeeze squeeze\n"))
  }

  @Test func zshCompletesExactlyTheOptionsThatParse() throws {
    let script = CompletionScript.render(.squeeze, for: .zsh)
    #expect(script.hasPrefix("#compdef squeeze\n"))
    let root = try #require(Self.body(of: "_squeeze", in: script))
    let timeline = try #require(Self.body(of: "_squeeze_timeline", in: script))
    #expect(Self.zshOptions(root) == Self.rootSpellings)
    #expect(Self.zshOptions(timeline) == Self.timelineSpellings)
  }

  @Test func fishCompletesExactlyTheOptionsThatParse() {
    let script = CompletionScript.render(.squeeze, for: .fish)
    let lines = script.split(separator: "\n").map(String.init).filter {
      $0.hasPrefix("complete -c squeeze") && ($0.contains(" -s ") || $0.contains(" -l "))
    }
    let root = lines.filter { $0.contains("'not __squeeze_using_subcommand timeline'") }
    let timeline = lines.filter { $0.contains("-n '__squeeze_using_subcommand timeline'") }
    #expect(root.count + timeline.count == lines.count, "every option line has a condition")
    #expect(Self.fishOptions(root) == Self.rootSpellings)
    #expect(Self.fishOptions(timeline) == Self.timelineSpellings)
  }

  /// A completion menu shows the first sentence of each option's help: a sentence cut at a
  /// `;` inside parentheses ("Keep the originals (the default") would leave one open.
  @Test func completionSummariesCloseEveryParenthesisTheyOpen() {
    for option in OptionTable.options.map(\.documentation) + TimelineOptionTable.options {
      let summary = option.summary
      #expect(
        summary.filter { $0 == "(" }.count == summary.filter { $0 == ")" }.count,
        "\(option.label): \(summary)")
    }
    let keep = OptionDocumentation(
      short: "k", long: "keep", valueLabel: nil,
      help: "Keep the originals (the default; accepted for gzip habits). More.",
      defaultValue: nil, label: "-k, --keep", hidden: false, completion: .none)
    #expect(keep.summary == "Keep the originals (the default; accepted for gzip habits)")
    let two = OptionDocumentation(
      short: nil, long: "x", valueLabel: nil, help: "First (a. b); second", defaultValue: nil,
      label: "--x", hidden: false, completion: .none)
    #expect(two.summary == "First (a. b)")
  }

  /// zsh shows a value's label while it is typed: `--shard`'s is `k/n`, as `--help` writes
  /// `<k>/<n>`, not the table's inner form `k>/<n`.
  @Test func zshNamesTheShardValueAsHelpDoes() {
    let script = CompletionScript.render(.squeeze, for: .zsh)
    let line = script.split(separator: "\n").first { $0.contains("'--shard[") }
    #expect(line?.hasSuffix("]:k/n: '") == true, "\(line ?? "no --shard spec")")
  }

  /// What a new row of the table becomes: given to the renderers, an option appears in every
  /// document with its help and its values.
  @Test func aNewOptionRowFlowsIntoEveryDocument() {
    var command = CommandDocumentation.squeeze
    let row = OptionDocumentation(
      short: nil, long: "rsyncable", valueLabel: nil,
      help: "Choose chunk boundaries from the content, so rsync sends only what changed.",
      defaultValue: nil, label: "--rsyncable", hidden: false, completion: .none)
    let valued = OptionDocumentation(
      short: "E", long: "engine", valueLabel: "name", help: "Which library compresses.",
      defaultValue: "fast", label: "-E, --engine <name>", hidden: false,
      completion: .choices(["fast", "zlib"]))
    command.sections[0].options += [row, valued]
    let expected = Self.rootSpellings.union(["--rsyncable", "-E", "--engine"])
    #expect(Self.helpOptions(HelpText.render(command)) == expected)
    let page = ManualPage.render(command).components(separatedBy: ".Ss squeeze timeline\n")[0]
    #expect(Self.manualOptions(page) == expected)
    let bash = CompletionScript.render(command, for: .bash)
    #expect(Self.body(of: "_squeeze", in: bash).map(Self.bashWords) == expected)
    #expect(
      bash.contains("-E|--engine)\n        COMPREPLY=($(compgen -W 'fast zlib' -- \"$value\"))"))
    let zsh = CompletionScript.render(command, for: .zsh)
    #expect(Self.body(of: "_squeeze", in: zsh).map(Self.zshOptions) == expected)
    #expect(
      zsh.contains("'(-E --engine)'{-E,--engine}'[Which library compresses]:name:(fast zlib)'"))
    let fish = CompletionScript.render(command, for: .fish)
    #expect(fish.contains("-s E -l engine -x -a 'fast zlib' -d 'Which library compresses'"))
    #expect(fish.contains("-l rsyncable -d 'Choose chunk boundaries from the content, so rsync"))
  }

  @Test func theExitStatusTablesNameEveryStatusTheRunCanEndWith() throws {
    let statuses: [SqueezeCore.ExitStatus] = [.success, .failure, .usage, .outOfSpace]
    let help = try #require(
      HelpText.full.components(separatedBy: "EXIT STATUS:\n").last?
        .components(separatedBy: "\n\n").first)
    let page = ManualPage.render(.squeeze)
    for status in statuses {
      #expect(help.contains("\n  \(status.rawValue) ") || help.hasPrefix("  \(status.rawValue) "))
      #expect(page.contains(".It \(status.rawValue)\n"), "\(status)")
    }
    #expect(help.contains("(ENOSPC, EDQUOT)"))
  }

  @Test func theManPageIsMdocWithTheUsualSections() {
    let page = ManualPage.render(.squeeze)
    for line in [
      ".Dt SQUEEZE 1", ".Sh NAME", ".Nm squeeze",
      ".Nd compress files and folders in parallel into standard gzip files", ".Sh SYNOPSIS",
      ".Sh DESCRIPTION", ".Ss Output options", ".It Fl o , Fl -output Ar dir",
      ".It Fl 1 No ... Fl 9", ".It Fl -shard Ar k Ns / Ns Ar n", ".Sh EXIT STATUS",
      ".Sh EXAMPLES", ".Dl $ squeeze ./photos", ".Sh SEE ALSO",
    ] {
      #expect(page.contains("\n" + line + "\n"), "missing \(line)")
    }
    for line in page.split(separator: "\n") {
      #expect(line.count <= 80 || line.hasPrefix(".Dl"), "long line: \(line)")
      #expect(!line.hasPrefix("'"), "a line starting with ' is a control line: \(line)")
    }
  }

  // MARK: Reading each document back

  /// The option spellings in a help text's label column (`-o, --output <dir>`), with a
  /// family label (`-1 ... -9`) standing for every level in it.
  static func helpOptions(_ help: String) -> Set<String> {
    var found: Set<String> = []
    for line in help.split(separator: "\n") where line.hasPrefix("  -") {
      let entry = line.dropFirst(2)
      let label = entry.range(of: "  ").map { entry[..<$0.lowerBound] } ?? entry
      found.formUnion(spellings(in: label.split(separator: " ").map(String.init)))
    }
    return found
  }

  /// The option spellings of the man page's `.It Fl …` lines.
  static func manualOptions(_ page: String) -> Set<String> {
    var found: Set<String> = []
    for line in page.split(separator: "\n") where line.hasPrefix(".It Fl ") {
      var words: [String] = []
      let tokens = line.split(separator: " ").map(String.init)
      for (index, token) in tokens.enumerated() where index > 0 {
        if tokens[index - 1] == "Fl" { words.append("-" + token) }
        if tokens[index - 1] == "No" && token == "..." { words.append("...") }
      }
      found.formUnion(spellings(in: words))
    }
    return found
  }

  /// The words bash offers for `-…` in one completion function.
  static func bashWords(_ body: String) -> Set<String> {
    let marker = "if [[ $cur == -* ]]; then\n        COMPREPLY=($(compgen -W '"
    guard let start = body.range(of: marker)?.upperBound,
      let end = body[start...].firstIndex(of: "'")
    else { return [] }
    return Set(body[start..<end].split(separator: " ").map(String.init))
  }

  /// The option names of zsh's `_arguments` specs: `{-o,--output}` and `'--json[`.
  static func zshOptions(_ body: String) -> Set<String> {
    var found: Set<String> = []
    guard let start = body.range(of: "specs=(\n")?.upperBound,
      let end = body[start...].range(of: "\n    )")?.lowerBound
    else { return [] }
    for line in body[start..<end].split(separator: "\n") {
      let text = line.trimmingCharacters(in: .whitespaces)
      if let open = text.firstIndex(of: "{"), let close = text.firstIndex(of: "}"), open < close {
        found.formUnion(
          text[text.index(after: open)..<close].split(separator: ",").map(String.init))
      } else if text.hasPrefix("'-") || text.hasPrefix("'*-") {
        let name = text.drop { $0 == "'" || $0 == "*" }.prefix { $0 != "[" }
        found.insert(String(name))
      }
    }
    return found
  }

  /// The options of fish `complete` lines: `-s d` is `-d`, `-l decompress` is `--decompress`.
  static func fishOptions(_ lines: [String]) -> Set<String> {
    var found: Set<String> = []
    for line in lines {
      let words = line.split(separator: " ").map(String.init)
      for (index, word) in words.enumerated() where index + 1 < words.count {
        if word == "-s" { found.insert("-" + words[index + 1]) }
        if word == "-l" { found.insert("--" + words[index + 1]) }
      }
    }
    return found
  }

  /// The text of shell function `name` (`name() {` to the `}` that ends it).
  static func body(of name: String, in script: String) -> String? {
    guard let start = script.range(of: "\n\(name)() {\n")?.upperBound,
      let end = script[start...].range(of: "\n}\n")?.lowerBound
    else { return nil }
    return String(script[start..<end])
  }

  /// `-x` and `--name` words, commas dropped; `-1 ... -9` expanded to every number between.
  static func spellings(in words: [String]) -> Set<String> {
    var found: Set<String> = []
    let cleaned = words.map { $0.hasSuffix(",") ? String($0.dropLast()) : $0 }
    for (index, word) in cleaned.enumerated() {
      if word == "...", index > 0, index + 1 < cleaned.count,
        let low = Int(cleaned[index - 1].dropFirst()),
        let high = Int(cleaned[index + 1].dropFirst())
      {
        for level in low...high { found.insert("-\(level)") }
      } else if word.hasPrefix("-") {
        found.insert(word)
      }
    }
    return found
  }
}
