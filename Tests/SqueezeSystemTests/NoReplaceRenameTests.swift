import Foundation
import Glibc
import TestSupport
import Testing

@testable import SqueezeSystem

@Suite struct NoReplaceRenameTests {
  /// An errno and what should follow it.
  struct Case<Decision: Sendable>: CustomTestStringConvertible, Sendable {
    var name: String
    var code: Int32
    var decision: Decision
    var testDescription: String { name }
  }

  @Test(
    arguments: [
      Case(name: "EINVAL: the flag is refused (FUSE)", code: EINVAL, decision: .linkInstead),
      Case(name: "ENOSYS: no renameat2", code: ENOSYS, decision: .linkInstead),
      Case(name: "EEXIST: the name is taken", code: EEXIST, decision: .fail),
      Case(name: "ENOENT", code: ENOENT, decision: .fail),
      Case(name: "EACCES", code: EACCES, decision: .fail),
      Case(name: "EXDEV", code: EXDEV, decision: .fail),
      Case(name: "ENOSPC", code: ENOSPC, decision: .fail),
    ] as [Case<NoReplaceRename.AfterRename>])
  func aRefusedFlagAndNothingElseFallsBackToALink(_ example: Case<NoReplaceRename.AfterRename>) {
    #expect(NoReplaceRename.afterRename(failedWith: example.code) == example.decision)
  }

  @Test(
    arguments: [
      Case(name: "EPERM: no hard links here", code: EPERM, decision: .refuseSafely),
      Case(name: "EOPNOTSUPP", code: EOPNOTSUPP, decision: .refuseSafely),
      Case(name: "ENOSYS", code: ENOSYS, decision: .refuseSafely),
      Case(name: "EEXIST: the name is taken", code: EEXIST, decision: .fail),
      Case(name: "ENOSPC", code: ENOSPC, decision: .fail),
      Case(name: "EMLINK", code: EMLINK, decision: .fail),
    ] as [Case<NoReplaceRename.AfterLink>])
  func aFileSystemWithoutLinksIsRefusedRatherThanRiskAReplace(
    _ example: Case<NoReplaceRename.AfterLink>
  ) {
    #expect(NoReplaceRename.afterLink(failedWith: example.code) == example.decision)
  }

  /// Renames `from` to `to` in the open folder `folder` as squeeze publishes a new output.
  static func rename(_ from: String, to: String, in folder: Int32) throws(SystemError) {
    try RelativeLocation(base: folder, directory: "", name: RawPath(from))
      .rename(to: RelativeLocation(base: folder, directory: "", name: RawPath(to)), .noReplace)
  }

  @Test(
    .tags(.system), .systemTier,
    .enabled(if: Bindfs.isAvailable, Bindfs.requirement))
  func onBindfsARenameIsALinkThatNeverReplaces() throws {
    let folder = TemporaryFolder("noreplace-bindfs")
    try Bindfs.withMount(in: folder) { mount in
      let base = try FileDescriptor.open(RawPath(mount), flags: .folder, symlinks: .always)
      #expect(FileManager.default.createFile(atPath: mount + "/a.tmp", contents: Data("new".utf8)))
      #expect(FileManager.default.createFile(atPath: mount + "/taken", contents: Data("kept".utf8)))
      // renameat2(RENAME_NOREPLACE) is refused here (EINVAL), which the fallback is for.
      try Self.rename("a.tmp", to: "free", in: base.rawValue)
      #expect(NoReplaceRename.hasSeenRefusal)
      #expect(FileManager.default.contents(atPath: mount + "/free") == Data("new".utf8))
      #expect(!FileManager.default.fileExists(atPath: mount + "/a.tmp"))

      #expect(
        FileManager.default.createFile(atPath: mount + "/b.tmp", contents: Data("other".utf8)))
      #expect(throws: SystemError.fileExists) {
        try Self.rename("b.tmp", to: "taken", in: base.rawValue)
      }
      #expect(FileManager.default.contents(atPath: mount + "/taken") == Data("kept".utf8))
      #expect(FileManager.default.contents(atPath: mount + "/b.tmp") == Data("other".utf8))
      #expect(Descriptor.syncFileSystemIsHollow(base.rawValue))
      let back = try FileDescriptor.open(
        RawPath(folder.url("back")), flags: .folder, symlinks: .always)
      #expect(!Descriptor.syncFileSystemIsHollow(back.rawValue))
    }
  }
}
