/// The bash completion script: one function per command, registered with `complete -F`.
/// It needs nothing from the bash-completion package (it only uses `compgen` and
/// `compopt`), so it also works when sourced by hand.
///
/// What it completes: after an option that takes a value, that value (choices, files or
/// folders, or nothing for free text), also in the `--option=value` form (bash splits the
/// word at `=`, `COMP_WORDBREAKS`); a word starting with `-`, the command's option spellings;
/// otherwise file names, and `timeline` as the first word; after `--`, file names only (the
/// parser reads every word there as a path). Names are read one a line with
/// `mapfile`, never through an unquoted `$(…)`, whose pathname expansion would turn a name
/// such as `x*` into every name it matches.
enum BashCompletionScript {
  /// The script for `command` and its subcommands.
  static func render(_ command: CommandDocumentation) -> String {
    var lines = [CompletionScript.banner(.bash), ""]
    for subcommand in command.subcommands {
      lines.append(contentsOf: function(for: subcommand, isRoot: false))
      lines.append("")
    }
    lines.append(contentsOf: function(for: command, isRoot: true))
    lines.append("")
    lines.append("complete -F \(CompletionScript.functionName(command)) \(command.name)")
    return lines.joined(separator: "\n") + "\n"
  }

  /// The completion function of one command.
  static func function(for command: CommandDocumentation, isRoot: Bool) -> [String] {
    // Hidden rows too: `-2` is typed like `-1`, only help lists the family once.
    let options = command.options
    var lines: [String] = []
    lines.append("\(CompletionScript.functionName(command))() {")
    lines.append(#"    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}""#)
    lines.append(#"    local option="$prev" value="$cur""#)
    lines.append("    COMPREPLY=()")
    if isRoot {
      for subcommand in command.subcommands {
        lines.append(
          #"    if ((COMP_CWORD > 1)) && [[ ${COMP_WORDS[1]} == \#(subcommand.commandWord) ]]; then"#
        )
        lines.append("        \(CompletionScript.functionName(subcommand)) \"$@\"")
        lines.append("        return")
        lines.append("    fi")
      }
    }
    // After `--` every word is a path, as the parser reads it.
    if command.arguments.contains(where: { $0.completion == .files }) {
      lines.append(#"    local word"#)
      lines.append(#"    for word in "${COMP_WORDS[@]:1:COMP_CWORD-1}"; do"#)
      lines.append(#"        if [[ $word == -- ]]; then"#)
      lines.append(#"            compopt -o filenames 2>/dev/null"#)
      lines.append(#"            mapfile -t COMPREPLY < <(compgen -f -- "$cur")"#)
      lines.append(#"            return"#)
      lines.append(#"        fi"#)
      lines.append(#"    done"#)
    }
    // `--option=value`: bash makes `=` a word of its own.
    lines.append(#"    if [[ $cur == = ]]; then"#)
    lines.append(#"        value="""#)
    lines.append(#"    elif [[ $prev == = ]] && ((COMP_CWORD > 1)); then"#)
    lines.append(#"        option="${COMP_WORDS[COMP_CWORD-2]}""#)
    lines.append("    fi")
    lines.append(#"    case "$option" in"#)
    for option in options where option.valueLabel != nil {
      let pattern = option.spellings.joined(separator: "|")
      lines.append("    \(pattern))")
      switch option.completion {
      case .none:
        break
      case .files:
        lines.append(#"        compopt -o filenames 2>/dev/null"#)
        lines.append(#"        mapfile -t COMPREPLY < <(compgen -f -- "$value")"#)
      case .folders:
        lines.append(#"        compopt -o filenames 2>/dev/null"#)
        lines.append(#"        mapfile -t COMPREPLY < <(compgen -d -- "$value")"#)
      case .choices(let words):
        let list = CompletionScript.singleQuoted(words.joined(separator: " "))
        lines.append(#"        COMPREPLY=($(compgen -W \#(list) -- "$value"))"#)
      }
      lines.append("        return")
      lines.append("        ;;")
    }
    lines.append("    esac")
    let words = options.flatMap(\.spellings).joined(separator: " ")
    lines.append(#"    if [[ $cur == -* ]]; then"#)
    lines.append(
      #"        COMPREPLY=($(compgen -W \#(CompletionScript.singleQuoted(words)) -- "$cur"))"#)
    lines.append("        return")
    lines.append("    fi")
    if isRoot && !command.subcommands.isEmpty {
      let names = command.subcommands.map(\.commandWord).joined(separator: " ")
      lines.append("    if ((COMP_CWORD == 1)); then")
      lines.append(
        #"        COMPREPLY=($(compgen -W \#(CompletionScript.singleQuoted(names)) -- "$cur"))"#)
      lines.append("    fi")
    }
    if command.arguments.contains(where: { $0.completion == .files }) {
      lines.append(#"    compopt -o filenames 2>/dev/null"#)
      lines.append(#"    mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -f -- "$cur")"#)
    }
    lines.append("}")
    return lines
  }
}
