import CSystem
import Glibc

/// An open file descriptor that is closed exactly once: by ``close()`` or, failing that,
/// when the value goes out of scope (the swift-system `FileDescriptor` habit, made
/// non-copyable so it cannot be closed twice or leaked by a copy).
package struct FileDescriptor: ~Copyable {
  /// The kernel's descriptor number.
  package let rawValue: Int32

  /// Takes ownership of an open descriptor.
  package init(owning rawValue: Int32) {
    self.rawValue = rawValue
  }

  deinit {
    Glibc.close(rawValue)
  }

  /// Closes the descriptor, reporting an error from `close(2)` (on some file systems a
  /// failed write is only reported here).
  ///
  /// - Throws: ``SystemError`` from `close(2)`; the descriptor is released either way.
  package consuming func close() throws(SystemError) {
    let descriptor = rawValue
    discard self
    if Glibc.close(descriptor) != 0 {
      let error = errno
      if error != EINTR { throw SystemError(code: error) }
    }
  }

  /// Gives up ownership without closing: the caller now owns the returned number.
  package consuming func release() -> Int32 {
    let descriptor = rawValue
    discard self
    return descriptor
  }

  /// Opens `path` relative to the directory `directory` (`openat(2)`).
  ///
  /// With the default policy, ``SymlinkPolicy/never``, the whole path is resolved without
  /// following any symbolic link (`openat2(2)` with `RESOLVE_NO_SYMLINKS`; `O_NOFOLLOW` on
  /// kernels before 5.6), so a link swapped in for a file or folder after it was listed is
  /// never followed: the open fails with `ELOOP`. Paths longer than `PATH_MAX` are opened
  /// one slice at a time, each slice relative to the folder the previous one opened.
  ///
  /// - Parameters:
  ///   - path: a relative path (or absolute, then `directory` is ignored).
  ///   - directory: a directory descriptor, or `AT_FDCWD`.
  ///   - flags: what to open it for (``OpenFlags``); `O_CLOEXEC` is always added.
  ///   - permissions: the mode for `O_CREAT`.
  ///   - symlinks: which symbolic links on the way may be followed.
  /// - Throws: ``SystemError`` from the failing `openat` call.
  package static func open(
    _ path: RawPath, in directory: Int32 = AT_FDCWD, flags: OpenFlags, permissions: mode_t = 0,
    symlinks: SymlinkPolicy = .never
  ) throws(SystemError) -> FileDescriptor {
    let flags = flags.rawValue | O_CLOEXEC
    if path.count < pathSliceLimit {
      return FileDescriptor(
        owning: try openDirect(
          path, in: directory, flags: flags, permissions: permissions,
          symlinks: symlinks))
    }
    // Longer than PATH_MAX allows: open the leading folders slice by slice.
    var slices = longPathSlices(path)
    let last = slices.removeLast()
    var current: FileDescriptor? = nil
    for slice in slices {
      let base = current?.rawValue ?? directory
      let next = try openDirect(
        slice, in: base, flags: O_RDONLY | O_DIRECTORY | O_CLOEXEC, permissions: 0,
        symlinks: symlinks.forFolders)
      current = FileDescriptor(owning: next)
    }
    let base = current?.rawValue ?? directory
    return FileDescriptor(
      owning: try openDirect(
        last, in: base, flags: flags, permissions: permissions, symlinks: symlinks))
  }

  /// Paths shorter than this go to the kernel in one piece (`PATH_MAX` is 4096 with the NUL).
  package static let pathSliceLimit = 4000

  /// Splits a long relative path at slashes into slices shorter than ``pathSliceLimit``.
  static func longPathSlices(_ path: RawPath) -> [RawPath] {
    var slices: [RawPath] = []
    var current: [UInt8] = path.isAbsolute ? [UInt8(ascii: "/")] : []
    for component in path.components {
      if !current.isEmpty && current.count + 1 + component.count >= pathSliceLimit {
        slices.append(RawPath(bytes: current))
        current = []
      }
      if !current.isEmpty && current.last != UInt8(ascii: "/") { current.append(UInt8(ascii: "/")) }
      current.append(contentsOf: component.bytes)
    }
    slices.append(RawPath(bytes: current))
    return slices
  }

  /// Set once `openat2` reports `ENOSYS` (a kernel before 5.6).
  private static let openat2Missing = AtomicFlag()

  private static func openDirect(
    _ path: RawPath, in directory: Int32, flags: Int32, permissions: mode_t, symlinks: SymlinkPolicy
  ) throws(SystemError) -> Int32 {
    try path.withCString { (cPath) throws(SystemError) -> Int32 in
      try openDirect(
        cPath, in: directory, flags: flags, permissions: permissions, symlinks: symlinks)
    }
  }

  /// Opens `cPath` (shorter than ``pathSliceLimit``) in one system call, as
  /// ``open(_:in:flags:permissions:symlinks:)`` does; `flags` must include `O_CLOEXEC`.
  ///
  /// - Returns: the new descriptor, owned by the caller.
  /// - Throws: ``SystemError``; `ELOOP` when a link is met that may not be followed.
  static func openDirect(
    _ cPath: UnsafePointer<CChar>, in directory: Int32, flags: Int32, permissions: mode_t,
    symlinks: SymlinkPolicy
  ) throws(SystemError) -> Int32 {
    if symlinks == .never && !openat2Missing.isSet {
      do throws(SystemError) {
        return try retryingOnInterrupt {
          squeeze_openat2(
            directory, cPath, UInt64(UInt32(bitPattern: flags)), UInt64(permissions),
            SQUEEZE_RESOLVE_NO_SYMLINKS)
        }
      } catch  where error.code == ENOSYS {
        openat2Missing.set()
      }
    }
    let extra = symlinks == .always ? 0 : O_NOFOLLOW
    return try retryingOnInterrupt { openat(directory, cPath, flags | extra, permissions) }
  }

  /// Reads up to `buffer.count` bytes (`read(2)`, retried on `EINTR`).
  ///
  /// - Returns: the number of bytes read; 0 at end of file.
  /// - Throws: ``SystemError`` from `read(2)`.
  package func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int {
    try retryingOnInterrupt { Glibc.read(rawValue, buffer.baseAddress, buffer.count) }
  }

  /// Reads until `buffer` is full or the file ends.
  ///
  /// - Returns: the number of bytes read; less than `buffer.count` only at end of file.
  /// - Throws: ``SystemError`` from `read(2)`.
  package func readFully(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int {
    var total = 0
    while total < buffer.count {
      let count = try read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[total...]))
      if count == 0 { break }
      total += count
    }
    return total
  }

  /// Reads up to `buffer.count` bytes at `offset` without moving the file position
  /// (`pread(2)`), looping until the buffer is full or the file ends.
  ///
  /// - Returns: the number of bytes read.
  /// - Throws: ``SystemError`` from `pread(2)`.
  package func readFully(
    into buffer: UnsafeMutableRawBufferPointer, at offset: Int64
  ) throws(SystemError) -> Int {
    var total = 0
    while total < buffer.count {
      let slice = UnsafeMutableRawBufferPointer(rebasing: buffer[total...])
      let count = try retryingOnInterrupt {
        pread(rawValue, slice.baseAddress, slice.count, off_t(offset) + off_t(total))
      }
      if count == 0 { break }
      total += count
    }
    return total
  }

  /// Writes all of `bytes`, looping over short writes (`write(2)`).
  ///
  /// - Throws: ``SystemError`` from `write(2)`, for example `ENOSPC` on a full disk or
  ///   `EFBIG` past a file-size limit (`SIGXFSZ` is ignored by squeeze).
  package func writeAll(_ bytes: UnsafeRawBufferPointer) throws(SystemError) {
    try SqueezeSystem.writeAll(bytes, to: rawValue)
  }

  /// Writes all of `bytes`.
  ///
  /// - Throws: ``SystemError`` from `write(2)`.
  package func writeAll(_ bytes: [UInt8]) throws(SystemError) {
    try SqueezeSystem.writeAll(bytes, to: rawValue)
  }

  /// Reads into `bytes` at `offset` until it is full or the file ends (`pread(2)`).
  ///
  /// - Returns: the number of bytes read.
  /// - Throws: ``SystemError`` from `pread(2)`.
  package func readFully(into bytes: inout [UInt8], at offset: Int64) throws(SystemError) -> Int {
    var failure: SystemError? = nil
    let count = bytes.withUnsafeMutableBytes { raw -> Int in
      do throws(SystemError) { return try readFully(into: raw, at: offset) } catch {
        failure = error
        return 0
      }
    }
    if let failure { throw failure }
    return count
  }

  /// The file's status (`fstat(2)`).
  ///
  /// - Throws: ``SystemError`` from `fstat(2)`.
  package func status() throws(SystemError) -> FileStatus {
    var raw = stat()
    _ = try retryingOnInterrupt { fstat(rawValue, &raw) }
    return FileStatus(raw)
  }

  /// Flushes the file's data and metadata to the device (`fsync(2)`).
  package func sync() throws(SystemError) {
    _ = try retryingOnInterrupt { fsync(rawValue) }
  }
}

/// Which symbolic links resolving a path may follow.
package enum SymlinkPolicy: Sendable, Hashable {
  /// None, anywhere on the path (`RESOLVE_NO_SYMLINKS`): the default, so nothing listed can
  /// be swapped for a link.
  case never
  /// Links to folders on the way, not the last component (`O_NOFOLLOW`): outputs beside
  /// sources reached through linked folders (`--follow-symlinks`).
  case inFolders
  /// All of them: paths the user named, and sources with `--follow-symlinks`.
  case always

  /// The policy for the leading folders of a path opened slice by slice.
  package var forFolders: SymlinkPolicy { self == .never ? .never : .always }
}
