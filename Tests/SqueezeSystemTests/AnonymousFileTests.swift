import Foundation
import Glibc
import TestSupport
import Testing

@testable import SqueezeSystem

/// Unnamed outputs (`O_TMPFILE`): invisible until linked, never replacing, gone when dropped.
@Suite struct AnonymousFileTests {
  static func openFolder(_ path: String) throws -> FolderHandle {
    FolderHandle(
      borrowing: try FileDescriptor.open(RawPath(path), flags: .folder, symlinks: .always)
        .release())
  }

  /// Each kernel from 6.10 lets the opener link the file; this machine's must say so.
  @Test func theKernelCheckReadsTheRelease() {
    var names = utsname()
    #expect(uname(&names) == 0)
    let release = withUnsafeBytes(of: &names.release) { raw in
      String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
    }
    let parts = release.split(whereSeparator: { !$0.isNumber }).prefix(2).compactMap { Int($0) }
    #expect(AnonymousFile.kernelAtLeast(major: parts[0], minor: parts[1]))
    #expect(!AnonymousFile.kernelAtLeast(major: parts[0], minor: parts[1] + 1))
    #expect(!AnonymousFile.kernelAtLeast(major: parts[0] + 1, minor: 0))
    #expect(AnonymousFile.kernelAtLeast(major: parts[0] - 1, minor: 99))
  }

  @Test(.enabled(if: AnonymousFile.linkingIsAllowed, "needs Linux 6.10 or CAP_DAC_READ_SEARCH"))
  func aFileAppearsOnlyWhenLinkedAndNeverReplaces() throws {
    let folder = TemporaryFolder("anonymous")
    try folder.write("d/taken.gz", Array("someone's".utf8))
    let handle = try Self.openFolder(folder.url("d"))
    defer { close(handle.descriptor) }
    let made = try #require(try TemporaryEntry.anonymousFile(in: handle, permissions: 0o640))
    #expect(made.entry.isUnnamed)
    #expect(write(made.descriptor, "whole", 5) == 5)
    // Written, and still nowhere in the folder.
    #expect(TemporaryFolder.files(in: folder.url("d")) == ["taken.gz"])
    // A name that exists is never replaced: EEXIST, as renameat2(RENAME_NOREPLACE) gives.
    #expect(throws: SystemError(code: EEXIST)) {
      try made.entry.rename(to: RawPath("taken.gz"), .noReplace)
    }
    #expect(try folder.read("d/taken.gz") == Array("someone's".utf8))
    // Only a new name is allowed.
    #expect(throws: SystemError(code: EINVAL)) {
      try made.entry.rename(to: RawPath("new.gz"), .replace)
    }
    try made.entry.rename(to: RawPath("new.gz"), .noReplace)
    #expect(try folder.read("d/new.gz") == Array("whole".utf8))
    var status = stat()
    #expect(stat(folder.url("d/new.gz"), &status) == 0)
    #expect(status.st_mode & 0o777 == 0o640 & ~Self.umaskNow())
  }

  @Test(.enabled(if: AnonymousFile.linkingIsAllowed, "needs Linux 6.10 or CAP_DAC_READ_SEARCH"))
  func aDroppedFileLeavesNothing() throws {
    let folder = TemporaryFolder("anonymous-dropped")
    try folder.makeFolder("d")
    let handle = try Self.openFolder(folder.url("d"))
    defer { close(handle.descriptor) }
    let made = try #require(try TemporaryEntry.anonymousFile(in: handle, permissions: 0o600))
    #expect(write(made.descriptor, "partial", 7) == 7)
    // Read back through /proc (what --isolation blocking's fsync and checks may use).
    let reopened = try made.entry.open(flags: .readOnly)
    var bytes = [UInt8](repeating: 0, count: 16)
    #expect(read(reopened.rawValue, &bytes, 16) == 7)
    try made.entry.sync()
    try made.entry.remove()
    #expect(TemporaryFolder.files(in: folder.url("d")).isEmpty)
    // Removing twice is harmless.
    try made.entry.remove()
  }

  static func umaskNow() -> mode_t {
    let old = umask(0o022)
    umask(old)
    return old
  }
}
