// libFuzzer target for squeeze's command-line parser (CommandLineParser, OptionTable,
// ValueParsers) and what a run computes from the options before it touches a file. Not a
// SwiftPM target: `scripts/fuzz arguments` compiles this file with the sources of
// SqueezeCore, all with `swiftc -sanitize=fuzzer,address`.
//
// The input is the arguments after the program name, separated by NUL bytes, as
// /proc/<pid>/cmdline holds them (no argument can hold a NUL: the kernel passes C strings).
// For every input it checks, beyond "no trap, no sanitizer report":
// - a usage error has a message and prints as one (`Error: …`);
// - what parses is in range: --jobs, --block-size and the chunk size, --older-than,
//   --sample-interval, the level for the engine, --shard, the suffix, the output folder;
// - what a run computes first can be computed: the --older-than cutoff (not in the
//   future), the width, the chunking; `squeeze timeline`'s output and format.

import Glibc

/// Stops the fuzzer with `message` (-O strips precondition messages: say what is wrong first).
func stopFuzzing(_ message: String, _ arguments: [RawPath]) -> Never {
  fputs("\(message): \(arguments.map(\.displayString))\n", stderr)
  fatalError(message)
}

/// libFuzzer's entry point: checks one command line (see the top of the file).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
  let data = UnsafeRawBufferPointer(start: start, count: count)
  let arguments = data.split(separator: 0, omittingEmptySubsequences: false).map {
    RawPath(bytes: $0)
  }
  switch CommandLineParser.parse(arguments) {
  case .failure(let error):
    if error.description.isEmpty { stopFuzzing("a usage error without a message", arguments) }
    if !HelpText.usageError(error).hasPrefix("Error: ") {
      stopFuzzing("a usage error not printed as one", arguments)
    }
  case .success(.run(let options)):
    checkParsed(options, arguments)
  case .success(.timeline(let timeline)):
    if timeline.output != nil && timeline.format == nil {
      stopFuzzing("a timeline output squeeze cannot write", arguments)
    }
    _ = timeline.resolvedOutput
  case .success:
    break
  }
  return 0
}

/// The ranges of what parsed, and what a run computes from it first.
func checkParsed(_ options: Options, _ arguments: [RawPath]) {
  if let jobs = options.jobs, !OptionTable.jobsRange.contains(jobs) {
    stopFuzzing("--jobs out of range", arguments)
  }
  let sizes = ChunkLayout.minimumChunkSize...ChunkLayout.maximumChunkSize
  if let size = options.blockSize, !sizes.contains(size) {
    stopFuzzing("--block-size out of range", arguments)
  }
  if !sizes.contains(options.chunkSize) { stopFuzzing("chunk size out of range", arguments) }
  if let olderThan = options.olderThan, !OptionTable.olderThanRange.contains(olderThan) {
    stopFuzzing("--older-than out of range", arguments)
  }
  if !OptionTable.sampleIntervalRange.contains(options.sampleInterval) {
    stopFuzzing("--sample-interval out of range", arguments)
  }
  if !options.engine.levels.contains(Int(options.level.value)) {
    stopFuzzing("a level the engine does not have", arguments)
  }
  if let shard = options.shard, !(1...shard.count).contains(shard.index) {
    stopFuzzing("--shard out of range", arguments)
  }
  if options.suffix.isEmpty || options.suffix.bytes.contains(UInt8(ascii: "/")) {
    stopFuzzing("a suffix that is empty or holds '/'", arguments)
  }
  if options.output?.isEmpty == true { stopFuzzing("an empty output folder", arguments) }
  if let cutoff = RunCommand.selection(from: options).modifiedBefore, cutoff > .now {
    stopFuzzing("an --older-than cutoff in the future", arguments)
  }
  let settings = RunSettings(options: options, cpus: CPUAllowance(affinityCPUs: 2, quota: nil))
  if settings.jobs < 1 { stopFuzzing("a width below 1", arguments) }
  _ = options.chunking
}
