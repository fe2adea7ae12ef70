import Foundation

/// `--json`: one JSON object on stdout at the end of a run (schema in README.md, "--json").
struct JSONSummary {
  let mode: Options.Mode
  let results: RunResults
  let discovery: DiscoveryResult
  let jobs: Int
  /// The CPUs this process may use (`cpus`, `affinityCPUs`, `cgroupQuotaCPUs`).
  let cpus: CPUAllowance
  let level: CompressionLevel
  let isolation: Isolation
  let wallSeconds: Double
  let cpuSeconds: Double
  let hangs: HangReport
  let dryRun: Bool

  /// The key under `files` counting the files done in this mode.
  var doneKey: String {
    switch mode {
    case .compress: "compressed"
    case .decompress: "decompressed"
    case .test: "tested"
    case .list: "listed"
    }
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
    var files: [String: Any] = [
      "selected": discovery.files.files.count,
      doneKey: results.done,
      "upToDate": results.upToDate,
      "skipped": ["total": discovery.skippedCount, "byReason": skipped],
      "failed": ["count": failed.count, "list": failed],
    ]
    if mode == .compress || mode == .decompress {
      files["removed"] = results.removed
      files["keptHardLinked"] = results.keptHardLinked
      files["keptChanged"] = results.keptChanged
    }
    let object: [String: Any] = [
      "mode": mode.rawValue,
      "dryRun": dryRun,
      "interrupted": results.interrupted,
      "files": files,
      "bytesIn": results.bytesIn,
      "bytesOut": results.bytesOut,
      "ratio": results.bytesIn > 0
        ? Self.rounded(Double(results.bytesOut) / Double(results.bytesIn), 4) : NSNull(),
      "wallSeconds": Self.rounded(wallSeconds, 3),
      "cpuSeconds": Self.rounded(cpuSeconds, 3),
      "jobs": jobs,
      "cpus": cpus.count,
      "affinityCPUs": cpus.affinityCPUs,
      "cgroupQuotaCPUs": cpus.quota.map { Self.rounded($0.cpus, 3) } ?? NSNull(),
      "level": Int(level.value),
      "isolation": isolation.rawValue,
      "hangs": hangs.hangs,
      "microhangs": hangs.microhangs,
      "worstLagMs": Self.rounded(hangs.worstLag * 1000, 3),
    ]
    let data =
      (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
      ?? Data("{}".utf8)
    return String(decoding: data, as: UTF8.self) + "\n"
  }
}
