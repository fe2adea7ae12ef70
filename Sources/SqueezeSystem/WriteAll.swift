import Glibc

/// Writes all of `bytes` to `descriptor`, looping over short writes and retrying calls
/// interrupted by a signal (`write(2)`, `EINTR`).
///
/// The one write loop every output shares: temporaries, standard output, standard error,
/// task-state logs.
///
/// - Parameters:
///   - bytes: the bytes to write; empty writes nothing.
///   - descriptor: an open descriptor the caller owns.
/// - Throws: ``SystemError`` from `write(2)`, for example `ENOSPC` on a full disk, `EFBIG`
///   past a file-size limit (`SIGXFSZ` is ignored by squeeze) or `EPIPE` on a closed pipe;
///   the bytes before the failure may have been written.
package func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) throws(SystemError) {
  var offset = 0
  while offset < bytes.count {
    let count = try retryingOnInterrupt {
      Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
    }
    offset += count
  }
}

/// Writes all of `bytes` to `descriptor` (see ``writeAll(_:to:)``).
///
/// - Throws: ``SystemError`` from `write(2)`.
package func writeAll(_ bytes: [UInt8], to descriptor: Int32) throws(SystemError) {
  // Array.withUnsafeBytes rethrows untyped: carry the typed error out by hand.
  var failure: SystemError? = nil
  bytes.withUnsafeBytes { raw in
    do throws(SystemError) { try writeAll(raw, to: descriptor) } catch { failure = error }
  }
  if let failure { throw failure }
}
