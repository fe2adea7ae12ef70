/// squeeze's exit statuses, documented in the man page for scripts and cron jobs.
package enum ExitStatus: Int32, Sendable {
  /// Every selected file done or up to date; skips are not failures.
  case success = 0
  /// At least one file failed (the rest were still done), including a path that does not
  /// exist.
  case failure = 1
  /// A usage error (`EX_USAGE` from sysexits.h, as swift-argument-parser exits).
  case usage = 64
}
