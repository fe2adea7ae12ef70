import Foundation
import Testing

@testable import SqueezeCLI
@testable import SqueezeCore
@testable import SqueezeSystem
@testable import SqueezeTaskLog

/// A compression run built in the test process as ``RunCommand`` builds it (parse, discover,
/// plan, compressor), with no reporter, for tests that read what the command line does not
/// show: the progress feed's last totals, the publisher's outcomes.
struct InProcessRun {
  let compressor: ParallelCompressor
  let plan: RunPlan
  let namer: TemporaryNamer
  /// The run's stop flag, as the compressor sees it.
  let stop: AtomicFlag

  /// Builds the run of `arguments` (squeeze's, without the program name).
  ///
  /// - Throws: `CancellationError`, with an issue recorded, when they do not parse as a run.
  static func make(_ arguments: [String], feed: ProgressFeed = ProgressFeed()) async throws
    -> InProcessRun
  {
    guard case .success(.run(let options)) = CommandLineParser.parse(arguments.map { RawPath($0) })
    else {
      Issue.record("\(arguments) did not parse as a run")
      throw CancellationError()
    }
    let configuration = RunConfiguration(options: options)
    let settings = configuration.settings(mirrorBase: nil)
    let bases = BaseDirectories()
    let namer = TemporaryNamer()
    let list = Discovery.run(
      arguments: configuration.paths, options: configuration.selection, bases: bases,
      namer: namer
    ).files
    let plan = await RunPlan.make(
      list: list, settings: settings, bases: bases, linksHardLinks: true,
      width: configuration.jobs)
    let stop = AtomicFlag()
    let compressor = ParallelCompressor(
      work: ParallelCompressor.Work(
        configuration: configuration, settings: settings, list: list, bases: bases, plan: plan,
        folders: nil),
      tracker: TaskTracker(), feed: feed, stop: stop, namer: namer)
    return InProcessRun(compressor: compressor, plan: plan, namer: namer, stop: stop)
  }
}
