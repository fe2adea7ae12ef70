import Glibc

extension RawPath {
  /// The canonical absolute path (`realpath(3)`: links, `.` and `..` resolved), or nil when
  /// it cannot be resolved.
  package var realPath: [UInt8]? {
    withCString { cPath -> [UInt8]? in
      guard let resolved = realpath(cPath, nil) else { return nil }
      defer { free(resolved) }
      return Array(UnsafeBufferPointer(start: resolved, count: strlen(resolved))).map {
        UInt8(bitPattern: $0)
      }
    }
  }

  /// Renames the entry at this path (relative to the current directory) to `destination`,
  /// replacing what is there, a link included, never following one (`rename(2)`).
  ///
  /// - Throws: ``SystemError`` from `rename(2)`.
  package func rename(to destination: RawPath) throws(SystemError) {
    _ = try withCString { (from) throws(SystemError) in
      try destination.withCString { (to) throws(SystemError) in
        try retryingOnInterrupt { Glibc.rename(from, to) }
      }
    }
  }

  /// Removes the file (not a folder) at this path, relative to the current directory
  /// (`unlink(2)`).
  ///
  /// - Throws: ``SystemError`` from `unlink(2)`.
  package func removeFile() throws(SystemError) {
    _ = try withCString { (path) throws(SystemError) in
      try retryingOnInterrupt { unlink(path) }
    }
  }
}
