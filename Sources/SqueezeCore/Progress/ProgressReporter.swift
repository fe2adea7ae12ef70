import SqueezeSystem

/// How progress is shown (`--progress`).
package enum ProgressStyle: String, Sendable, CaseIterable {
  /// A bar on a terminal, nothing otherwise (the default).
  case auto
  /// The live bar (on a terminal; nothing when stderr is not one).
  case bar
  /// A plain line every few seconds, for logs.
  case plain
  /// Nothing.
  case none
}

/// What the user sees while a run works: the live bar or plain lines, error and `-v`
/// lines, in that order on stderr.
///
/// `@MainActor`, as in the WWDC22 File Squeezer. It never waits on compression: it wakes
/// when the ``ProgressFeed`` yields (at most ~10 times a second), drains the coalesced
/// totals and messages, prints the messages above the bar and redraws the bar once. Each
/// redraw costs the same whatever the number of files.
@MainActor
final class ProgressReporter {
  /// The style after `auto` was resolved against the terminal.
  enum Display: Sendable, Equatable {
    case bar, plain, none
  }

  private let output: TextOutput
  /// How progress is displayed.
  let display: Display
  /// What progress is measured against: this run's files and bytes to do, and the files
  /// already up to date (counted apart).
  let totals: ProgressTotals
  private var filesTotal: Int { totals.files }
  private var bytesTotal: Int64 { totals.bytes }
  private let startTime: Double
  /// Seconds between two `--progress plain` lines.
  private let plainInterval: Double
  private var lastPlainLine: Double
  private var barIsDrawn = false
  private var latest = ProgressFeed.Snapshot()
  /// What files' outcomes print, or nil when none come.
  private var fileMessages: FileMessages?

  /// - Parameters:
  ///   - style: the requested style; `auto` is the bar on a terminal and nothing otherwise,
  ///     `bar` draws it wherever stderr goes (as `pv -f` or `rsync --progress` do).
  ///   - output: where to draw (stderr).
  ///   - filesTotal: files the run will handle.
  ///   - bytesTotal: their total size in bytes.
  ///   - upToDate: files already up to date, shown apart (not in `filesTotal`).
  ///   - startTime: the run's start on ``MonotonicClock``.
  ///   - plainInterval: seconds between plain lines (default 5).
  convenience init(
    style: ProgressStyle, output: TextOutput = .standardError, filesTotal: Int, bytesTotal: Int64,
    upToDate: Int = 0, startTime: Double, plainInterval: Double = 5
  ) {
    self.init(
      style: style, output: output,
      totals: ProgressTotals(files: filesTotal, bytes: bytesTotal, upToDate: upToDate),
      startTime: startTime, plainInterval: plainInterval)
  }

  /// - Parameters:
  ///   - style: the requested style (see above).
  ///   - output: where to draw (stderr).
  ///   - totals: this run's work (``RunPlan/progressTotals``).
  ///   - startTime: the run's start on ``MonotonicClock``.
  ///   - plainInterval: seconds between plain lines (default 5).
  ///   - fileMessages: says the files' outcomes the feed brings.
  init(
    style: ProgressStyle, output: TextOutput = .standardError, totals: ProgressTotals,
    startTime: Double, plainInterval: Double = 5, fileMessages: FileMessages? = nil
  ) {
    self.output = output
    self.fileMessages = fileMessages
    switch style {
    case .auto: display = output.isTerminal ? .bar : .none
    case .bar: display = .bar
    case .plain: display = .plain
    case .none: display = .none
    }
    self.totals = totals
    self.startTime = startTime
    self.plainInterval = plainInterval
    lastPlainLine = startTime
  }

  /// Redraws on every wake-up of `feed` until the feed finishes.
  func follow(_ feed: ProgressFeed) async {
    for await _ in feed.wakeups {
      show(feed.drain())
    }
  }

  /// Prints the messages of `snapshot` and redraws progress.
  func show(_ snapshot: ProgressFeed.Snapshot) {
    latest = snapshot
    printMessages(of: snapshot)
    let now = MonotonicClock.now()
    let totals = ProgressLine.Totals(
      filesDone: snapshot.filesDone, filesTotal: filesTotal, bytesDone: snapshot.bytesDone,
      bytesTotal: bytesTotal, elapsed: now - startTime, upToDate: self.totals.upToDate)
    switch display {
    case .bar:
      output.write("\r" + ProgressLine.bar(totals, columns: output.columns) + "\u{1B}[K")
      barIsDrawn = true
    case .plain:
      if now - lastPlainLine >= plainInterval {
        lastPlainLine = now
        output.write(ProgressLine.plain(totals) + "\n")
      }
    case .none:
      break
    }
  }

  /// Takes what is left in `feed`, prints its messages and removes the bar: the line is
  /// free for the summary.
  func finish(_ feed: ProgressFeed) {
    let snapshot = feed.drain()
    latest = snapshot
    printMessages(of: snapshot)
    clearBar()
  }

  /// Prints the lines of `snapshot` and of its files' outcomes above the bar.
  private func printMessages(of snapshot: ProgressFeed.Snapshot) {
    var lines = snapshot.messages
    if !snapshot.outcomes.isEmpty, var messages = fileMessages {
      for (file, outcome) in snapshot.outcomes {
        lines += messages.lines(for: outcome, file: file)
      }
      fileMessages = messages
    }
    guard !lines.isEmpty else { return }
    clearBar()
    output.write(lines.map { $0 + "\n" }.joined())
  }

  /// Prints a line above the bar right away (for messages that do not come through a feed).
  func print(_ line: String) {
    clearBar()
    output.write(line + "\n")
  }

  private func clearBar() {
    if barIsDrawn {
      output.write("\r\u{1B}[K")
      barIsDrawn = false
    }
  }
}
