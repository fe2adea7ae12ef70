import CSystem
import Glibc
import Synchronization

/// A file made with `O_TMPFILE` in a folder: written and given its metadata while it has
/// no name, then linked into the folder under its final name (`linkat(2)` with
/// `AT_EMPTY_PATH`), or dropped by closing it, when the kernel frees it.
///
/// Unlike a named temporary, it never appears in the folder before it is whole: a crash, a
/// `kill -9` or a second signal leaves nothing to remove, and there is no temporary name to
/// create, rename from and remove (on tmpfs that is about 2 µs a file less kernel work than
/// `openat(O_CREAT | O_EXCL)` of a temporary name and `renameat2`; the engines and levels
/// article has the measurement). Linking fails with `EEXIST` when the final name exists, as
/// `renameat2(RENAME_NOREPLACE)` does, so it never replaces anything: outputs that replace
/// an existing file are written under a temporary name instead.
///
/// The descriptor is closed exactly once: after linking, by ``close()``, or when the object
/// is released.
package final class AnonymousFile: Sendable {
  /// The open file (`O_RDWR`), or -1 once closed.
  private let value: Atomic<Int32>

  /// Takes ownership of `descriptor`.
  private init(owning descriptor: Int32) {
    value = Atomic(descriptor)
  }

  deinit { close() }

  /// The open file; -1 after ``close()``.
  package var descriptor: Int32 { value.load(ordering: .acquiring) }

  /// Closes the file; a file never linked is freed. Closing again does nothing.
  package func close() {
    let descriptor = value.exchange(-1, ordering: .acquiringAndReleasing)
    if descriptor >= 0 { Descriptor.close(descriptor) }
  }

  /// Whether this process can give an `O_TMPFILE` file a name with `linkat(AT_EMPTY_PATH)`:
  /// Linux 6.10 and later let the process that opened the file do so; before, it takes
  /// `CAP_DAC_READ_SEARCH` (linkat(2)). Where neither holds, outputs keep temporary names.
  package static let linkingIsAllowed: Bool = {
    if kernelAtLeast(major: 6, minor: 10) { return true }
    return effectiveCapabilities().map { $0 & (1 << 2) != 0 } ?? false  // CAP_DAC_READ_SEARCH
  }()

  /// Makes an unnamed file in the open folder `folder` (`openat(folder, ".", O_TMPFILE |
  /// O_RDWR)`), with `permissions` (before the umask).
  ///
  /// - Returns: the file, or nil when this process cannot link such a file
  ///   (``linkingIsAllowed``) or the folder's file system has no unnamed files
  ///   (`EOPNOTSUPP`; `EISDIR` or `EINVAL` from kernels that do not know the flag): the
  ///   caller then makes a named temporary.
  /// - Throws: ``SystemError`` from `openat(2)` for any other cause (`EACCES`, `EROFS`,
  ///   `ENOSPC`, `EDQUOT`), which a named temporary would meet too.
  package static func make(in folder: Int32, permissions: mode_t) throws(SystemError)
    -> AnonymousFile?
  {
    guard linkingIsAllowed else { return nil }
    do throws(SystemError) {
      let descriptor = try retryingOnInterrupt {
        openat(folder, ".", O_RDWR | SQUEEZE_O_TMPFILE | O_NOCTTY | O_CLOEXEC, permissions)
      }
      return AnonymousFile(owning: descriptor)
    } catch  where [EOPNOTSUPP, EISDIR, EINVAL].contains(error.code) {
      return nil
    }
  }

  /// Gives the file the name `name` in the open folder `folder` and closes it.
  ///
  /// - Throws: ``SystemError`` from `linkat(2)`: `EEXIST` when `name` exists (nothing is
  ///   replaced); `EBADF` when the file was closed. The file stays open on failure, for the
  ///   caller to drop with ``close()``.
  package func link(as name: RawPath, in folder: Int32) throws(SystemError) {
    let descriptor = self.descriptor
    guard descriptor >= 0 else { throw SystemError(code: EBADF) }
    try name.withCString { (cName) throws(SystemError) in
      _ = try retryingOnInterrupt { linkat(descriptor, "", folder, cName, SQUEEZE_AT_EMPTY_PATH) }
    }
    close()
  }

  /// Opens the file again with `flags` (`O_RDONLY` to read it back), through
  /// `/proc/self/fd`.
  ///
  /// - Throws: ``SystemError`` from `open(2)`; `EBADF` when the file was closed.
  package func reopen(flags: Int32) throws(SystemError) -> FileDescriptor {
    let descriptor = self.descriptor
    guard descriptor >= 0 else { throw SystemError(code: EBADF) }
    let reopened = try retryingOnInterrupt {
      Glibc.open("/proc/self/fd/\(descriptor)", flags | O_CLOEXEC)
    }
    return FileDescriptor(owning: reopened)
  }

  /// Whether the running kernel's release (`uname -r`) is at least `major`.`minor`.
  static func kernelAtLeast(major: Int, minor: Int) -> Bool {
    var names = utsname()
    guard uname(&names) == 0 else { return false }
    let release = withUnsafeBytes(of: &names.release) { raw in
      String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
    }
    let numbers = release.split(whereSeparator: { !$0.isNumber }).prefix(2).compactMap {
      Int($0)
    }
    guard numbers.count == 2 else { return false }
    return (numbers[0], numbers[1]) >= (major, minor)
  }

  /// The process's effective capability set (`CapEff` in `/proc/self/status`), or nil when
  /// it cannot be read.
  static func effectiveCapabilities() -> UInt64? {
    guard let file = fopen("/proc/self/status", "r") else { return nil }
    defer { fclose(file) }
    var line = [CChar](repeating: 0, count: 256)
    while fgets(&line, Int32(line.count), file) != nil {
      let text = String(
        decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
      if text.hasPrefix("CapEff:") {
        return UInt64(String(text.dropFirst(7).filter(\.isHexDigit)), radix: 16)
      }
    }
    return nil
  }
}
