/// What squeeze's commands say about themselves: the one description that `--help`
/// (``HelpText``), the man page (``ManualPage``) and the completion scripts
/// (``CompletionScript``) are all rendered from. The options come from ``OptionTable`` (the
/// rows that also parse the command line) and ``TimelineOptionTable``; a new option row
/// therefore appears in all of them at once, and `CommandDocumentationTests` fails when one
/// of them leaves an option out.
///
/// The layout follows swift-argument-parser's `CommandInfoV0`/`ArgumentInfoV0` (the
/// `--experimental-dump-help` shape its man page and completion generators read): a command
/// has an abstract, a discussion, arguments and options, and subcommands.
struct CommandDocumentation: Sendable {
  /// The words typed to run it: `squeeze`, `squeeze timeline`.
  var name: String
  /// One sentence: `--help`'s `OVERVIEW:` and the man page's `.Nd`.
  var abstract: String
  /// Paragraphs after the abstract.
  var discussion: [String]
  /// The usage lines, without the command name's leading `USAGE: `.
  var usage: [String]
  /// The positional arguments.
  var arguments: [ArgumentDocumentation]
  /// The options, by `--help` section, in table order.
  var sections: [OptionSection]
  /// Exit statuses and their meaning.
  var exitStatuses: [(status: String, meaning: String)]
  /// Examples: what it does, then the command.
  var examples: [(description: String, command: String)]
  /// Subcommands (`timeline`), each documented the same way.
  var subcommands: [CommandDocumentation]

  /// The last word of ``name``: `timeline` for `squeeze timeline`.
  var commandWord: String { String(name.split(separator: " ").last ?? "") }

  /// Every option of this command (not of its subcommands), in order.
  var options: [OptionDocumentation] { sections.flatMap(\.options) }
}

/// A titled group of options (`OUTPUT OPTIONS:`).
struct OptionSection: Sendable {
  /// The heading, in capitals as `--help` prints it.
  var title: String
  /// Its options.
  var options: [OptionDocumentation]
}

/// One positional argument (`<path> ...`).
struct ArgumentDocumentation: Sendable {
  /// The label: `<path>`.
  var label: String
  /// What it is.
  var help: String
  /// True when it may be given any number of times.
  var repeats: Bool
  /// True when it may be left out.
  var isOptional: Bool
  /// What a shell completes for it.
  var completion: ValueCompletion
}

/// One option as its documents show it: what ``OptionDefinition`` says minus how it parses.
struct OptionDocumentation: Sendable, Equatable {
  /// The letter after `-`.
  var short: Character?
  /// The name after `--`.
  var long: String?
  /// The value's label (`dir`), nil for a flag.
  var valueLabel: String?
  /// What it does.
  var help: String
  /// The default, shown as `(default: …)`.
  var defaultValue: String?
  /// The label `--help` shows: `-o, --output <dir>`, or a family's (`-1 ... -9`).
  var label: String
  /// Covered by another row's label (`-2` by `-1 ... -9`): listed by no document.
  var hidden: Bool
  /// May be given more than once.
  var repeats: Bool = false
  /// What a shell completes for the value.
  var completion: ValueCompletion

  /// How errors name it: `--jobs <n>` (the long name when there is one).
  var synopsis: String {
    let name = long.map { "--" + $0 } ?? short.map { "-" + String($0) } ?? label
    return valueLabel.map { "\(name) <\($0)>" } ?? name
  }

  /// `-o`, `--output`: what is typed.
  var spellings: [String] {
    [short.map { "-" + String($0) }, long.map { "--" + $0 }].compactMap { $0 }
  }

  /// The first sentence of the help, for completion menus: the text before the first `. `
  /// or `; ` outside parentheses (a `;` inside them, as in "(the default; accepted for gzip
  /// habits)", ends no sentence), without a final period.
  var summary: String {
    var text = ""
    var depth = 0
    var previous: Character? = nil
    for character in help {
      if character == " " && depth == 0 && (previous == "." || previous == ";") {
        text.removeLast()
        break
      }
      if character == "(" { depth += 1 }
      if character == ")" && depth > 0 { depth -= 1 }
      text.append(character)
      previous = character
    }
    if text.hasSuffix(".") { text.removeLast() }
    return text
  }

  /// The help text with the default appended, as `--help` shows it.
  var helpWithDefault: String {
    defaultValue.map { "\(help) (default: \($0))" } ?? help
  }
}

/// What a shell may offer for an option's value or an argument.
enum ValueCompletion: Sendable, Equatable {
  /// Free text: nothing to offer.
  case none
  /// File names (folders too, to reach files in them).
  case files
  /// Folder names only.
  case folders
  /// One of these words.
  case choices([String])
}

/// The shells `--generate-completion-script` writes for (swift-argument-parser's three).
enum CompletionShell: String, Sendable, CaseIterable, Equatable {
  /// GNU bash, with or without the bash-completion package.
  case bash
  /// zsh's completion system (`compinit`).
  case zsh
  /// fish.
  case fish
}

extension OptionDefinition {
  /// This row as the documents show it.
  var documentation: OptionDocumentation {
    OptionDocumentation(
      short: short, long: long, valueLabel: valueLabel, help: help, defaultValue: defaultValue,
      label: label, hidden: hidden, repeats: repeats, completion: completion)
  }
}

/// The options of `squeeze timeline`, which ``CommandLineParser/parseTimeline(_:)`` looks
/// its arguments up in.
enum TimelineOptionTable {
  /// `-o, --output <file>`.
  static let output = OptionDocumentation(
    short: "o", long: "output", valueLabel: "file",
    help:
      "What to write: .svg (a picture), .html (an interactive page: hover, zoom, pan) or .json (a Chrome trace). A file already there is replaced only when it is empty or a drawing squeeze made (see --force).",
    defaultValue: "the log's name with .svg", label: "-o, --output <file>", hidden: false,
    completion: .files)
  /// `-f, --force`.
  static let force = OptionDocumentation(
    short: "f", long: "force", valueLabel: nil,
    help:
      "Replace a file at the output that is not a drawing squeeze made, or a symbolic link there (the link itself).",
    defaultValue: nil, label: "-f, --force", hidden: false, completion: .none)
  /// `-h, --help`.
  static let help = OptionDocumentation(
    short: "h", long: "help", valueLabel: nil, help: "Show help information.", defaultValue: nil,
    label: "-h, --help", hidden: false, completion: .none)

  /// Every option, in `--help` order.
  static let options = [output, force, help]
}

extension CommandDocumentation {
  /// `squeeze` and its subcommand.
  static var squeeze: CommandDocumentation {
    CommandDocumentation(
      name: "squeeze",
      abstract: "Compress files and folders in parallel into standard gzip files.",
      discussion: [
        "Every regular file under each folder is compressed (libdeflate by default, zlib with --engine zlib), on every core, into a .gz file that gunzip restores byte for byte. Outputs appear atomically and only once they are on disk; originals are kept unless --rm. Re-runs skip outputs that are up to date."
      ],
      usage: [HelpText.usage, timeline.usage[0]],
      arguments: [
        ArgumentDocumentation(
          label: "<path>",
          help:
            "Files and folders (folders recursively). With none, or '-', standard input goes to standard output.",
          repeats: true, isOptional: true, completion: .files)
      ],
      sections: OptionDefinition.Group.allCases.map { group in
        OptionSection(
          title: group.rawValue,
          options: OptionTable.options.filter { $0.group == group }.map(\.documentation))
      },
      exitStatuses: [
        ("0", "Every selected file was done or is up to date (skips are not failures)."),
        ("1", "At least one file failed or a path does not exist; the rest were done."),
        ("64", "Usage error."),
        (
          "74",
          "Stopped because a file system squeeze writes to (outputs, links, the task log, --json, -l) is full or over quota (ENOSPC, EDQUOT): said once, files in flight ended, nothing lost; make room and run again.",
        ),
        (
          "130, 143, 129",
          "Stopped by SIGINT, SIGTERM or SIGHUP (temporaries removed; a second signal skips the summary).",
        ),
      ],
      examples: [
        ("Compress a folder beside its files, with a progress bar:", "squeeze ./photos"),
        (
          "Back up a folder into a mirror of .gz files from cron (silent unless something fails; re-runs only compress what changed; the trailing slash puts its contents in the mirror, as with rsync):",
          "squeeze -o /backup/photos /home/me/photos/"
        ),
        (
          "Rotate logs: compress those untouched for a day and remove the originals:",
          "squeeze --older-than 1d --rm --exclude '*.pid' /var/log/app"
        ),
        (
          "Restore a mirror into another folder:",
          "squeeze -d -o /home/me/photos-restored /backup/photos/"
        ),
        (
          "Streams, as with gzip:",
          "tar c dir | squeeze > dir.tar.gz; squeeze -dc dir.tar.gz | tar t"
        ),
      ],
      subcommands: [timeline])
  }

  /// `squeeze timeline`.
  static var timeline: CommandDocumentation {
    CommandDocumentation(
      name: "squeeze timeline",
      abstract: "Draw a task-state log (--task-log) as one self-contained picture.",
      discussion: [
        "Counts of running, enqueued and actor-queued tasks over time, the main actor's lag with microhangs (250 ms or more) and hangs (500 ms or more) marked, a lane per thread (which task ran on it, when it was blocked or idle) and a lane per task (its states and chunks), with each task's story on hover. The picture opens in any browser with no network; .json writes a Chrome trace for Perfetto's UI or chrome://tracing."
      ],
      usage: ["squeeze timeline <task-log> [--output <file>] [--force]"],
      arguments: [
        ArgumentDocumentation(
          label: "<task-log>", help: "A log written by 'squeeze --task-log <file>'.",
          repeats: false, isOptional: false, completion: .files)
      ],
      sections: [OptionSection(title: "OPTIONS", options: TimelineOptionTable.options)],
      exitStatuses: [], examples: [], subcommands: [])
  }
}
