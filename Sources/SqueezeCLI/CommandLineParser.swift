import SqueezeSystem

/// Parses squeeze's command line: pure, no process state, unit-tested directly.
///
/// Conventions, as swift-argument-parser and GNU tools: `--name value` and `--name=value`;
/// short flags combine (`-kv`); a short option's value may follow it (`-j 4`, `-j4`); `--`
/// ends the options; `-` alone is a path (standard input). `-h`/`--help` wins over everything
/// else; `--version` and the generators (`--generate-manual`,
/// `--generate-completion-script <shell>`) over everything but a syntax error. Modes combine
/// as in gzip 1.12: `-l` wins over `-t`, and both over `-d`.
enum CommandLineParser {
  /// Parses `arguments` (without the program name).
  ///
  /// - Returns: the command, or the first usage error.
  static func parse(_ arguments: [RawPath]) -> Result<ParsedCommand, UsageError> {
    if arguments.first == "timeline" { return parseTimeline(Array(arguments.dropFirst())) }
    // A help request wins even over errors elsewhere on the line, as in swift-argument-parser.
    for argument in arguments {
      if argument == "--" { break }
      if argument == "-h" || argument == "--help" { return .success(.help) }
    }
    var options = Options()
    var index = 0
    var onlyPaths = false
    do throws(UsageError) {
      while index < arguments.count {
        let argument = arguments[index]
        let bytes = argument.bytes
        index += 1
        if onlyPaths || argument == "-" || bytes.first != dash {
          options.paths.append(argument)
          continue
        }
        if argument == "--" {
          onlyPaths = true
          continue
        }
        if bytes.count > 1 && bytes[1] == dash {
          let body = bytes[2...]
          let equals = body.firstIndex(of: UInt8(ascii: "="))
          // Option names are ASCII: one that is not UTF-8 is unknown, and shown with \xHH.
          let name = RawPath(bytes: body[..<(equals ?? body.endIndex)]).displayString
          let attached = equals.map { OptionValue(bytes: body[($0 + 1)...]) }
          guard let option = OptionTable.long(name) else {
            throw UsageError.unknownOption(
              "--" + name,
              suggestion: nearest(
                to: "--" + name, among: OptionTable.options.map(\.documentation)))
          }
          if option.valueLabel == nil {
            guard attached == nil else { throw UsageError.unexpectedValue(option: "--" + name) }
            try option.apply(&options, OptionValue(bytes: []), option.synopsis)
          } else if let attached {
            try option.apply(&options, attached, option.synopsis)
          } else {
            guard index < arguments.count else {
              throw UsageError.missingValue(option: option.synopsis)
            }
            let value = OptionValue(bytes: arguments[index].bytes)
            index += 1
            try option.apply(&options, value, option.synopsis)
          }
          continue
        }
        // One or more short options: -kv, -j4, -j 4. A value attached to a short option is
        // the rest of the argument's bytes, as they are.
        var position = 1
        while position < bytes.count {
          let byte = bytes[position]
          if isDigit(byte) {
            // Digits after one dash form one number, as pigz reads them: -11 is level 11.
            var end = position + 1
            while end < bytes.count && isDigit(bytes[end]) { end += 1 }
            let digits = String(decoding: bytes[position..<end], as: UTF8.self)
            try OptionTable.applyLevel(OptionValue(digits), to: &options, spelling: "-" + digits)
            position = end
            continue
          }
          // A letter is one byte when ASCII; otherwise the whole UTF-8 character (or one byte
          // that is not UTF-8), which no option has, named in the error.
          let length =
            byte < 0x80 ? 1 : max(1, DisplayEscaping.validSequenceLength(bytes, at: position))
          let letter = bytes[position..<(position + length)]
          position += length
          guard length == 1, let option = OptionTable.short(Character(Unicode.Scalar(byte))) else {
            throw UsageError.unknownOption("-" + RawPath(bytes: letter).displayString)
          }
          if option.valueLabel == nil {
            try option.apply(&options, OptionValue(bytes: []), option.synopsis)
            continue
          }
          let value: OptionValue
          if position < bytes.count {
            value = OptionValue(bytes: bytes[position...])
            position = bytes.count
          } else {
            guard index < arguments.count else {
              throw UsageError.missingValue(option: option.synopsis)
            }
            value = OptionValue(bytes: arguments[index].bytes)
            index += 1
          }
          try option.apply(&options, value, option.synopsis)
        }
      }
    } catch {
      if options.request == .help { return .success(.help) }
      return .failure(error)
    }
    switch options.request {
    case .help: return .success(.help)
    case .version: return .success(.version)
    case .manual: return .success(.manual)
    case .completionScript(let shell): return .success(.completionScript(shell))
    case nil: break
    }
    if let conflict = conflict(in: options) { return .failure(conflict) }
    // Defaults that depend on the engine, and the level against it, once every option is read.
    guard options.engine.levels.contains(Int(options.level.value)) else {
      return .failure(.levelNeedsOtherEngine(Int(options.level.value), engine: options.engine))
    }
    options.chunkSize = options.blockSize ?? options.engine.defaultChunkSize
    return .success(.run(options))
  }

  /// `-`, which starts every option.
  private static let dash = UInt8(ascii: "-")

  /// True for the ASCII digits `0` to `9`.
  private static func isDigit(_ byte: UInt8) -> Bool {
    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
  }

  /// The first pair of options that cannot go together, as a usage error.
  static func conflict(in options: Options) -> UsageError? {
    let modeFlag: String? =
      switch options.mode {
      case .compress: nil
      case .decompress: nil
      case .test: "--test"
      case .list: "--list"
      }
    if options.toStandardOutput && options.output != nil {
      return .conflict("--stdout", "--output")
    }
    if options.removeSources {
      if options.toStandardOutput { return .conflict("--rm", "--stdout") }
      if options.keep { return .conflict("--rm", "--keep") }
      if let modeFlag { return .conflict("--rm", modeFlag) }
    }
    if let modeFlag, options.output != nil { return .conflict("--output", modeFlag) }
    if options.dryRun {
      if options.toStandardOutput { return .conflict("--dry-run", "--stdout") }
      if let modeFlag { return .conflict("--dry-run", modeFlag) }
    }
    if options.json && options.toStandardOutput { return .conflict("--json", "--stdout") }
    if let conflict = checkConflict(in: options, modeFlag: modeFlag) { return conflict }
    if let conflict = deleteConflict(in: options) { return conflict }
    if let conflict = linkDestinationConflict(in: options) { return conflict }
    // Samples are written only into the task log: an interval without one would be
    // silently ignored.
    if options.sampleIntervalGiven && options.taskLog == nil {
      return .requires("--sample-interval", "--task-log")
    }
    // The task log follows the scheduler's tasks: streams, listings and dry runs have none.
    if options.taskLog != nil {
      if options.toStandardOutput { return .conflict("--task-log", "--stdout") }
      if options.mode == .list { return .conflict("--task-log", "--list") }
      if options.dryRun { return .conflict("--task-log", "--dry-run") }
    }
    if options.paths.contains("-") && options.paths.count > 1 && !options.toStandardOutput {
      return .standardInputAmongPaths
    }
    // Standard input goes to standard output: options that need files, or stdout for
    // themselves, need a path.
    if options.readsStandardInput, let (option, reason) = needingAPath(options) {
      return .needsPath(option: option, reason: reason)
    }
    return nil
  }

  /// The first option that cannot work on standard input compressed to standard output, and
  /// why (what `squeeze --json` with no path says).
  private static func needingAPath(_ options: Options) -> (String, String)? {
    let stream = "with none, standard input is compressed to standard output"
    if options.json {
      return ("--json", "\(stream), where the JSON summary would be mixed into the data")
    }
    if options.dryRun { return ("--dry-run", "\(stream); there are no files to plan") }
    if options.output != nil {
      return ("--output", "\(stream), not into a folder")
    }
    if options.removeSources { return ("--rm", "\(stream); there is no original to remove") }
    if options.taskLog != nil {
      return ("--task-log", "\(stream) as one stream, which has no tasks to log")
    }
    return nil
  }

  /// `--check` compares a mirror made by compressing with its source: it writes nothing, so
  /// options that write or remove have nothing to do with it.
  static func checkConflict(in options: Options, modeFlag: String?) -> UsageError? {
    guard options.check else { return nil }
    if options.mode == .decompress { return .conflict("--check", "--decompress") }
    if let modeFlag { return .conflict("--check", modeFlag) }
    if options.toStandardOutput { return .conflict("--check", "--stdout") }
    if options.removeSources { return .conflict("--check", "--rm") }
    if options.deletes { return .conflict("--check", "--delete") }
    if options.dryRun { return .conflict("--check", "--dry-run") }
    if options.taskLog != nil { return .conflict("--check", "--task-log") }
    // A snapshot is checked as the mirror it is (`--check -o NIGHT SRC/`), not while made.
    if !options.linkDestinations.isEmpty { return .conflict("--check", "--link-dest") }
    if options.output == nil { return .requires("--check", "--output") }
    return nil
  }

  /// `--delete` prunes a mirror being compressed into, and nothing else: `-n` outputs carry
  /// no name to match, `--rm` would delete the only copy, shards would prune each other.
  static func deleteConflict(in options: Options) -> UsageError? {
    // A limit on deletions with nothing to delete would be silently ignored.
    if options.maxDeletions != nil && !options.deletes {
      return .requires("--max-delete", "--delete")
    }
    guard options.deletes else { return nil }
    if options.mode == .decompress { return .conflict("--delete", "--decompress") }
    if options.mode == .test { return .conflict("--delete", "--test") }
    if options.mode == .list { return .conflict("--delete", "--list") }
    if options.toStandardOutput { return .conflict("--delete", "--stdout") }
    if options.removeSources { return .conflict("--delete", "--rm") }
    if options.shard != nil { return .conflict("--delete", "--shard") }
    if options.headerNameAndTime == false { return .conflict("--delete", "--no-name") }
    if options.output == nil { return .requires("--delete", "--output") }
    return nil
  }

  /// `--link-dest` makes a snapshot of files being compressed into a folder, and nothing
  /// else: `-n` outputs carry no name, so no output could be judged unchanged; `--rm` would
  /// make the snapshot the only copy; shards write one folder from several runs.
  static func linkDestinationConflict(in options: Options) -> UsageError? {
    guard !options.linkDestinations.isEmpty else { return nil }
    if options.mode == .decompress { return .conflict("--link-dest", "--decompress") }
    if options.mode == .test { return .conflict("--link-dest", "--test") }
    if options.mode == .list { return .conflict("--link-dest", "--list") }
    if options.toStandardOutput { return .conflict("--link-dest", "--stdout") }
    if options.removeSources { return .conflict("--link-dest", "--rm") }
    if options.shard != nil { return .conflict("--link-dest", "--shard") }
    if options.headerNameAndTime == false { return .conflict("--link-dest", "--no-name") }
    if options.output == nil { return .requires("--link-dest", "--output") }
    return nil
  }

  /// The long option nearest to `typed`, as swift-argument-parser suggests one: edit distance
  /// under 4, short names left out, the closest first in table order.
  static func nearest(to typed: String, among options: [OptionDocumentation]) -> String? {
    let candidates = options.compactMap { $0.long.map { "--" + $0 } }
      .map { (name: $0, distance: $0.editDistance(to: typed)) }
      .filter { $0.distance < 4 }
    return candidates.min { $0.distance < $1.distance }?.name
  }

  /// Parses the arguments of `squeeze timeline`: `<log> [-o <file>] [-f]`, with the names of
  /// ``TimelineOptionTable``. Errors are wrapped in ``UsageError/inTimeline(_:)`` so its own
  /// usage is printed; no argument at all prints its whole help after the error.
  static func parseTimeline(_ arguments: [RawPath]) -> Result<ParsedCommand, UsageError> {
    var log: RawPath? = nil
    var output: RawPath? = nil
    var force = false
    var index = 0
    var onlyPaths = false
    let outputOption = TimelineOptionTable.output
    func failure(_ error: UsageError) -> Result<ParsedCommand, UsageError> {
      .failure(.inTimeline(error))
    }
    while index < arguments.count {
      let argument = arguments[index]
      index += 1
      let text = String(decoding: argument.bytes, as: UTF8.self)
      if !onlyPaths && TimelineOptionTable.help.spellings.contains(text) {
        return .success(.timelineHelp)
      }
      if !onlyPaths && text == "--" {
        onlyPaths = true
        continue
      }
      if !onlyPaths && TimelineOptionTable.force.spellings.contains(text) {
        force = true
        continue
      }
      let attached = "--\(outputOption.long ?? "")="
      if !onlyPaths && (outputOption.spellings.contains(text) || text.hasPrefix(attached)) {
        if text.hasPrefix(attached) {
          output = RawPath(bytes: argument.bytes.dropFirst(attached.utf8.count))
        } else {
          guard index < arguments.count else {
            return failure(.missingValue(option: outputOption.synopsis))
          }
          output = arguments[index]
          index += 1
        }
        continue
      }
      if !onlyPaths && text.hasPrefix("-") && text != "-" {
        let name = String(argument.displayString.prefix { $0 != "=" })
        let suggestion =
          name.hasPrefix("--")
          ? nearest(to: name, among: TimelineOptionTable.options) : nil
        return failure(.unknownOption(name, suggestion: suggestion))
      }
      guard log == nil else { return failure(.unexpectedArgument(argument.displayString)) }
      log = argument
    }
    guard let log else {
      let missing = UsageError.missingArgument("<task-log>")
      return failure(arguments.isEmpty ? .noArguments(missing) : missing)
    }
    let options = TimelineOptions(log: log, output: output, force: force)
    if let output, options.format == nil {
      return failure(
        .invalidValue(
          output.displayString, option: "--output <file>",
          reason: "expected a name ending in .svg, .html or .json"))
    }
    return .success(.timeline(options))
  }

  /// Parses `String` arguments (tests, and callers with text at hand).
  static func parse(_ arguments: [String]) -> Result<ParsedCommand, UsageError> {
    parse(arguments.map { RawPath($0) })
  }
}
