import CSystem
import Glibc

/// Reads a folder's entries with `getdents64(2)`, straight from the open folder (no `DIR`,
/// no duplicated descriptor).
package enum DirectoryReader {
  /// The `d_type` of a regular file (`DT_REG`).
  package static let regularFile = UInt8(DT_REG)

  /// Every entry but `.` and `..`: the raw name and `d_type` (`DT_UNKNOWN` when the file
  /// system does not say).
  ///
  /// - Parameter folder: an open folder descriptor, read from its current position (a fresh
  ///   descriptor starts at the beginning).
  /// - Throws: ``SystemError`` from `getdents64(2)`.
  package static func entries(
    of folder: Int32
  ) throws(SystemError) -> [(name: RawPath, type: UInt8)] {
    let size = 64 * 1024
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 8)
    defer { buffer.deallocate() }
    var entries: [(name: RawPath, type: UInt8)] = []
    while true {
      let count = squeeze_getdents64(folder, buffer.baseAddress, UInt(size))
      if count < 0 {
        if errno == EINTR { continue }
        throw SystemError.current
      }
      if count == 0 { break }
      var offset = 0
      while offset < count {
        // struct linux_dirent64: d_ino (8), d_off (8), d_reclen (2), d_type (1), d_name.
        let length = Int(buffer.loadUnaligned(fromByteOffset: offset + 16, as: UInt16.self))
        guard length > 19, offset + length <= count else { throw SystemError(code: EIO) }
        let type = buffer[offset + 18]
        // d_name ends at its NUL, within the record (found with memchr, not byte by byte).
        let start = offset + 19
        let room = offset + length - start
        let nul = memchr(buffer.baseAddress! + start, 0, room)
        let nameLength = nul.map { buffer.baseAddress!.distance(to: $0) - start } ?? room
        offset += length
        let dot = UInt8(ascii: ".")
        if buffer[start] == dot
          && (nameLength == 1 || (nameLength == 2 && buffer[start + 1] == dot))
        {
          continue
        }
        entries.append(
          (
            RawPath(
              bytes: [UInt8](UnsafeRawBufferPointer(rebasing: buffer[start..<(start + nameLength)]))
            ),
            type
          ))
      }
    }
    return entries
  }
}
