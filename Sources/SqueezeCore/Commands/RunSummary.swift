/// The end-of-run figures and the one-line summary (spec §3).
struct RunSummary: Sendable {
  /// What the run did.
  var operation: Operation
  var results: RunResults
  /// Entries skipped by discovery.
  var skipped: Int
  /// Paths discovery could not handle (missing arguments, unreadable folders).
  var discoveryFailures: Int
  /// Wall-clock seconds of the whole run.
  var wallSeconds: Double
  /// CPU seconds (user + system) of the whole run.
  var cpuSeconds: Double
  /// Main-actor hangs and the worst lag.
  var hangs: HangReport

  /// Files that failed, in discovery and in the work together.
  var failed: Int { results.failed + discoveryFailures }

  /// `squeeze: 14 files compressed, 1.23 MB → 345 kB (72.0 % saved), 0.123 s, 10.0 MB/s`,
  /// then up-to-date, removed, skipped and failed counts when not zero, and the main actor's
  /// worst lag and hangs.
  var line: String {
    var parts: [String] = []
    let files = results.done == 1 ? "1 file" : "\(ByteFormat.count(results.done)) files"
    let sizes = "\(ByteFormat.format(results.bytesIn)) → \(ByteFormat.format(results.bytesOut))"
    let done = results.done > 0
    switch operation {
    case .compress:
      parts.append(
        done
          ? "\(files) compressed, \(sizes) (\(savedPercent(results.bytesIn, results.bytesOut)) saved)"
          : "\(files) compressed")
    case .decompress:
      parts.append(done ? "\(files) decompressed, \(sizes)" : "\(files) decompressed")
    case .test:
      parts.append(done ? "\(files) tested OK, \(sizes)" : "\(files) tested")
    }
    parts.append(ByteFormat.seconds(wallSeconds))
    let rate = wallSeconds > 0 ? Double(results.bytesIn) / wallSeconds : 0
    parts.append("\(ByteFormat.format(Int64(rate)))/s")
    if results.upToDate > 0 { parts.append("\(ByteFormat.count(results.upToDate)) up to date") }
    if results.removed > 0 {
      parts.append(
        "\(ByteFormat.count(results.removed)) original\(results.removed == 1 ? "" : "s") removed")
    }
    if results.keptHardLinked > 0 {
      parts.append("\(ByteFormat.count(results.keptHardLinked)) hard-linked originals kept")
    }
    if skipped > 0 { parts.append("\(ByteFormat.count(skipped)) skipped") }
    if failed > 0 { parts.append("\(ByteFormat.count(failed)) failed") }
    if results.interrupted { parts.append("interrupted") }
    var line = "squeeze: " + parts.joined(separator: ", ")
    line += "; main actor: worst lag \(ByteFormat.milliseconds(hangs.worstLag))"
    if hangs.hangs > 0 { line += ", \(hangs.hangs) \(hangs.hangs == 1 ? "hang" : "hangs")" }
    if hangs.microhangs > 0 {
      line += ", \(hangs.microhangs) \(hangs.microhangs == 1 ? "microhang" : "microhangs")"
    }
    return line
  }
}
