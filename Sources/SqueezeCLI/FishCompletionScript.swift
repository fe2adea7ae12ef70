/// The fish completion script: one `complete -c squeeze` line per option, with a condition
/// that tells squeeze's own options from those of `squeeze timeline`. `-r` marks an option
/// that takes a value, `-x` one whose value is not a file (choices, or free text), `-F` one
/// whose value is a file.
enum FishCompletionScript {
  /// The script for `command` and its subcommands.
  static func render(_ command: CommandDocumentation) -> String {
    let name = command.name
    var lines = [CompletionScript.banner(.fish), ""]
    let helper = "__\(name)_using_subcommand"
    lines.append("function \(helper) --description 'the subcommand on the command line, if any'")
    lines.append("    set -l tokens (commandline -opc)")
    lines.append("    test (count $tokens) -ge 2; and contains -- $tokens[2] $argv")
    lines.append("end")
    lines.append("")
    lines.append("function __\(name)_first_argument --description 'completing the first argument'")
    lines.append("    test (count (commandline -opc)) -eq 1")
    lines.append("end")
    lines.append("")
    let subcommandWords = command.subcommands.map(\.commandWord).joined(separator: " ")
    let rootCondition = subcommandWords.isEmpty ? nil : "not \(helper) \(subcommandWords)"
    for option in command.options {
      lines.append(line(for: option, command: name, condition: rootCondition))
    }
    for subcommand in command.subcommands {
      lines.append(
        "complete -c \(name) -n __\(name)_first_argument -a \(subcommand.commandWord) -d "
          + quoted(ManualPage.nameDescription(subcommand.abstract)))
      for option in subcommand.options {
        lines.append(
          line(for: option, command: name, condition: "\(helper) \(subcommand.commandWord)"))
      }
    }
    return lines.joined(separator: "\n") + "\n"
  }

  /// The `complete` line of one option.
  static func line(for option: OptionDocumentation, command: String, condition: String?)
    -> String
  {
    var parts = ["complete -c \(command)"]
    if let condition { parts.append("-n " + quoted(condition)) }
    if let short = option.short { parts.append("-s \(short)") }
    if let long = option.long { parts.append("-l \(long)") }
    if option.valueLabel != nil {
      switch option.completion {
      case .none: parts.append("-x")
      case .files: parts.append("-r -F")
      case .folders: parts.append("-x -a '(__fish_complete_directories (commandline -ct))'")
      case .choices(let words): parts.append("-x -a " + quoted(words.joined(separator: " ")))
      }
    }
    parts.append("-d " + quoted(option.summary))
    return parts.joined(separator: " ")
  }

  /// `text` in fish's single quotes: `\` and `'` escaped with a backslash.
  static func quoted(_ text: String) -> String {
    var result = "'"
    for character in text {
      if character == "\\" || character == "'" { result.append("\\") }
      result.append(character)
    }
    return result + "'"
  }
}
