import Glibc
import Testing

@testable import SqueezeSystem

@Suite struct FileKindTests {
  /// Each type of `<sys/stat.h>` (as Glibc names it) is the kind it says, whatever the
  /// permission bits beside it; any other type bits are of unknown type.
  @Test(arguments: [
    (type: S_IFREG, kind: FileKind.regular), (type: S_IFDIR, kind: .directory),
    (type: S_IFLNK, kind: .symbolicLink), (type: S_IFCHR, kind: .characterDevice),
    (type: S_IFBLK, kind: .blockDevice), (type: S_IFIFO, kind: .fifo),
    (type: S_IFSOCK, kind: .socket), (type: mode_t(0o070_000), kind: .unknown),
    (type: mode_t(0), kind: .unknown),
  ])
  func eachTypeIsItsKind(type: mode_t, kind: FileKind) {
    for permissions: mode_t in [0, 0o644, 0o7777] {
      #expect(FileKind(mode: type | permissions) == kind)
    }
    let status = FileStatus(
      device: 1, inode: 2, mode: UInt32(type | 0o600), linkCount: 1, size: 0,
      modificationTime: Timestamp(seconds: 0, nanoseconds: 0))
    #expect(status.kind == kind)
  }
}
