/// The text of the live progress bar and of `--progress plain` lines: pure functions of the
/// totals, so their cost does not depend on how many files there are.
enum ProgressLine {
  /// Totals the line is drawn from.
  struct Totals: Sendable {
    var filesDone: Int
    var filesTotal: Int
    var bytesDone: Int64
    var bytesTotal: Int64
    /// Seconds since the run started.
    var elapsed: Double
    /// Files already up to date: not in `filesTotal`, shown apart.
    var upToDate: Int

    init(
      filesDone: Int, filesTotal: Int, bytesDone: Int64, bytesTotal: Int64, elapsed: Double,
      upToDate: Int = 0
    ) {
      self.filesDone = filesDone
      self.filesTotal = filesTotal
      self.bytesDone = bytesDone
      self.bytesTotal = bytesTotal
      self.elapsed = elapsed
      self.upToDate = upToDate
    }

    /// Throughput in bytes per second (0 before any time has passed).
    var bytesPerSecond: Double { elapsed > 0 ? Double(bytesDone) / elapsed : 0 }

    /// Seconds left at the current throughput, or nil when it cannot be estimated yet.
    var secondsLeft: Double? {
      guard bytesDone > 0, elapsed > 0.2, bytesPerSecond > 0 else { return nil }
      return Double(max(0, bytesTotal - bytesDone)) / bytesPerSecond
    }
  }

  /// The bar: `[####      ] 1,234/5,678 files  56.7 MB/120 MB  35.2 MB/s  ETA 0:12`, within
  /// `columns - 1` columns (the last column stays free so the terminal never wraps).
  ///
  /// On a narrow terminal whole fields are dropped, never cut: first the bar, then the
  /// throughput, the bytes, and the ETA; the file count goes last (then a bare percentage,
  /// then nothing). A number on screen is always the whole number.
  static func bar(_ totals: Totals, columns: Int) -> String {
    let width = columns - 1
    let fraction =
      totals.bytesTotal > 0
      ? min(1, Double(totals.bytesDone) / Double(totals.bytesTotal))
      : (totals.filesTotal > 0 ? Double(totals.filesDone) / Double(totals.filesTotal) : 1)
    var fields = self.fields(totals)
    var details = fields.map(\.text).joined(separator: "  ")
    // The bar's width depends on the terminal only, so it does not jump as the figures grow.
    let room = width - reservedForDetails - 2
    if room >= 10 {
      let barWidth = min(room, 30)
      let filled = Int(saturating: (fraction * Double(barWidth)).rounded(.down))
      let bar =
        "[" + String(repeating: "#", count: filled)
        + String(repeating: " ", count: barWidth - filled) + "] "
      if bar.count + details.count <= width { return bar + details }
    }
    for dropped in [Field.upToDate, .rate, .bytes, .eta] where details.count > width {
      fields.removeAll { $0.field == dropped }
      details = fields.map(\.text).joined(separator: "  ")
    }
    if details.count <= width { return details }
    let percent = "\(Int(saturating: (fraction * 100).rounded(.down))) %"
    return percent.count <= width ? percent : ""
  }

  /// Columns kept for the figures after the bar (their usual width, with room to grow).
  static let reservedForDetails = 64

  /// The figures of a progress line.
  private enum Field {
    case files, upToDate, bytes, rate, eta
  }

  /// The figures, in display order.
  private static func fields(_ totals: Totals) -> [(field: Field, text: String)] {
    let files = "\(ByteFormat.count(totals.filesDone))/\(ByteFormat.count(totals.filesTotal)) files"
    let bytes = "\(ByteFormat.format(totals.bytesDone))/\(ByteFormat.format(totals.bytesTotal))"
    let rate = "\(ByteFormat.format(Int64(saturating: totals.bytesPerSecond)))/s"
    let eta = "ETA " + (totals.secondsLeft.map(ByteFormat.clock) ?? "--:--")
    guard totals.upToDate > 0 else {
      return [(.files, files), (.bytes, bytes), (.rate, rate), (.eta, eta)]
    }
    // Files found current before the run are not in the totals: counted apart.
    let current = "\(ByteFormat.count(totals.upToDate)) up to date"
    return [(.files, files), (.upToDate, current), (.bytes, bytes), (.rate, rate), (.eta, eta)]
  }

  /// One `--progress plain` line: `squeeze: 1,234/5,678 files, 56.7 MB/120 MB, 35.2 MB/s, ETA 0:12`.
  static func plain(_ totals: Totals) -> String {
    "squeeze: " + details(totals, separator: ", ")
  }

  private static func details(_ totals: Totals, separator: String) -> String {
    fields(totals).map(\.text).joined(separator: separator)
  }
}
