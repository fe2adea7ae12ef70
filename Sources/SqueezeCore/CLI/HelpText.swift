/// `--help`, `--version` and usage-error text, laid out as swift-argument-parser lays out its
/// help: `OVERVIEW:`, `USAGE:`, `ARGUMENTS:`, titled option groups, two-space indent, help
/// text from column 26, lines wrapped at 80 columns, defaults as `(default: …)`.
enum HelpText {
  /// squeeze's version.
  static let version = "0.1.0"

  /// The one-line usage.
  static let usage = "squeeze [<options>] [<path> ...]"

  /// The full `--help` text.
  static var full: String {
    var lines: [String] = []
    lines.append("OVERVIEW: Compress files and folders in parallel into standard gzip files.")
    lines.append("")
    lines.append(
      contentsOf: wrap(
        "Every regular file under each folder is compressed with zlib, on every core, into a .gz file that gunzip restores byte for byte. Outputs appear atomically and only once they are on disk; originals are kept unless --rm. Re-runs skip outputs that are up to date.",
        indent: 0))
    lines.append("")
    lines.append("USAGE: \(usage)")
    lines.append("       squeeze timeline <task-log> [--output <file>]")
    lines.append("")
    lines.append("ARGUMENTS:")
    lines.append(
      contentsOf: entry(
        "<path>",
        "Files and folders (folders recursively). With none, or '-', standard input goes to standard output."
      ))
    for group in OptionDefinition.Group.allCases {
      lines.append("")
      lines.append("\(group.rawValue):")
      for option in OptionTable.options where option.group == group && !option.hidden {
        var help = option.help
        if let defaultValue = option.defaultValue { help += " (default: \(defaultValue))" }
        lines.append(contentsOf: entry(option.label, help))
      }
    }
    lines.append("")
    lines.append("OPTIONS:")
    lines.append(contentsOf: entry("--version", "Show the version."))
    lines.append(contentsOf: entry("-h, --help", "Show help information."))
    lines.append("")
    lines.append("EXIT STATUS:")
    lines.append(
      contentsOf: entry(
        "0", "Every selected file was done or is up to date (skips are not failures)."))
    lines.append(
      contentsOf: entry(
        "1", "At least one file failed or a path does not exist; the rest were done."))
    lines.append(contentsOf: entry("64", "Usage error."))
    lines.append(
      contentsOf: entry(
        "130, 143, 129", "Stopped by SIGINT, SIGTERM or SIGHUP (temporaries removed)."))
    lines.append("")
    lines.append("EXAMPLES:")
    lines.append(
      contentsOf: example(
        "Compress a folder beside its files, with a progress bar:", "squeeze ./photos"))
    lines.append(
      contentsOf: example(
        "Back up a folder into a mirror of .gz files from cron (silent unless something fails; re-runs only compress what changed):",
        "squeeze -o /backup/photos /home/me/photos"))
    lines.append(
      contentsOf: example(
        "Rotate logs: compress those untouched for a day and remove the originals:",
        "squeeze --older-than 1d --rm --exclude '*.pid' /var/log/app"))
    lines.append(
      contentsOf: example(
        "Restore a mirror into another folder:", "squeeze -d -o /restore /backup/photos"))
    lines.append(
      contentsOf: example(
        "Streams, as with gzip:", "tar c dir | squeeze > dir.tar.gz; squeeze -dc dir.tar.gz | tar t"
      ))
    return lines.joined(separator: "\n") + "\n"
  }

  /// The `--help` text of `squeeze timeline`.
  static var timeline: String {
    var lines: [String] = []
    lines.append("OVERVIEW: Draw a task-state log (--task-log) as one self-contained picture.")
    lines.append("")
    lines.append(
      contentsOf: wrap(
        "Tracks of running, enqueued and actor-queued tasks over time, the main actor's lag with microhangs (250 ms or more) and hangs (500 ms or more) marked, and task lanes coloured by state. The picture opens in any browser with no network.",
        indent: 0))
    lines.append("")
    lines.append("USAGE: squeeze timeline <task-log> [--output <file>]")
    lines.append("")
    lines.append("ARGUMENTS:")
    lines.append(contentsOf: entry("<task-log>", "A log written by 'squeeze --task-log <file>'."))
    lines.append("")
    lines.append("OPTIONS:")
    lines.append(
      contentsOf: entry(
        "-o, --output <file>",
        "The picture to write: .svg, or .html for the SVG inside a page. (default: the log's name with .svg)"
      ))
    lines.append(contentsOf: entry("-h, --help", "Show help information."))
    return lines.joined(separator: "\n") + "\n"
  }

  /// The text printed for a usage error (on stderr), swift-argument-parser's shape.
  static func usageError(_ error: UsageError) -> String {
    "Error: \(error)\nUsage: \(usage)\n  See 'squeeze --help' for more information.\n"
  }

  /// `label` in a 24-column field after a 2-space indent, then `help` wrapped at 80.
  static func entry(_ label: String, _ help: String) -> [String] {
    let column = 26
    let helpLines = wrap(help, indent: column)
    var first = "  " + label
    if first.count <= column - 2 {
      first += String(repeating: " ", count: column - first.count)
      return [first + helpLines[0].dropFirst(column)] + helpLines.dropFirst()
    }
    return [first] + helpLines
  }

  static func example(_ description: String, _ command: String) -> [String] {
    wrap(description, indent: 2) + ["    $ " + command, ""]
  }

  /// Wraps `text` into lines of at most 80 columns, each indented by `indent` spaces.
  static func wrap(_ text: String, indent: Int) -> [String] {
    let width = 80
    var lines: [String] = []
    var line = ""
    for word in text.split(separator: " ") {
      if !line.isEmpty && indent + line.count + 1 + word.count > width {
        lines.append(String(repeating: " ", count: indent) + line)
        line = ""
      }
      line += line.isEmpty ? String(word) : " " + word
    }
    lines.append(String(repeating: " ", count: indent) + line)
    return lines
  }
}
