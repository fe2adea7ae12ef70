/// squeeze's exit statuses, documented in the man page for scripts and cron jobs.
package enum ExitStatus: Int32, Sendable {
  /// Every selected file done or up to date; skips are not failures.
  case success = 0
  /// At least one file failed (the rest were still done), including a path that does not
  /// exist.
  case failure = 1
  /// The run stopped because a file system it writes to (an output's, a mirror link's, the
  /// task log's, standard output's for `--json` and `-l`) had no room left (`ENOSPC`, or
  /// `EDQUOT` for a used-up quota): files not started were not done, nothing was lost.
  /// `EX_IOERR` from sysexits.h ("an error occurred while doing I/O on some file"), a status
  /// of its own so a cron script can tell "make room and run again" from failed files; it
  /// wins over ``failure`` when files also failed for other reasons.
  case outOfSpace = 74
  /// A usage error (`EX_USAGE` from sysexits.h, as swift-argument-parser exits).
  case usage = 64
}
