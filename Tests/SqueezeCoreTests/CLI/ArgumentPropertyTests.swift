import TestSupport
import Testing

@testable import SqueezeCore

/// The parser fed random hostile values for every option that takes one (``HostileValues``):
/// it returns a command or a usage error, never traps, and what it accepts is in range and
/// can be run (the selection's cutoff, the width). Seeded: a failure names its seed, and
/// `SQUEEZE_PROPERTY_SEED=<seed>` replays it.
@Suite struct ArgumentPropertyTests {
  /// Command lines per seed.
  static let iterations = 3000

  /// The options that take a value.
  static let valued = OptionTable.options.filter { $0.valueLabel != nil }

  /// A random command line: one to three options with hostile values, maybe the digits of a
  /// level, maybe a mode, maybe paths; sometimes `squeeze timeline`.
  static func commandLine(using generator: inout SeededGenerator) -> [[UInt8]] {
    let value = { (generator: inout SeededGenerator) in
      HostileValues.value(using: &generator, maximumLength: 20_000)
    }
    if Int.random(in: 0..<8, using: &generator) == 0 {
      var arguments = [Array("timeline".utf8), value(&generator)]
      if Bool.random(using: &generator) {
        arguments += [Array("-o".utf8), value(&generator)]
      }
      return arguments
    }
    var arguments: [[UInt8]] = []
    for _ in 0..<Int.random(in: 1...3, using: &generator) {
      if let option = valued.randomElement(using: &generator) {
        arguments += HostileValues.spell(
          long: option.long, short: option.short, value: value(&generator), using: &generator)
      }
    }
    if Bool.random(using: &generator) {
      arguments.append(
        [UInt8(ascii: "-")]
          + HostileValues.digits(
            Int.random(in: 1...30, using: &generator), using: &generator
          ).utf8)
    }
    if let mode = ["", "-d", "-t", "-l", "-c", "--dry-run", "-N", "--rsyncable"].randomElement(
      using: &generator), !mode.isEmpty
    {
      arguments.append(Array(mode.utf8))
    }
    if Bool.random(using: &generator) { arguments.append(Array("in".utf8)) }
    return arguments.shuffled(using: &generator)
  }

  /// What must hold of a parse of `arguments`; the problems found.
  static func problems(parsing arguments: [[UInt8]]) -> [String] {
    var problems: [String] = []
    switch CommandLineParser.parse(arguments.map { RawPath(bytes: $0) }) {
    case .failure(let error):
      if error.description.isEmpty { problems.append("a usage error without a message") }
      if !HelpText.usageError(error).hasPrefix("Error: ") {
        problems.append("a usage error not printed as one: \(HelpText.usageError(error))")
      }
    case .success(.run(let options)):
      if let jobs = options.jobs, !OptionTable.jobsRange.contains(jobs) {
        problems.append("jobs \(jobs)")
      }
      let sizes = ChunkLayout.minimumChunkSize...ChunkLayout.maximumChunkSize
      if let size = options.blockSize, !sizes.contains(size) {
        problems.append("block size \(size)")
      }
      if !sizes.contains(options.chunkSize) { problems.append("chunk size \(options.chunkSize)") }
      if let olderThan = options.olderThan, !OptionTable.olderThanRange.contains(olderThan) {
        problems.append("older than \(olderThan)")
      }
      if !OptionTable.sampleIntervalRange.contains(options.sampleInterval) {
        problems.append("sample interval \(options.sampleInterval)")
      }
      if !options.engine.levels.contains(Int(options.level.value)) {
        problems.append("level \(options.level) with \(options.engine)")
      }
      if let shard = options.shard, !(1...shard.count).contains(shard.index) {
        problems.append("shard \(shard.index)/\(shard.count)")
      }
      if options.suffix.isEmpty || options.suffix.bytes.contains(UInt8(ascii: "/")) {
        problems.append("suffix \(options.suffix)")
      }
      if options.output?.isEmpty == true { problems.append("an empty output folder") }
      // What a run computes from the options first.
      if let cutoff = RunCommand.selection(from: options).modifiedBefore, cutoff > .now {
        problems.append("an --older-than cutoff in the future")
      }
      let settings = RunSettings(options: options, cpus: CPUAllowance(affinityCPUs: 2, quota: nil))
      if settings.jobs < 1 { problems.append("a width of \(settings.jobs)") }
      _ = options.chunking
    case .success(.timeline(let timeline)):
      if timeline.output != nil && timeline.format == nil {
        problems.append("a timeline output squeeze cannot write")
      }
      _ = timeline.resolvedOutput
    case .success:
      break
    }
    return problems
  }

  @Test(arguments: HostileValues.seeds)
  func everyCommandLineParsesOrIsAUsageError(seed: UInt64) {
    var generator = SeededGenerator(seed: seed)
    for iteration in 0..<Self.iterations {
      let arguments = Self.commandLine(using: &generator)
      let problems = Self.problems(parsing: arguments)
      #expect(
        problems.isEmpty,
        "seed \(seed) (SQUEEZE_PROPERTY_SEED=\(seed)), command line \(iteration): \(arguments.map { RawPath(bytes: $0).displayString }): \(problems)"
      )
      if !problems.isEmpty { return }
    }
  }
}
