import SqueezeCore

/// `--help`, `--version` and usage-error text, laid out as swift-argument-parser lays out its
/// help: `OVERVIEW:`, `USAGE:`, `ARGUMENTS:`, titled option groups, two-space indent, help
/// text from column 26, lines wrapped at 80 columns, defaults as `(default: …)`.
enum HelpText {
  /// squeeze's version.
  static let version = SqueezeVersion.current

  /// The one-line usage.
  static let usage = "squeeze [<options>] [<path> ...]"

  /// The full `--help` text.
  static var full: String { render(.squeeze) }

  /// The `--help` text of `squeeze timeline`.
  static var timeline: String { render(.timeline) }

  /// `command`'s help: `OVERVIEW:`, the discussion, `USAGE:`, `ARGUMENTS:`, each option
  /// section, `EXIT STATUS:` and `EXAMPLES:` when it has them.
  static func render(_ command: CommandDocumentation) -> String {
    var lines: [String] = []
    lines.append("OVERVIEW: \(command.abstract)")
    for paragraph in command.discussion {
      lines.append("")
      lines.append(contentsOf: wrap(paragraph, indent: 0))
    }
    lines.append("")
    lines.append("USAGE: \(command.usage[0])")
    for more in command.usage.dropFirst() { lines.append("       \(more)") }
    lines.append("")
    lines.append("ARGUMENTS:")
    for argument in command.arguments {
      lines.append(contentsOf: entry(argument.label, argument.help))
    }
    for section in command.sections {
      let shown = section.options.filter { !$0.hidden }
      guard !shown.isEmpty else { continue }
      lines.append("")
      lines.append("\(section.title):")
      for option in shown { lines.append(contentsOf: entry(option.label, option.helpWithDefault)) }
    }
    if !command.exitStatuses.isEmpty {
      lines.append("")
      lines.append("EXIT STATUS:")
      for (status, meaning) in command.exitStatuses {
        lines.append(contentsOf: entry(status, meaning))
      }
    }
    if !command.examples.isEmpty {
      lines.append("")
      lines.append("EXAMPLES:")
      for (description, example) in command.examples {
        lines.append(contentsOf: self.example(description, example))
      }
      // The last example's blank line ends the text.
      lines.removeLast()
    }
    return lines.joined(separator: "\n") + "\n"
  }

  /// The text printed for a usage error (on stderr), swift-argument-parser's shape:
  /// `Error: <what>`, a `Help:` line naming the argument or option when there is one, the
  /// usage of the command it concerns and where to read more. With no argument at all after
  /// a command that needs one (`squeeze timeline`), its whole help follows instead of the
  /// usage, as swift-argument-parser does.
  static func usageError(_ error: UsageError) -> String {
    let timeline = error.concernsTimeline
    let command: CommandDocumentation = timeline ? .timeline : .squeeze
    var text = "Error: \(error)\n"
    if error.hadNoArguments {
      return text + "\n" + render(command)
    }
    if let help = error.helpLine(in: command) { text += "Help:  \(help)\n" }
    text += "Usage: \(command.usage[0])\n"
    text += "  See '\(command.name) --help' for more information.\n"
    return text
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
