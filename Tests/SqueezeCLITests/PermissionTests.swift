import Foundation
import Glibc
import Testing

@testable import TestSupport

/// Outputs get their source's permission bits whatever creates the file with fewer: the
/// umask, or a folder's default ACL (temporaries are created with the final bits only when
/// neither can change them; otherwise `fchmod` sets them).
@Suite(.tags(.system), .systemTier) struct PermissionTests {
  static let modes: [(name: String, mode: mode_t)] = [
    ("shared.txt", 0o644), ("script.sh", 0o755), ("private.txt", 0o600), ("group.txt", 0o664),
  ]

  static func writeSources(in folder: TemporaryFolder) throws {
    for (name, mode) in modes {
      try folder.write("in/\(name)", TestData.text(3000, seed: UInt64(mode)))
      chmod(folder.url("in/\(name)"), mode)
    }
  }

  static func expectOutputsKeepModes(_ folder: TemporaryFolder) throws {
    for (name, mode) in modes {
      var status = stat()
      #expect(stat(folder.url("in/\(name).gz"), &status) == 0, "\(name).gz exists")
      #expect(
        status.st_mode & 0o7777 == mode,
        "\(name).gz: mode \(String(status.st_mode & 0o7777, radix: 8))")
      #expect(
        try SystemGzip.decompress(folder.url("in/\(name).gz")) == (try folder.read("in/\(name)")))
    }
  }

  @Test func aStrictUmaskDoesNotNarrowOutputModes() throws {
    let folder = TemporaryFolder("umask")
    try Self.writeSources(in: folder)
    let result = try Shell.run(
      "/bin/sh", ["-c", "umask 077 && exec \"$0\" \"$1\"", SqueezeBinary.path, folder.url("in")])
    #expect(result.status == 0, "\(result.stderrText)")
    try Self.expectOutputsKeepModes(folder)
  }

  @Test func aDefaultACLDoesNotNarrowOutputModes() throws {
    let folder = TemporaryFolder("acl")
    try Self.writeSources(in: folder)
    // A default ACL granting the group and others nothing: files created in the folder
    // lose those bits whatever the umask says (acl(5)).
    try #require(
      try TestACL.setDefault(on: folder.url("in"), owner: 7, group: 0, other: 0),
      "this file system takes POSIX ACLs (ext4, tmpfs)")
    var probe = stat()
    let made = open(folder.url("in/probe"), O_WRONLY | O_CREAT | O_EXCL, 0o644)
    close(made)
    stat(folder.url("in/probe"), &probe)
    unlink(folder.url("in/probe"))
    #expect(probe.st_mode & 0o777 == 0o600, "the ACL narrows new files")
    let result = try SqueezeBinary.run([folder.url("in")])
    #expect(result.status == 0, "\(result.stderrText)")
    try Self.expectOutputsKeepModes(folder)
  }
}

/// Sets POSIX ACLs through their extended attribute, as setfacl(1) does (Glibc's Swift
/// module has no setxattr; Python's os module does).
enum TestACL {
  /// Gives `folder` a default ACL of owner, group and other entries (bits `rwx` = 7).
  ///
  /// - Returns: false when the file system refuses it.
  static func setDefault(on folder: String, owner: Int, group: Int, other: Int) throws -> Bool {
    // The value (linux/posix_acl_xattr.h): version 2 (u32 LE), then entries of tag (u16),
    // permissions (u16) and id (u32, -1 for these); USER_OBJ 0x01, GROUP_OBJ 0x04, OTHER 0x20.
    let script = """
      import os, struct, sys
      value = struct.pack('<I', 2) + b''.join(
          struct.pack('<HHI', tag, bits, 0xFFFFFFFF)
          for tag, bits in ((0x01, \(owner)), (0x04, \(group)), (0x20, \(other))))
      os.setxattr(sys.argv[1], 'system.posix_acl_default', value)
      """
    return try Shell.run("/usr/bin/env", ["python3", "-c", script, folder]).status == 0
  }
}
