import Foundation
import SqueezeEngines

/// `--json`: one JSON object on stdout at the end of a run (its schema: the user's guide,
/// `UsersGuide.md` in `SqueezeCore.docc`, "The --json summary").
struct JSONSummary {
  /// The version of the objects squeeze prints with `--json` (`"schema"` in each; an object
  /// without one is version 1, from before `ratio` meant compressed ÷ uncompressed in every
  /// mode). Independent of the task log's own schema.
  static let schema = 2

  let mode: Options.Mode
  let results: RunResults
  let discovery: DiscoveryResult
  let jobs: Int
  /// The CPUs this process may use (`cpus`, `affinityCPUs`, `cgroupQuotaCPUs`).
  let cpus: CPUAllowance
  let level: CompressionLevel
  /// `--engine`.
  let engine: Engine
  /// The chunk size used, in bytes (`--block-size`, or the engine's default).
  let blockSize: Int
  let isolation: Isolation
  let wallSeconds: Double
  let cpuSeconds: Double
  let hangs: HangReport
  let dryRun: Bool
  /// `--dry-run --json`: the plan, one object per step (`plan`).
  var plan: [DryRun.Step]? = nil

  /// The key under `files` counting the files done in this mode.
  var doneKey: String {
    switch mode {
    case .compress: "compressed"
    case .decompress: "decompressed"
    case .test: "tested"
    case .list: "listed"
    }
  }

  /// Compressed bytes ÷ uncompressed bytes of the files done, whichever way the run went
  /// (`bytesOut / bytesIn` compressing, `bytesIn / bytesOut` restoring or testing), or nil
  /// when nothing uncompressed was there to measure.
  var ratio: Double? {
    let (compressed, uncompressed) =
      mode == .compress ? (results.bytesOut, results.bytesIn) : (results.bytesIn, results.bytesOut)
    return uncompressed > 0 ? Double(compressed) / Double(uncompressed) : nil
  }

  /// `value` rounded to `decimals` decimals, as a number JSON prints without float noise.
  static func rounded(_ value: Double, _ decimals: Int) -> NSDecimalNumber {
    NSDecimalNumber(string: ByteFormat.fixed(value, decimals))
  }

  /// The object, as one line of JSON with sorted keys.
  var text: String {
    var skipped: [String: Int] = [:]
    for (reason, count) in discovery.skipCounts { skipped[reason.rawValue] = count }
    let failed: [[String: String]] =
      discovery.failures.map { ["path": $0.path.displayString, "cause": $0.cause] }
      + results.failures.map { ["path": $0.path.displayString, "cause": $0.failure.description] }
      + results.entryFailures.map { ["path": $0.path.displayString, "cause": $0.cause] }
    var files: [String: Any] = [
      "selected": discovery.files.files.count,
      doneKey: results.done,
      "upToDate": results.upToDate,
      "skipped": ["total": discovery.skippedCount, "byReason": skipped],
      "failed": ["count": failed.count, "list": failed],
    ]
    if mode == .compress { files["grown"] = results.grown }
    if mode == .compress || mode == .decompress {
      files["removed"] = results.removed
      files["keptHardLinked"] = results.keptHardLinked
      files["keptChanged"] = results.keptChanged
      files["hardLinked"] = results.hardLinked
      files["symbolicLinks"] = ["written": results.linksWritten, "upToDate": results.linksUpToDate]
    }
    if mode == .compress {
      files["deleted"] = results.deleted
      files["keptForeign"] = results.keptForeign
    }
    var object: [String: Any] = [
      "mode": mode.rawValue,
      "dryRun": dryRun,
      "interrupted": results.interrupted,
      "files": files,
      "bytesIn": results.bytesIn,
      "bytesOut": results.bytesOut,
      "schema": Self.schema,
      "ratio": ratio.map { Self.rounded($0, 4) } ?? NSNull(),
      "wallSeconds": Self.rounded(wallSeconds, 3),
      "cpuSeconds": Self.rounded(cpuSeconds, 3),
      "jobs": jobs,
      "cpus": cpus.count,
      "affinityCPUs": cpus.affinityCPUs,
      "cgroupQuotaCPUs": cpus.quota.map { Self.rounded($0.cpus, 3) } ?? NSNull(),
      "level": Int(level.value),
      "engine": engine.rawValue,
      "blockSize": blockSize,
      "isolation": isolation.rawValue,
      "deletionsSkipped": results.deletionsSkipped,
      "hangs": hangs.hangs,
      "microhangs": hangs.microhangs,
      "worstLagMs": Self.rounded(hangs.worstLag * 1000, 3),
    ]
    if let plan { object["plan"] = plan.map(\.json) }
    let data =
      (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
      ?? Data("{}".utf8)
    return String(decoding: data, as: UTF8.self) + "\n"
  }
}
