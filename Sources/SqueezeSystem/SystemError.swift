import Glibc

/// A failed Linux system call: the C `errno` it set, kept so messages can name the cause.
///
/// The description is `strerror(3)`'s text followed by the number, for example
/// `Permission denied (errno 13)`, the shape of every cause squeeze prints.
package struct SystemError: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
  /// The C `errno` value, for example `EACCES` (13).
  package let code: Int32

  /// Wraps an `errno` value.
  package init(code: Int32) {
    self.code = code
  }

  /// The calling thread's current `errno`, read right after a call returned -1.
  package static var current: SystemError { SystemError(code: errno) }

  /// `strerror(3)` text and the number, for example `No space left on device (errno 28)`.
  package var description: String {
    "\(String(cString: strerror(code))) (errno \(code))"
  }

  /// No such file or directory. The corresponding C error is `ENOENT`.
  package static let noSuchFile = SystemError(code: ENOENT)
  /// The file exists. The corresponding C error is `EEXIST`.
  package static let fileExists = SystemError(code: EEXIST)
  /// Too many levels of symbolic links; returned when `O_NOFOLLOW` meets a link.
  /// The corresponding C error is `ELOOP`.
  static let symbolicLinkLoop = SystemError(code: ELOOP)
}

/// Runs a system call, retrying while it fails with `EINTR` (a signal arrived).
///
/// - Parameter call: returns the call's result; -1 means failure with `errno` set.
/// - Returns: the first result that is not -1.
/// - Throws: ``SystemError`` with the call's `errno` when it fails for another reason.
@inline(__always)
package func retryingOnInterrupt<T: FixedWidthInteger>(_ call: () -> T) throws(SystemError) -> T {
  while true {
    let result = call()
    if result != -1 { return result }
    let error = errno
    if error != EINTR { throw SystemError(code: error) }
  }
}
