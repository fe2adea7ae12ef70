/// The zsh completion script: a `#compdef squeeze` function on `fpath` (`_squeeze`) that
/// hands zsh's `_arguments` one spec per option, as swift-argument-parser's zsh generator
/// does: `'(-o --output)'{-o,--output}'[help]:dir:_files -/'`. An option that may be
/// repeated starts with `*`; the others are not offered again once given.
enum ZshCompletionScript {
  /// The script for `command` and its subcommands.
  static func render(_ command: CommandDocumentation) -> String {
    var lines = ["#compdef \(command.name)", CompletionScript.banner(.zsh), ""]
    for subcommand in command.subcommands {
      lines.append(contentsOf: function(for: subcommand, root: command))
      lines.append("")
    }
    lines.append(contentsOf: function(for: command, root: command))
    lines.append("")
    lines.append(#"\#(CompletionScript.functionName(command)) "$@""#)
    return lines.joined(separator: "\n") + "\n"
  }

  /// The function of one command.
  static func function(for command: CommandDocumentation, root: CommandDocumentation)
    -> [String]
  {
    let isRoot = command.name == root.name
    var lines = ["\(CompletionScript.functionName(command))() {"]
    if isRoot {
      for subcommand in command.subcommands {
        lines.append(
          #"    if (( CURRENT > 2 )) && [[ ${words[2]} == \#(subcommand.commandWord) ]]; then"#)
        lines.append("        shift words")
        lines.append("        (( CURRENT-- ))")
        lines.append("        \(CompletionScript.functionName(subcommand))")
        lines.append("        return")
        lines.append("    fi")
      }
    }
    lines.append("    local -a specs")
    lines.append("    specs=(")
    for option in command.options {
      lines.append("        " + spec(option))
    }
    for argument in command.arguments {
      let action = self.action(argument.completion)
      let message = ZshCompletionScript.escaped(String(argument.label.dropFirst().dropLast()))
      if isRoot && !command.subcommands.isEmpty && argument.repeats {
        let names = command.subcommands.map(\.commandWord).joined(separator: " ")
        lines.append(
          "        "
            + CompletionScript.singleQuoted(
              "1: :_alternative 'commands:command:(\(names))' 'files:\(message):_files'"))
      }
      lines.append(
        "        "
          + CompletionScript.singleQuoted("\(argument.repeats ? "*" : ""):\(message):\(action)"))
    }
    lines.append("    )")
    lines.append(#"    _arguments -s -S : "${specs[@]}""#)
    lines.append("}")
    return lines
  }

  /// The `_arguments` spec of one option.
  static func spec(_ option: OptionDocumentation) -> String {
    let names = option.spellings
    let description = "[\(escaped(option.summary))]"
    var value = ""
    if let label = option.valueLabel {
      value = ":\(escaped(message(label))):\(action(option.completion))"
    }
    let repeatMark = option.repeats ? "*" : ""
    if names.count == 1 {
      return CompletionScript.singleQuoted(repeatMark + names[0] + description + value)
    }
    let exclusion = option.repeats ? "*" : "(\(names.joined(separator: " ")))"
    return CompletionScript.singleQuoted(exclusion) + "{" + names.joined(separator: ",") + "}"
      + CompletionScript.singleQuoted(description + value)
  }

  /// What zsh shows while a value is typed: the label without its angle brackets, `n` for
  /// `n`, `k/n` for `--shard`'s `k>/<n` (the label that `--help` prints as `<k>/<n>`).
  static func message(_ label: String) -> String {
    label.filter { $0 != "<" && $0 != ">" }
  }

  /// The `_arguments` action for a value.
  static func action(_ completion: ValueCompletion) -> String {
    switch completion {
    case .none: " "
    case .files: "_files"
    case .folders: "_files -/"
    case .choices(let words): "(\(words.joined(separator: " ")))"
    }
  }

  /// `text` safe inside an `_arguments` description or message: brackets and colons
  /// escaped.
  static func escaped(_ text: String) -> String {
    var result = ""
    for character in text {
      if "[]:\\".contains(character) { result.append("\\") }
      result.append(character)
    }
    return result
  }
}
