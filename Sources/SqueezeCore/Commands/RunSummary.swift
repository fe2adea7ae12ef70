import SqueezeSystem
import SqueezeTaskLog

/// The end-of-run figures and the one-line summary.
struct RunSummary: Sendable {
  /// The `-v` line of one compressed file: `a.txt: 17 B → 37 B, grew by 20 B`,
  /// `b.txt: 1.00 MB → 300 kB, 70.0 % saved`, `c: 0 B → 20 B (empty)`, and for a file
  /// a mirror wrapped as stored blocks (`stored`), `d.gz: 1.00 kB → 1.03 kB, already
  /// compressed, stored (+31 B)`.
  static func compressedLine(
    _ path: RawPath, bytesIn: Int64, bytesOut: Int64, stored: Bool = false
  ) -> String {
    let sizes = "\(ByteFormat.format(bytesIn)) → \(ByteFormat.format(bytesOut))"
    if bytesIn == 0 { return "\(path.displayString): \(sizes) (empty)" }
    if stored {
      let added = ByteFormat.format(max(0, bytesOut - bytesIn))
      return "\(path.displayString): \(sizes), already compressed, stored (+\(added))"
    }
    if bytesOut > bytesIn {
      return "\(path.displayString): \(sizes), grew by \(ByteFormat.format(bytesOut - bytesIn))"
    }
    return "\(path.displayString): \(sizes), \(savedPercent(bytesIn, bytesOut)) saved"
  }

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
  /// Say the main actor's worst lag and hangs at the end of the line: only when the user
  /// asked for diagnostics (``RunConfiguration/asksForDiagnostics``). The default mode
  /// never runs work on the main actor, so in an everyday run a lag there says only that
  /// the machine was busy, in words a backup's reader should not have to learn.
  var showsMainActor = false
  /// Files the run set out to do and did not, when it stopped early (a signal, a full
  /// disk): neither done, up to date, linked, nor failed for a reason of their own
  /// (``RunResults/notDone(selected:)``). Said only for a run that stopped.
  var notDone = 0

  /// Files that failed, in discovery and in the work together.
  var failed: Int { results.failed + discoveryFailures }

  /// `squeeze: 14 files compressed, 1.23 MB → 345 kB (72.0 % saved), 0.123 s, 10.0 MB/s`,
  /// then up-to-date, grown, stored, removed, linked, folders made and updated, deleted,
  /// skipped and failed counts when not zero, for a run that stopped early `interrupted`
  /// or `stopped: no room left` and how many files were not done (`interrupted (16,998
  /// files not done)`), and (when ``showsMainActor``) the main actor's worst lag and
  /// hangs. A run that did nothing says `nothing compressed`, and one whose files were all
  /// empty `2 empty files compressed`: no sizes or rate made of zeros.
  ///
  /// A mirror copies files that are already compressed (`x.gz`) into stored members, so
  /// each comes out a few bytes larger than it went in (header, trailer and 5 bytes per
  /// stored block of up to 65,535 bytes: RFC 1951 section 3.2.4). Those are said as
  /// `1,984 already compressed, stored (+23 B each)`, never as `grew`, which is kept for
  /// files deflate made larger.
  var line: String {
    var parts: [String] = []
    let verb: String =
      switch operation {
      case .compress: "compressed"
      case .decompress: "decompressed"
      case .test: "tested OK"
      }
    let files = results.done == 1 ? "1 file" : "\(ByteFormat.count(results.done)) files"
    let sizes = "\(ByteFormat.format(results.bytesIn)) → \(ByteFormat.format(results.bytesOut))"
    let uncompressed = operation == .compress ? results.bytesIn : results.bytesOut
    if results.done == 0 {
      // Files that failed their test were tested: none passed.
      parts.append(
        operation == .test
          ? (results.failures.isEmpty ? "nothing tested" : "no file tested OK")
          : "nothing \(verb)")
    } else if uncompressed == 0 {
      let empty =
        results.done == 1 ? "1 empty file" : "\(ByteFormat.count(results.done)) empty files"
      parts.append("\(empty) \(verb)")
    } else if operation == .compress {
      let change =
        results.bytesOut > results.bytesIn
        ? "grew by \(ByteFormat.format(results.bytesOut - results.bytesIn))"
        : "\(savedPercent(results.bytesIn, results.bytesOut)) saved"
      parts.append("\(files) \(verb), \(sizes) (\(change))")
    } else {
      parts.append("\(files) \(verb), \(sizes)")
    }
    parts.append(ByteFormat.seconds(wallSeconds))
    if results.bytesIn > 0 && uncompressed > 0 && wallSeconds > 0 {
      parts.append(
        "\(ByteFormat.format(Int64(saturating: Double(results.bytesIn) / wallSeconds)))/s")
    }
    let grewDeflated = results.grown - results.stored.grown
    if grewDeflated > 0 { parts.append("\(ByteFormat.count(grewDeflated)) grew") }
    if let stored = results.stored.phrase { parts.append(stored) }
    if results.upToDate > 0 { parts.append("\(ByteFormat.count(results.upToDate)) up to date") }
    if results.linked > 0 {
      parts.append("\(ByteFormat.count(results.linked)) linked from an earlier snapshot")
    }
    if results.linkFallbacks > 0 {
      parts.append(
        "\(ByteFormat.count(results.linkFallbacks)) compressed where a link could not be made")
    }
    if results.removed > 0 {
      parts.append(
        "\(ByteFormat.count(results.removed, "original")) removed")
    }
    if results.keptHardLinked > 0 {
      parts.append("\(ByteFormat.count(results.keptHardLinked)) hard-linked originals kept")
    }
    if results.hardLinked > 0 {
      parts.append("\(ByteFormat.count(results.hardLinked)) hard-linked")
    }
    if results.linksWritten > 0 {
      parts.append(
        "\(ByteFormat.count(results.linksWritten, "symbolic link"))"
      )
    }
    if results.foldersMade > 0 {
      parts.append(
        "\(ByteFormat.count(results.foldersMade, "folder")) made"
      )
    }
    if results.foldersUpdated > 0 {
      parts.append(
        "\(ByteFormat.count(results.foldersUpdated, "folder")) updated"
      )
    }
    if results.deleted > 0 { parts.append("\(ByteFormat.count(results.deleted)) deleted") }
    if results.keptForeign > 0 {
      parts.append("\(ByteFormat.count(results.keptForeign)) foreign kept")
    }
    if results.deletionsSkipped { parts.append("deletions skipped") }
    if results.deletionsOverLimit > 0 {
      parts.append("\(ByteFormat.count(results.deletionsOverLimit)) kept by --max-delete")
    }
    if skipped > 0 { parts.append("\(ByteFormat.count(skipped)) skipped") }
    if failed > 0 { parts.append("\(ByteFormat.count(failed)) failed") }
    if results.interrupted {
      var stopped = results.fullDisk == nil ? "interrupted" : "stopped: no room left"
      if notDone > 0 { stopped += " (\(ByteFormat.count(notDone, "file")) not done)" }
      parts.append(stopped)
    }
    var line = "squeeze: " + parts.joined(separator: ", ")
    guard showsMainActor else { return line }
    line += "; main actor: worst lag \(ByteFormat.milliseconds(hangs.worstLag))"
    if hangs.hangs > 0 { line += ", \(hangs.hangs) \(hangs.hangs == 1 ? "hang" : "hangs")" }
    if hangs.microhangs > 0 {
      line += ", \(hangs.microhangs) \(hangs.microhangs == 1 ? "microhang" : "microhangs")"
    }
    return line
  }
}
