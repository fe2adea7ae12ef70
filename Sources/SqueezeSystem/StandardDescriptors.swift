import Glibc

/// Keeps descriptors 0, 1 and 2 from being reused when squeeze is started with one of them
/// closed (`squeeze -c f >&-`).
///
/// A closed standard descriptor's number goes to the next file opened: the runtime's epoll
/// instance, or worse a temporary output, so `--json` or `-c` data would be written into it.
/// Each closed one is opened on `/dev/null` the wrong way round (standard input write-only,
/// standard output and error read-only), so reading or writing it still fails with `EBADF`
/// as on a closed descriptor, and is reported as such. This is what gnulib's `stdopen` does
/// for coreutils.
public enum StandardDescriptors {
  /// Reserves descriptors 0, 1 and 2. Call first thing in `main`, before anything opens a
  /// file (the Swift concurrency runtime opens its epoll instance when `async` code starts).
  public static func reserve() {
    for descriptor: Int32 in 0...2 where fcntl(descriptor, F_GETFD) == -1 && errno == EBADF {
      let opened = open("/dev/null", descriptor == 0 ? O_WRONLY : O_RDONLY)
      // open(2) returns the lowest free number, which is `descriptor` itself; anything else
      // (no /dev/null) is closed again rather than left holding another number.
      if opened >= 0 && opened != descriptor { close(opened) }
    }
  }
}

/// What the process as a whole is and does: its users, signals it ignores, its end.
package enum ProcessControl {
  /// Ends the process with exit status `status` (`exit(3)`: buffered streams flushed,
  /// `atexit` handlers run).
  package static func exit(_ status: Int32) -> Never {
    Glibc.exit(status)
  }

  /// The most descriptors this process may have open: the soft `RLIMIT_NOFILE`
  /// (`getrlimit(2)`), `UInt64.max` for no limit, or nil when it cannot be read.
  package static var openFileLimit: UInt64? {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
    return UInt64(limit.rlim_cur)
  }

  /// The effective user id (`geteuid(2)`): 0 for root.
  package static var effectiveUserID: UInt32 { geteuid() }
  /// The effective group id (`getegid(2)`).
  package static var effectiveGroupID: UInt32 { getegid() }

  /// A write to a pipe nobody reads fails with `EPIPE` instead of ending the process
  /// (`SIGPIPE` ignored).
  package static func ignoreBrokenPipes() {
    signal(SIGPIPE, SIG_IGN)
  }

  /// A write past a file-size limit (`ulimit -f`) fails with `EFBIG` instead of ending the
  /// process (`SIGXFSZ` ignored).
  package static func ignoreFileSizeLimit() {
    signal(SIGXFSZ, SIG_IGN)
  }

  /// The process's arguments as raw bytes (names need not be UTF-8), without the program
  /// name.
  package static var arguments: [RawPath] {
    (1..<Int(CommandLine.argc)).compactMap { index in
      CommandLine.unsafeArgv[index].map { pointer in
        RawPath(
          bytes: UnsafeBufferPointer(start: pointer, count: strlen(pointer)).map {
            UInt8(bitPattern: $0)
          })
      }
    }
  }
}
