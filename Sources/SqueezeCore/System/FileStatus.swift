import Glibc

/// A point in time as the file system stores it: seconds and nanoseconds since the Unix epoch.
struct Timestamp: Hashable, Sendable, Comparable {
  /// Whole seconds since 1970-01-01 00:00:00 UTC (negative before it).
  var seconds: Int64
  /// Nanoseconds within the second, 0 ..< 1,000,000,000.
  var nanoseconds: Int32

  init(seconds: Int64, nanoseconds: Int32) {
    self.seconds = seconds
    self.nanoseconds = nanoseconds
  }

  init(_ spec: timespec) {
    self.init(seconds: Int64(spec.tv_sec), nanoseconds: Int32(spec.tv_nsec))
  }

  var timespec: Glibc.timespec {
    Glibc.timespec(tv_sec: Int(seconds), tv_nsec: Int(nanoseconds))
  }

  /// The current wall-clock time (`CLOCK_REALTIME`).
  static var now: Timestamp {
    var spec = Glibc.timespec()
    clock_gettime(CLOCK_REALTIME, &spec)
    return Timestamp(spec)
  }

  /// Seconds since the epoch as a double (for display and durations).
  var secondsSinceEpoch: Double { Double(seconds) + Double(nanoseconds) / 1e9 }

  /// The time `duration` seconds before this one, or the earliest time a `Timestamp` holds
  /// when that is further back.
  ///
  /// A file's times come from the file system and may be anything an `Int64` of seconds
  /// holds (tmpfs and btrfs keep `touch -d @-9223372036854775808`), as may the clock; the
  /// arithmetic saturates instead of trapping.
  ///
  /// - Parameter duration: seconds, at least 0 (a negative or non-finite duration counts as
  ///   0).
  func subtracting(seconds duration: Double) -> Timestamp {
    guard duration.isFinite, duration > 0 else { return self }
    // The span of an Int64 is under 2^64 seconds: going back that far leaves it.
    guard duration < 0x1p64 else { return .earliest }
    var whole = duration.rounded(.down)
    let nanoseconds = min(999_999_999, Int32(((duration - whole) * 1e9).rounded(.down)))
    var seconds = self.seconds
    // Whole seconds in steps an Int64 holds (2^62; at most four of them), then the rest.
    while true {
      let step = min(whole, 0x1p62)
      let (next, overflow) = seconds.subtractingReportingOverflow(Int64(step))
      if overflow { return .earliest }
      seconds = next
      whole -= step
      if whole == 0 { break }
    }
    var remainder = self.nanoseconds - nanoseconds
    if remainder < 0 {
      remainder += 1_000_000_000
      let (next, overflow) = seconds.subtractingReportingOverflow(1)
      if overflow { return .earliest }
      seconds = next
    }
    return Timestamp(seconds: seconds, nanoseconds: remainder)
  }

  /// Whole seconds from `earlier` to this time (negative when `earlier` is later), saturated
  /// at `Int64.min` and `Int64.max` when the difference does not fit (times at opposite
  /// ends of what the file system holds).
  func seconds(since earlier: Timestamp) -> Int64 {
    let (difference, overflow) = seconds.subtractingReportingOverflow(earlier.seconds)
    guard overflow else { return difference }
    return seconds < earlier.seconds ? .min : .max
  }

  /// The earliest time a `Timestamp` holds: `Int64.min` seconds.
  static let earliest = Timestamp(seconds: .min, nanoseconds: 0)

  static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
    (lhs.seconds, lhs.nanoseconds) < (rhs.seconds, rhs.nanoseconds)
  }
}

/// The kind of a directory entry, from `st_mode` (or `d_type` during a walk).
enum FileKind: Sendable, Hashable {
  case regular, directory, symbolicLink, characterDevice, blockDevice, fifo, socket, unknown

  init(mode: mode_t) {
    switch mode & S_IFMT {
    case S_IFREG: self = .regular
    case S_IFDIR: self = .directory
    case S_IFLNK: self = .symbolicLink
    case S_IFCHR: self = .characterDevice
    case S_IFBLK: self = .blockDevice
    case S_IFIFO: self = .fifo
    case S_IFSOCK: self = .socket
    default: self = .unknown
    }
  }
}

/// What `fstat(2)` reports about a file, in the units the kernel uses.
struct FileStatus: Sendable, Hashable {
  /// The device holding the file (`st_dev`).
  var device: UInt64
  /// The inode number (`st_ino`); with `device`, the file's identity.
  var inode: UInt64
  /// Type and permission bits (`st_mode`).
  var mode: UInt32
  /// Number of hard links (`st_nlink`).
  var linkCount: UInt64
  /// Owner and group ids.
  var userID: UInt32
  var groupID: UInt32
  /// Size in bytes (`st_size`).
  var size: Int64
  /// Last access, modification and status change times.
  var accessTime: Timestamp
  var modificationTime: Timestamp
  var changeTime: Timestamp

  init(_ raw: stat) {
    device = UInt64(raw.st_dev)
    inode = UInt64(raw.st_ino)
    mode = UInt32(raw.st_mode)
    linkCount = UInt64(raw.st_nlink)
    userID = raw.st_uid
    groupID = raw.st_gid
    size = Int64(raw.st_size)
    accessTime = Timestamp(raw.st_atim)
    modificationTime = Timestamp(raw.st_mtim)
    changeTime = Timestamp(raw.st_ctim)
  }

  /// The file's kind, from the type bits of ``mode``.
  var kind: FileKind { FileKind(mode: mode_t(mode)) }

  /// The permission bits (`0o7777` of ``mode``: rwx for user, group, others, and the
  /// setuid, setgid and sticky bits).
  var permissions: UInt32 { mode & 0o7777 }

  /// True when `other` is the same file (same device and inode).
  func isSameFile(as other: FileStatus) -> Bool {
    device == other.device && inode == other.inode
  }

  /// Looks up `name` relative to the directory `directory` without following a final
  /// symbolic link (`fstatat(2)` with `AT_SYMLINK_NOFOLLOW`, or following it when asked).
  ///
  /// - Throws: ``SystemError`` from `fstatat(2)`.
  static func of(
    _ name: RawPath, in directory: Int32, followingSymlinks: Bool = false
  ) throws(SystemError) -> FileStatus {
    var raw = stat()
    let flags = followingSymlinks ? 0 : AT_SYMLINK_NOFOLLOW
    _ = try name.withCString { (path) throws(SystemError) in
      try retryingOnInterrupt { fstatat(directory, path, &raw, flags) }
    }
    return FileStatus(raw)
  }
}
