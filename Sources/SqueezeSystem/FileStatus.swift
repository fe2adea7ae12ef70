import CSystem
import Glibc

/// A point in time as the file system stores it: seconds and nanoseconds since the Unix epoch.
package struct Timestamp: Hashable, Sendable, Comparable, BitwiseCopyable {
  /// Whole seconds since 1970-01-01 00:00:00 UTC (negative before it).
  package var seconds: Int64
  /// Nanoseconds within the second, 0 ..< 1,000,000,000.
  package var nanoseconds: Int32

  /// `seconds` and `nanoseconds` (0 ..< 1,000,000,000) since the epoch.
  package init(seconds: Int64, nanoseconds: Int32) {
    self.seconds = seconds
    self.nanoseconds = nanoseconds
  }

  /// The time a `timespec` holds.
  package init(_ spec: timespec) {
    self.init(seconds: Int64(spec.tv_sec), nanoseconds: Int32(spec.tv_nsec))
  }

  /// The time as a `timespec`, for `futimens(2)` and `utimensat(2)`.
  package var timespec: Glibc.timespec {
    Glibc.timespec(tv_sec: Int(seconds), tv_nsec: Int(nanoseconds))
  }

  /// The current time on the clock the kernel stamps file times with
  /// (`CLOCK_REALTIME_COARSE`, its `current_time()`): a file changed after this call never
  /// has an earlier `st_ctime`.
  package static var coarseNow: Timestamp { Timestamp(squeeze_coarse_realtime()) }

  /// The current wall-clock time (`CLOCK_REALTIME`).
  package static var now: Timestamp {
    var spec = Glibc.timespec()
    clock_gettime(CLOCK_REALTIME, &spec)
    return Timestamp(spec)
  }

  /// Seconds since the epoch as a double (for display and durations).
  package var secondsSinceEpoch: Double { Double(seconds) + Double(nanoseconds) / 1e9 }

  /// The time `duration` seconds before this one, or the earliest time a `Timestamp` holds
  /// when that is further back.
  ///
  /// A file's times come from the file system and may be anything an `Int64` of seconds
  /// holds (tmpfs and btrfs keep `touch -d @-9223372036854775808`), as may the clock; the
  /// arithmetic saturates instead of trapping.
  ///
  /// - Parameter duration: seconds, at least 0 (a negative or non-finite duration counts as
  ///   0).
  package func subtracting(seconds duration: Double) -> Timestamp {
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
  package func seconds(since earlier: Timestamp) -> Int64 {
    let (difference, overflow) = seconds.subtractingReportingOverflow(earlier.seconds)
    guard overflow else { return difference }
    return seconds < earlier.seconds ? .min : .max
  }

  /// The earliest time a `Timestamp` holds: `Int64.min` seconds.
  package static let earliest = Timestamp(seconds: .min, nanoseconds: 0)

  /// True when `lhs` is earlier than `rhs`.
  package static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
    (lhs.seconds, lhs.nanoseconds) < (rhs.seconds, rhs.nanoseconds)
  }
}

/// The kind of a directory entry, from `st_mode` (or `d_type` during a walk).
package enum FileKind: Sendable, Hashable {
  case regular, directory, symbolicLink, characterDevice, blockDevice, fifo, socket, unknown

  /// The kind the type bits (`S_IFMT`) of `mode` name.
  ///
  /// The bits are Linux's (`<sys/stat.h>`, the same on every architecture), written as
  /// constants: Glibc's Swift names for them are functions called across modules, two to
  /// seven calls a kind, and a file's kind is asked several times a file.
  package init(mode: mode_t) {
    switch mode & 0o170_000 {  // S_IFMT
    case 0o100_000: self = .regular  // S_IFREG
    case 0o040_000: self = .directory  // S_IFDIR
    case 0o120_000: self = .symbolicLink  // S_IFLNK
    case 0o020_000: self = .characterDevice  // S_IFCHR
    case 0o060_000: self = .blockDevice  // S_IFBLK
    case 0o010_000: self = .fifo  // S_IFIFO
    case 0o140_000: self = .socket  // S_IFSOCK
    default: self = .unknown
    }
  }
}

extension FileKind: CustomStringConvertible {
  /// The kind as a phrase for messages: "a regular file", "a folder", "a named pipe".
  package var description: String {
    switch self {
    case .regular: "a regular file"
    case .directory: "a folder"
    case .symbolicLink: "a symbolic link"
    case .characterDevice: "a character device"
    case .blockDevice: "a block device"
    case .fifo: "a named pipe"
    case .socket: "a socket"
    case .unknown: "of unknown type"
    }
  }
}

/// What `fstat(2)` reports about a file, in the units the kernel uses.
package struct FileStatus: Sendable, Hashable, BitwiseCopyable {
  /// The device holding the file (`st_dev`).
  package var device: UInt64
  /// The inode number (`st_ino`); with `device`, the file's identity.
  package var inode: UInt64
  /// Type and permission bits (`st_mode`).
  package var mode: UInt32
  /// Number of hard links (`st_nlink`).
  package var linkCount: UInt64
  /// Owner and group ids.
  package var userID: UInt32
  /// The group id (`st_gid`).
  package var groupID: UInt32
  /// Size in bytes (`st_size`).
  package var size: Int64
  /// Last access, modification and status change times.
  package var accessTime: Timestamp
  /// Last modification (`st_mtim`).
  package var modificationTime: Timestamp
  /// Last status change (`st_ctim`).
  package var changeTime: Timestamp

  /// A status of these values, the rest zero: what a listing recorded of a file, in the
  /// shape of a status.
  ///
  /// - Parameters:
  ///   - device: the device holding the file (`st_dev`).
  ///   - inode: the inode number (`st_ino`).
  ///   - mode: type and permission bits (``regularFileType`` for a regular file).
  ///   - linkCount: the number of hard links (`st_nlink`).
  ///   - size: the size in bytes (`st_size`).
  ///   - modificationTime: the last modification (`st_mtim`).
  package init(
    device: UInt64, inode: UInt64, mode: UInt32, linkCount: UInt64, size: Int64,
    modificationTime: Timestamp
  ) {
    var raw = stat()
    raw.st_dev = UInt(device)
    raw.st_ino = UInt(inode)
    raw.st_mode = mode
    raw.st_nlink = UInt(linkCount)
    raw.st_size = Int(size)
    raw.st_mtim = modificationTime.timespec
    self.init(raw)
  }

  /// The type bits of a regular file in ``mode`` (`S_IFREG`).
  package static let regularFileType = UInt32(Glibc.S_IFREG)

  /// The status `fstat(2)` or `fstatat(2)` filled in.
  package init(_ raw: stat) {
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
  package var kind: FileKind { FileKind(mode: mode_t(mode)) }

  /// The permission bits (`0o7777` of ``mode``: rwx for user, group, others, and the
  /// setuid, setgid and sticky bits).
  package var permissions: UInt32 { mode & 0o7777 }

  /// True when `other` is the same file (same device and inode).
  package func isSameFile(as other: FileStatus) -> Bool {
    device == other.device && inode == other.inode
  }

  /// Looks up `name` relative to the directory `directory` without following a final
  /// symbolic link (`fstatat(2)` with `AT_SYMLINK_NOFOLLOW`, or following it when asked).
  ///
  /// - Throws: ``SystemError`` from `fstatat(2)`.
  package static func of(
    _ name: RawPath, in directory: Int32, followingSymlinks: Bool = false
  ) throws(SystemError) -> FileStatus {
    try name.withCString { (path) throws(SystemError) in
      try of(cString: path, in: directory, followingSymlinks: followingSymlinks)
    }
  }

  /// Looks up the NUL-terminated `name` relative to the directory `directory`, as
  /// ``of(_:in:followingSymlinks:)`` does: for a name that already ends in a NUL where it
  /// lies (a ``DirectoryListing``'s), with no copy.
  ///
  /// - Throws: ``SystemError`` from `fstatat(2)`.
  package static func of(
    cString name: UnsafePointer<CChar>, in directory: Int32, followingSymlinks: Bool = false
  ) throws(SystemError) -> FileStatus {
    var raw = stat()
    let flags = followingSymlinks ? 0 : AT_SYMLINK_NOFOLLOW
    _ = try retryingOnInterrupt { fstatat(directory, name, &raw, flags) }
    return FileStatus(raw)
  }
}
