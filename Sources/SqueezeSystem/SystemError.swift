import Glibc

/// A failed Linux system call: the C `errno` it set, kept so messages can name the cause.
///
/// The description is `strerror(3)`'s text followed by the number, for example
/// `Permission denied (errno 13)`, the shape of every cause squeeze prints.
public struct SystemError: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
  /// The C `errno` value, for example `EACCES` (13).
  public let code: Int32

  /// Wraps an `errno` value.
  public init(code: Int32) {
    self.code = code
  }

  /// The calling thread's current `errno`, read right after a call returned -1.
  package static var current: SystemError { SystemError(code: errno) }

  /// `strerror(3)` text and the number, for example `No space left on device (errno 28)`.
  public var description: String {
    "\(String(cString: strerror(code))) (errno \(code))"
  }

  /// No such file or directory. The corresponding C error is `ENOENT`.
  package static let noSuchFile = SystemError(code: ENOENT)
  /// The file exists. The corresponding C error is `EEXIST`.
  package static let fileExists = SystemError(code: EEXIST)
  /// Too many levels of symbolic links; returned when `O_NOFOLLOW` meets a link.
  /// The corresponding C error is `ELOOP`.
  package static let symbolicLinkLoop = SystemError(code: ELOOP)
  /// Not a directory. The corresponding C error is `ENOTDIR`.
  package static let notADirectory = SystemError(code: ENOTDIR)
  /// Is a directory. The corresponding C error is `EISDIR`.
  package static let isADirectory = SystemError(code: EISDIR)
  /// The directory is not empty. The corresponding C error is `ENOTEMPTY`.
  package static let directoryNotEmpty = SystemError(code: ENOTEMPTY)
  /// Read-only file system. The corresponding C error is `EROFS`.
  package static let readOnlyFileSystem = SystemError(code: EROFS)
  /// No such device or address: a named pipe opened for writing that no process reads.
  /// The corresponding C error is `ENXIO`.
  package static let noSuchDevice = SystemError(code: ENXIO)
  /// No buffer space available: a buffer too small for what it must hold.
  /// The corresponding C error is `ENOBUFS`.
  package static let noBufferSpace = SystemError(code: ENOBUFS)
  /// No data available: an extended attribute that is not there.
  /// The corresponding C error is `ENODATA`.
  package static let noData = SystemError(code: ENODATA)
  /// Operation not supported: extended attributes on a file system without them.
  /// The corresponding C error is `EOPNOTSUPP`.
  package static let notSupported = SystemError(code: EOPNOTSUPP)
  /// Bad file descriptor. The corresponding C error is `EBADF`.
  package static let badDescriptor = SystemError(code: EBADF)
  /// Input/output error. The corresponding C error is `EIO`.
  package static let inputOutput = SystemError(code: EIO)
  /// Invalid cross-device link: a rename or link between two file systems.
  /// The corresponding C error is `EXDEV`.
  package static let crossDevice = SystemError(code: EXDEV)
  /// Too many links: the file has as many names as its file system allows. The
  /// corresponding C error is `EMLINK`.
  package static let tooManyLinks = SystemError(code: EMLINK)
  /// Operation not permitted (`linkat(2)` of a file the caller does not own under
  /// `fs.protected_hardlinks`, for one). The corresponding C error is `EPERM`.
  package static let notPermitted = SystemError(code: EPERM)
  /// Operation canceled: the run is ending. The corresponding C error is `ECANCELED`.
  package static let canceled = SystemError(code: ECANCELED)
  /// Interrupted system call: a signal arrived. The corresponding C error is `EINTR`.
  package static let interrupted = SystemError(code: EINTR)
  /// No space left on device: the file system is full (blocks or inodes).
  /// The corresponding C error is `ENOSPC`.
  package static let noSpace = SystemError(code: ENOSPC)
  /// Disk quota exceeded: the user's quota on the file system is used up.
  /// The corresponding C error is `EDQUOT`.
  package static let quotaExceeded = SystemError(code: EDQUOT)

  /// True for the errors of a file system that can take no more (``noSpace``,
  /// ``quotaExceeded``): every further write there fails the same way until room is made.
  package var isOutOfSpace: Bool { self == .noSpace || self == .quotaExceeded }
}

/// Runs a system call, retrying while it fails with `EINTR` (a signal arrived).
///
/// - Parameter call: returns the call's result; -1 means failure with `errno` set.
/// - Returns: the first result that is not -1.
/// - Throws: ``SystemError`` with the call's `errno` when it fails for another reason.
@inlinable @inline(__always)
package func retryingOnInterrupt<T: FixedWidthInteger>(_ call: () -> T) throws(SystemError) -> T {
  while true {
    let result = call()
    if result != -1 { return result }
    let error = errno
    if error != EINTR { throw SystemError(code: error) }
  }
}
