import CSystem
import Glibc

/// Flags for opening a file (`open(2)`): which access, and what happens on the way.
/// `O_CLOEXEC` is always added by ``FileDescriptor/open(_:in:flags:permissions:symlinks:)``.
package struct OpenFlags: OptionSet, Sendable, Hashable {
  /// The `open(2)` flag bits.
  package let rawValue: Int32

  /// Flags of `rawValue`'s bits.
  package init(rawValue: Int32) {
    self.rawValue = rawValue
  }

  /// Read only (`O_RDONLY`, which is 0: the default access).
  package static let readOnly = OpenFlags(rawValue: O_RDONLY)
  /// Write only (`O_WRONLY`).
  package static let writeOnly = OpenFlags(rawValue: O_WRONLY)
  /// Create the file if it does not exist (`O_CREAT`).
  package static let create = OpenFlags(rawValue: O_CREAT)
  /// With ``create``: fail with `EEXIST` if it exists (`O_EXCL`).
  package static let exclusive = OpenFlags(rawValue: O_EXCL)
  /// Fail unless it is a folder (`O_DIRECTORY`).
  package static let directory = OpenFlags(rawValue: O_DIRECTORY)
  /// A terminal never becomes the controlling terminal (`O_NOCTTY`).
  package static let noControllingTerminal = OpenFlags(rawValue: O_NOCTTY)
  /// Do not wait: a pipe without a writer, a device not ready (`O_NONBLOCK`).
  package static let nonBlocking = OpenFlags(rawValue: O_NONBLOCK)
  /// Do not follow a symbolic link at the last component: open the link itself, or fail
  /// with `ELOOP` (`O_NOFOLLOW`).
  package static let noFollow = OpenFlags(rawValue: O_NOFOLLOW)
  /// A descriptor that only names the entry (for `fstat`, `*at` calls, file handles),
  /// neither readable nor writable (`O_PATH`).
  package static let pathOnly = OpenFlags(rawValue: SQUEEZE_O_PATH)

  /// A folder, opened to list it or to work relative to it.
  package static let folder: OpenFlags = [.readOnly, .directory]
  /// A source to read whatever it is, never waiting to open it (a pipe or device swapped
  /// in for a file fails later, when its status is checked).
  package static let source: OpenFlags = [.readOnly, .noControllingTerminal, .nonBlocking]
}

/// System calls on a descriptor kept as its number by code that owns it some other way
/// (a job's open source, standard input, an output's temporary): each call is one system
/// call, retried on `EINTR` where it can be interrupted, and its failure a ``SystemError``.
package enum Descriptor {
  /// The current directory, for calls relative to a folder (`AT_FDCWD`).
  package static let currentDirectory: Int32 = AT_FDCWD

  /// Closes `descriptor` (`close(2)`); an error is ignored (the descriptor is gone either
  /// way, and nothing was written through it).
  @inlinable
  package static func close(_ descriptor: Int32) {
    _ = Glibc.close(descriptor)
  }

  /// Reads up to `buffer.count` bytes at the descriptor's position (`read(2)`).
  ///
  /// - Returns: the bytes read; 0 at the end of the file.
  /// - Throws: ``SystemError`` from `read(2)`.
  @inlinable
  package static func read(
    _ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer
  ) throws(SystemError) -> Int {
    try retryingOnInterrupt { Glibc.read(descriptor, buffer.baseAddress, buffer.count) }
  }

  /// Reads up to `buffer.count` bytes at `offset` without moving the position (`pread(2)`,
  /// one call).
  ///
  /// - Returns: the bytes read; 0 at or past the end of the file.
  /// - Throws: ``SystemError`` from `pread(2)`.
  @inlinable
  package static func read(
    _ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64
  ) throws(SystemError) -> Int {
    try retryingOnInterrupt { pread(descriptor, buffer.baseAddress, buffer.count, off_t(offset)) }
  }

  /// Moves the position to `offset` bytes from the start (`lseek(2)`, `SEEK_SET`).
  ///
  /// - Throws: ``SystemError`` from `lseek(2)`.
  package static func seek(_ descriptor: Int32, to offset: Int64) throws(SystemError) {
    _ = try retryingOnInterrupt { lseek(descriptor, off_t(offset), SEEK_SET) }
  }

  /// The position, in bytes from the start (`lseek(2)`, `SEEK_CUR`).
  ///
  /// - Throws: ``SystemError`` from `lseek(2)` (`ESPIPE` for a pipe).
  package static func position(_ descriptor: Int32) throws(SystemError) -> Int64 {
    Int64(try retryingOnInterrupt { lseek(descriptor, 0, SEEK_CUR) })
  }

  /// The file's status (`fstat(2)`).
  ///
  /// - Throws: ``SystemError`` from `fstat(2)`.
  package static func status(_ descriptor: Int32) throws(SystemError) -> FileStatus {
    var raw = stat()
    _ = try retryingOnInterrupt { fstat(descriptor, &raw) }
    return FileStatus(raw)
  }

  /// A new descriptor for the same open file, numbered 3 or more and closed on `exec`
  /// (`fcntl(2)`, `F_DUPFD_CLOEXEC`): the caller owns it.
  ///
  /// - Throws: ``SystemError`` from `fcntl(2)`.
  package static func duplicate(_ descriptor: Int32) throws(SystemError) -> Int32 {
    try retryingOnInterrupt { fcntl(descriptor, F_DUPFD_CLOEXEC, 3) }
  }

  /// Makes reads and writes wait again: clears `O_NONBLOCK` and the other status flags
  /// (`fcntl(2)`, `F_SETFL`) of a descriptor opened non-blocking so that opening it could
  /// not wait.
  package static func clearStatusFlags(_ descriptor: Int32) {
    _ = fcntl(descriptor, F_SETFL, 0)
  }

  /// True when the descriptor is a terminal (`isatty(3)`).
  package static func isTerminal(_ descriptor: Int32) -> Bool {
    isatty(descriptor) == 1
  }

  /// Waits up to `milliseconds` for data (or the end) to be readable (`poll(2)`).
  ///
  /// - Returns: true when reading would not wait.
  package static func waitUntilReadable(_ descriptor: Int32, milliseconds: Int32) -> Bool {
    var wait = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
    return poll(&wait, 1, milliseconds) > 0 && wait.revents != 0
  }

  /// Drops the file's cached pages (`posix_fadvise(2)`, `POSIX_FADV_DONTNEED`), so that
  /// reading it waits for the device, as on a cold cache. Errors are ignored: the reads
  /// that follow report what matters.
  package static func dropCachedPages(_ descriptor: Int32) {
    _ = posix_fadvise(descriptor, 0, 0, POSIX_FADV_DONTNEED)
  }

  /// Flushes the file's data and metadata to the device (`fsync(2)`).
  ///
  /// - Throws: ``SystemError`` from `fsync(2)`.
  package static func sync(_ descriptor: Int32) throws(SystemError) {
    _ = try retryingOnInterrupt { fsync(descriptor) }
  }

  /// Commits the whole file system holding the descriptor's file (`syncfs(2)`).
  ///
  /// - Throws: ``SystemError`` from `syncfs(2)`.
  package static func syncFileSystem(_ descriptor: Int32) throws(SystemError) {
    _ = try retryingOnInterrupt { squeeze_syncfs(descriptor) }
  }

  /// `statfs(2)`'s `f_type` of a FUSE file system (`FUSE_SUPER_MAGIC`, linux/magic.h):
  /// bindfs, sshfs and every other user-space file system, `fuse` and `fuseblk` alike.
  package static let fuseFileSystemType: Int = 0x6573_5546

  /// The type of the file system holding the descriptor's file (`fstatfs(2)`'s `f_type`,
  /// a magic number from linux/magic.h), or nil when it cannot be read.
  package static func fileSystemType(_ descriptor: Int32) -> Int? {
    guard let type = try? retryingOnInterrupt({ squeeze_file_system_type(descriptor) }) else {
      return nil
    }
    return Int(type)
  }

  /// True when the descriptor's file is on a file system whose `syncfs(2)` commits nothing
  /// of what was written: FUSE, where the kernel returns success without asking the
  /// server (bindfs, sshfs and the other servers built on libfuse's high-level interface
  /// have no `syncfs` request), while `fsync(2)` of a file reaches the server, which
  /// syncs the file it stands for.
  package static func syncFileSystemIsHollow(_ descriptor: Int32) -> Bool {
    fileSystemType(descriptor) == fuseFileSystemType
  }

  /// Sets the permission bits (`fchmod(2)`).
  ///
  /// - Throws: ``SystemError`` from `fchmod(2)`.
  package static func setPermissions(_ descriptor: Int32, _ permissions: UInt32) throws(SystemError)
  {
    _ = try retryingOnInterrupt { fchmod(descriptor, mode_t(permissions)) }
  }

  /// Checks that this process may create entries in the folder open as `descriptor` and
  /// search it (`faccessat(2)` on `.` with `W_OK | X_OK` and `AT_EACCESS`: effective ids, so
  /// root may whatever the bits say; `EROFS` on a read-only mount), without writing
  /// anything.
  ///
  /// - Throws: ``SystemError`` from `faccessat(2)`: `EACCES`, `EROFS`.
  package static func checkWritableFolder(_ descriptor: Int32) throws(SystemError) {
    _ = try retryingOnInterrupt { faccessat(descriptor, ".", W_OK | X_OK, AT_EACCESS) }
  }

  /// Renames `from` (relative to the folder `fromBase`) to `to` (relative to `toBase`): over
  /// whatever is there when `replacing` (`renameat(2)`), otherwise failing with `EEXIST` if
  /// anything is (`renameat2(2)` with `RENAME_NOREPLACE`), so a file that appeared meanwhile
  /// is never lost.
  ///
  /// - Throws: ``SystemError`` from `renameat(2)` or `renameat2(2)`.
  package static func rename(
    _ fromBase: Int32, _ from: UnsafePointer<CChar>, to toBase: Int32, _ to: UnsafePointer<CChar>,
    replacing: Bool
  ) throws(SystemError) {
    _ = try retryingOnInterrupt {
      replacing
        ? renameat(fromBase, from, toBase, to)
        : squeeze_renameat2(fromBase, from, toBase, to, SQUEEZE_RENAME_NOREPLACE)
    }
  }

  /// Sets the owner and group (`fchown(2)`: only root may give a file away).
  ///
  /// - Throws: ``SystemError`` from `fchown(2)`.
  package static func setOwner(_ descriptor: Int32, user: UInt32, group: UInt32)
    throws(SystemError)
  {
    _ = try retryingOnInterrupt { fchown(descriptor, user, group) }
  }

  /// Cuts the file to `length` bytes (`ftruncate(2)`).
  ///
  /// - Throws: ``SystemError`` from `ftruncate(2)`.
  package static func truncate(_ descriptor: Int32, to length: Int64) throws(SystemError) {
    _ = try retryingOnInterrupt { ftruncate(descriptor, off_t(length)) }
  }

  /// Sets the access and modification times, to the nanosecond (`futimens(2)`).
  ///
  /// - Throws: ``SystemError`` from `futimens(2)`.
  package static func setTimes(
    _ descriptor: Int32, access: Timestamp, modification: Timestamp
  ) throws(SystemError) {
    // Two timespecs side by side, without an array allocated for every file.
    var times = (access.timespec, modification.timespec)
    _ = try withUnsafePointer(to: &times) { (pair) throws(SystemError) in
      try pair.withMemoryRebound(to: timespec.self, capacity: 2) { (first) throws(SystemError) in
        try retryingOnInterrupt { futimens(descriptor, first) }
      }
    }
  }

  /// The size of the extended attribute `name` (`fgetxattr(2)`, value not read), or nil
  /// when the file has no such attribute (`ENODATA`) or its file system none at all
  /// (`EOPNOTSUPP`).
  ///
  /// - Throws: ``SystemError`` from `fgetxattr(2)` for any other cause.
  package static func extendedAttributeSize(
    _ descriptor: Int32, named name: String
  ) throws(SystemError) -> Int? {
    let size = name.withCString { squeeze_fgetxattr_size(descriptor, $0) }
    if size >= 0 { return size }
    let error = SystemError.current
    if error == .noData || error == .notSupported { return nil }
    throw error
  }
}

extension Descriptor {
  /// The file system's handle for the file open as `descriptor` itself
  /// (`name_to_handle_at(2)` with `AT_EMPTY_PATH`; a descriptor opened with ``OpenFlags/pathOnly``
  /// and ``OpenFlags/noFollow`` on a symbolic link names the link): it holds the inode number
  /// and the inode's generation, a new one each time the number is reused.
  ///
  /// - Returns: the handle's type and its bytes (at most 128, the kernel's `MAX_HANDLE_SZ`).
  /// - Throws: ``SystemError`` from `name_to_handle_at(2)`: `EOPNOTSUPP` when the file
  ///   system gives no handles.
  package static func fileHandle(_ descriptor: Int32) throws(SystemError) -> (
    type: Int32, bytes: [UInt8]
  ) {
    var type: Int32 = 0
    var bytes = [UInt8](repeating: 0, count: 128)
    let count = bytes.withUnsafeMutableBufferPointer { buffer in
      squeeze_file_handle(descriptor, &type, buffer.baseAddress, UInt32(buffer.count))
    }
    guard count >= 0 else { throw SystemError.current }
    return (type, Array(bytes.prefix(Int(count))))
  }
}

/// Byte searches over memory, with the C library's vectorized routines.
package enum Memory {
  /// The offset of the first `byte` in `bytes` (`memchr(3)`), or nil.
  @inlinable
  package static func firstIndex(of byte: UInt8, in bytes: UnsafeRawBufferPointer) -> Int? {
    guard let base = bytes.baseAddress, bytes.count > 0,
      let found = memchr(base, Int32(byte), bytes.count)
    else { return nil }
    return UnsafeRawPointer(found) - base
  }
}

/// The C library's math functions that Swift's standard library lacks.
package enum Math {
  /// `base` raised to `exponent` (`pow(3)`).
  package static func power(_ base: Double, _ exponent: Double) -> Double {
    pow(base, exponent)
  }

  /// The real cube root of `value` (`cbrt(3)`; negative for a negative value).
  package static func cubeRoot(_ value: Double) -> Double {
    cbrt(value)
  }
}
