import Dispatch
import SqueezeCore
import SqueezeSystem

/// The `squeeze` command: parses the command line and runs the chosen mode. The executable's
/// `@main` only calls ``start()``.
public enum SqueezeCommand {
  /// Runs squeeze as this process, with its arguments, and exits with the status the
  /// command returns.
  ///
  /// Synchronous at first, so that standard descriptors closed by the caller are reserved
  /// (`StandardDescriptors/reserve()`) before the concurrency runtime opens anything, the soft
  /// open-file limit is raised toward the hard one, and the descriptor table is grown while
  /// the process has one thread (`DescriptorTable`); the command then runs as a main-actor
  /// task on the main dispatch queue, as an `async` main would.
  public static func start() -> Never {
    StandardDescriptors.reserve()
    // A soft open-file limit below the table is raised first, where the hard limit allows.
    ProcessControl.raiseOpenFileLimit(toward: UInt64(DescriptorTable.reservedCount))
    DescriptorTable.reserve()
    // The kernel's name stays the program's ("squeeze": renaming the main thread renames
    // the process in ps); the task log names it by what it is.
    ThreadRoster.register("main thread")
    Task { @MainActor in
      ProcessControl.exit(await main(arguments: processArguments))
    }
    dispatchMain()
  }

  /// Runs squeeze with `arguments` (without the program name) and returns the exit status.
  @MainActor
  public static func main(arguments: [RawPath]) async -> Int32 {
    // A write past a file-size limit must fail with EFBIG, not kill the process.
    ProcessControl.ignoreFileSizeLimit()
    switch CommandLineParser.parse(arguments) {
    case .failure(let error):
      TextOutput.standardError.write(HelpText.usageError(error))
      return ExitStatus.usage.rawValue
    case .success(.help):
      TextOutput.standardOutput.write(HelpText.full)
      return ExitStatus.success.rawValue
    case .success(.version):
      TextOutput.standardOutput.write("squeeze \(HelpText.version)\n")
      return ExitStatus.success.rawValue
    case .success(.manual):
      return print(ManualPage.render(.squeeze), what: "the man page")
    case .success(.completionScript(let shell)):
      return print(CompletionScript.render(.squeeze, for: shell), what: "the completion script")
    case .success(.run(let options)):
      // The options are resolved once; every command reads the result.
      let configuration = RunConfiguration(options: options)
      if configuration.mode == .list {
        return await ListCommand(configuration: configuration).run().rawValue
      }
      if configuration.toStandardOutput || configuration.readsStandardInput {
        return await StreamCommand(configuration: configuration).run().rawValue
      }
      return await RunCommand(configuration: configuration).run().rawValue
    case .success(.timeline(let options)):
      return TimelineCommand(options: options).run().rawValue
    case .success(.timelineHelp):
      TextOutput.standardOutput.write(HelpText.timeline)
      return ExitStatus.success.rawValue
    }
  }

  /// Prints a document made from the option table on stdout (`scripts/install` redirects
  /// it into a file, so a write that fails must fail the command).
  private static func print(_ text: String, what: String) -> Int32 {
    TextOutput.standardOutput.writeReporting(text, what: what)
      ? ExitStatus.success.rawValue : ExitStatus.failure.rawValue
  }

  /// The process's arguments as raw bytes (names need not be UTF-8), without the program name.
  public static var processArguments: [RawPath] { ProcessControl.arguments }

}
