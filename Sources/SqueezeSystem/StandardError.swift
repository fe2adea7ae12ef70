import CSystem
import Glibc

/// Where squeeze's human output goes (progress, summaries, `-v` lines and errors
/// go to stderr; stdout carries only `--json`, `-l` tables and `-c` data).
package struct TextOutput: Sendable {
  /// The file descriptor written to.
  package let descriptor: Int32

  /// Standard error (2).
  package static let standardError = TextOutput(descriptor: 2)
  /// Standard output (1).
  package static let standardOutput = TextOutput(descriptor: 1)

  /// Text written to `descriptor`, which the caller keeps open.
  package init(descriptor: Int32) {
    self.descriptor = descriptor
  }

  /// True when the descriptor is a terminal (`isatty(3)`).
  package var isTerminal: Bool { isatty(descriptor) == 1 }

  /// The terminal's width in columns, or 80 when it does not say.
  package var columns: Int {
    let columns = Int(squeeze_terminal_columns(descriptor))
    return columns > 0 ? columns : 80
  }

  /// Writes `text` with one `write(2)` where possible, so lines from different threads do not
  /// interleave. Errors (a closed pipe) are ignored: there is nowhere left to report them.
  package func write(_ text: String) {
    _ = try? writeChecked(text)
  }

  /// Writes `text`, reporting failure.
  ///
  /// - Throws: ``SystemError`` from `write(2)` (a full disk behind a redirection, a closed
  ///   pipe).
  package func writeChecked(_ text: String) throws(SystemError) {
    try writeAll(Array(text.utf8), to: descriptor)
  }

  /// Writes results (`--json`, `-l`) to this output; when that fails, says so on stderr.
  ///
  /// - Returns: false when the text could not be written.
  package func writeReporting(_ text: String, what: String) -> Bool {
    do {
      try writeChecked(text)
      return true
    } catch {
      TextOutput.standardError.write("squeeze: cannot write \(what) to standard output: \(error)\n")
      return false
    }
  }
}
