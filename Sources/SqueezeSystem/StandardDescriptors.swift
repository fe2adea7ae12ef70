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
    openFileLimits.map { UInt64($0.rlim_cur) }
  }

  /// The soft and hard `RLIMIT_NOFILE` (`getrlimit(2)`), or nil when they cannot be read.
  private static var openFileLimits: rlimit? {
    var limit = rlimit()
    return getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 ? limit : nil
  }

  /// Raises the soft `RLIMIT_NOFILE` toward `wanted` descriptors, as far as the hard limit
  /// allows (`setrlimit(2)`); a soft limit already at or above `wanted` is left alone.
  ///
  /// A run holds a descriptor for each output waiting to be published (its folder), so a
  /// low soft limit either makes files fail with `EMFILE` or makes the publisher's queue
  /// short. The soft limit is only a default a process may raise up to the hard one: the
  /// usual systemd setup gives 1,024 soft and 524,288 hard, and a shell's `ulimit -S -n`
  /// lowers only the soft one. squeeze starts no other program, so no child inherits the
  /// raised limit (a program using `select(2)` cannot take descriptors past 1,023).
  ///
  /// Call first thing in `main`, before ``DescriptorTable/reserve()``, which grows the table
  /// to the limit this leaves. When `setrlimit` fails the soft limit stays as it was.
  package static func raiseOpenFileLimit(toward wanted: UInt64) {
    guard var limit = openFileLimits, limit.rlim_cur < wanted, limit.rlim_max > limit.rlim_cur
    else { return }
    limit.rlim_cur = min(limit.rlim_max, rlim_t(wanted))
    _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
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

/// Grows this process's descriptor table once, at start, while the process has one thread.
///
/// Linux grows a process's descriptor table when a new descriptor's number does not fit
/// (doubling it: 64, 128, 256 ...), and when the table is shared by several threads it waits
/// for an RCU grace period before it frees the old one (`expand_fdtable` in `fs/file.c`:
/// `synchronize_rcu()` while the files are shared). Every thread that opens a file meanwhile
/// waits too. A run holds many descriptors at once (each output waiting for the publisher
/// keeps its folder open, up to 1,024 of them), and on `tiny/` of the benchmark corpus `perf
/// record -e sched:sched_switch` found the compression threads of a two-core run both
/// blocked in `expand_files` for about 10 ms at a time, as the table grew during the run's
/// first files. A process with one thread grows its table without that wait, and a table
/// never shrinks: so ``reserve()`` opens one descriptor at number ``reservedCount`` - 1 (or
/// below the soft `RLIMIT_NOFILE`) and closes it, before the concurrency runtime starts a
/// thread. The table then costs 8 bytes a descriptor (32 KiB) and the run's descriptors
/// never make it grow again unless it needs more.
public enum DescriptorTable {
  /// Descriptors the table is grown to hold: 4,096.
  public static let reservedCount = 4096

  /// Grows the table to ``reservedCount`` descriptors, or to the soft `RLIMIT_NOFILE` if it is
  /// lower. Call first thing in `main`, after ``StandardDescriptors/reserve()`` (which makes
  /// descriptor 0 valid), before anything starts a thread. Nothing is left open, and no
  /// descriptor the process inherited is touched (`F_DUPFD` takes the lowest free number at
  /// or above the one asked for).
  public static func reserve() {
    let limit = ProcessControl.openFileLimit ?? UInt64(reservedCount)
    let count = Int(min(limit, UInt64(reservedCount)))
    guard count > 64 else { return }
    let descriptor = fcntl(0, F_DUPFD_CLOEXEC, Int32(count - 1))
    if descriptor >= 0 { close(descriptor) }
  }
}
