import Foundation
import Glibc
import TestSupport
import Testing

@testable import SqueezeCore

/// The built binary fed random hostile values (``HostileValues``) for every option that takes
/// one, as bytes: it exits 0, 1 or 64, with a message on stderr for 1 and 64, and is never
/// ended by a signal. Seeded: a failure names its seed, and `SQUEEZE_PROPERTY_SEED=<seed>`
/// replays it.
@Suite struct BinaryArgumentPropertyTests {
  /// Runs per option and seed.
  static let runs = 6

  /// Every option that takes a value, by its synopsis, and the other places a value goes:
  /// the digits of a level after one dash, and `squeeze timeline`'s log and `-o`.
  static let targets: [String] =
    OptionTable.options.filter { $0.valueLabel != nil }.map(\.synopsis)
    + ["-<digits>", "timeline <task-log>", "timeline -o <file>"]

  /// Values that name files are put inside `folder` (a hostile value still follows `o`), so
  /// that no run writes outside it.
  static let pathLike: Set<String> = ["--output <dir>", "--task-log <file>", "timeline -o <file>"]

  /// The command line for `target` with `value`, around the input folder `input`.
  static func arguments(
    _ target: String, value: [UInt8], folder: String, using generator: inout SeededGenerator
  ) -> [[UInt8]] {
    let inside = Array("\(folder)/o".utf8) + value.filter { $0 != UInt8(ascii: "/") }
    let input = Array("\(folder)/in".utf8)
    switch target {
    case "-<digits>":
      return [[UInt8(ascii: "-")] + value.filter { (0x30...0x39).contains($0) } + [0x31], input]
    case "timeline <task-log>":
      return [Array("timeline".utf8), inside]
    case "timeline -o <file>":
      return [Array("timeline".utf8), Array("\(folder)/in/a.txt".utf8), Array("-o".utf8), inside]
    default:
      guard let option = OptionTable.options.first(where: { $0.synopsis == target }) else {
        return []
      }
      let given = pathLike.contains(target) ? inside : value
      let mode = ["", "-d", "-t", "-l", "--dry-run", "-v"].randomElement(using: &generator) ?? ""
      return (mode.isEmpty ? [] : [Array(mode.utf8)])
        + HostileValues.spell(
          long: option.long, short: option.short, value: given, using: &generator) + [input]
    }
  }

  @Test(arguments: targets)
  func theBinaryExitsWithZeroOneOrSixtyFourAndNoSignal(target: String) throws {
    for seed in HostileValues.seeds {
      // One stream per target, the same on every run.
      var generator = SeededGenerator(seed: seed ^ FNV1a.hash64(Array(target.utf8)))
      for run in 0..<Self.runs {
        let folder = TemporaryFolder("property")
        try folder.write("in/a.txt", text: "alpha alpha alpha\n")
        // Arguments are at most 128 KiB each (MAX_ARG_STRLEN).
        let value = HostileValues.value(using: &generator, maximumLength: 100_000)
        let arguments = Self.arguments(
          target, value: value, folder: folder.path, using: &generator)
        let result = try SqueezeBinary.run(rawArguments: arguments, currentDirectory: folder.path)
        let shown = arguments.map { RawPath(bytes: $0.prefix(200)).displayString }
        let context = "seed \(seed) (SQUEEZE_PROPERTY_SEED=\(seed)), \(target) run \(run): \(shown)"
        #expect(result.signal == nil, "\(context): ended by signal \(result.signal ?? 0)")
        #expect([0, 1, 64].contains(result.status), "\(context): status \(result.status)")
        if result.status != 0 {
          #expect(!result.stderr.isEmpty, "\(context): status \(result.status) and no message")
        }
        if result.signal != nil || ![0, 1, 64].contains(result.status) { return }
      }
    }
  }
}
