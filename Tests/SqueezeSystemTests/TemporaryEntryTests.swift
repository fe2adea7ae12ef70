import Foundation
import Glibc
import TestSupport
import Testing

@testable import SqueezeSystem

@Suite struct TemporaryEntryTests {
  /// The run's base folder, opened as the run opens it.
  static func openBase(_ path: String) throws -> Int32 {
    try FileDescriptor.open(RawPath(path), flags: .folder, symlinks: .always)
      .release()
  }

  /// A temporary file made in `d` of `folder`, after which `d` is renamed to `moved` and a
  /// symbolic link to `decoy` put where `d` was: what a concurrent rename looks like.
  static func temporaryWhoseFolderMoved(
    in folder: TemporaryFolder
  ) throws -> (TemporaryEntry, TemporaryNamer) {
    try folder.makeFolder("d")
    try folder.makeFolder("decoy")
    let base = try openBase(folder.path)
    defer { close(base) }
    let namer = TemporaryNamer()
    let handle = try FolderHandle.folder(
      of: RelativeLocation(base: base, directory: "d", name: "x.gz"))
    let (entry, descriptor) = try TemporaryEntry.file(in: handle, namer: namer, permissions: 0o600)
    close(descriptor)
    #expect(rename(folder.url("d"), folder.url("moved")) == 0)
    #expect(symlink(folder.url("decoy"), folder.url("d")) == 0)
    return (entry, namer)
  }

  @Test func aTemporaryIsRemovedInTheFolderItWasMadeInAfterThatFolderMoved() throws {
    let folder = TemporaryFolder("entry-moved")
    let (entry, namer) = try Self.temporaryWhoseFolderMoved(in: folder)
    #expect(TemporaryFolder.files(in: folder.url("moved")) == [entry.name.displayString])
    #expect(namer.live.count == 1)
    try entry.remove()
    #expect(TemporaryFolder.files(in: folder.url("moved")).isEmpty)
    #expect(namer.live.count == 0)
  }

  @Test func aRenameStaysInTheFolderItWasMadeInAndNeverFollowsALinkInItsPlace() throws {
    let folder = TemporaryFolder("entry-rename")
    let (entry, namer) = try Self.temporaryWhoseFolderMoved(in: folder)
    try entry.rename(to: "x.gz", .noReplace)
    #expect(TemporaryFolder.files(in: folder.url("moved")) == ["x.gz"])
    #expect(TemporaryFolder.files(in: folder.url("decoy")).isEmpty)
    #expect(namer.live.count == 0)
  }

  /// The cache answers the folder asked for last without hashing its path: asked for
  /// folders in turn, it still gives each its own folder.
  @Test func theFolderCacheGivesEachFolderItsOwnHandleWhenAskedInTurn() throws {
    let folder = TemporaryFolder("entry-cache")
    for name in ["a", "b", "a/c"] { try folder.makeFolder(name) }
    let base = try Self.openBase(folder.path)
    defer { close(base) }
    let cache = FolderHandleCache()
    func inode(_ directory: String) throws -> UInt64 {
      try FileStatus.of(RawPath(directory), in: base).inode
    }
    for directory in ["a", "a", "b", "a/c", "a", "b", "b", "a/c"] {
      let handle = try cache.folder(
        of: RelativeLocation(base: base, directory: RawPath(directory), name: "x.gz"))
      #expect(
        try Descriptor.status(handle.descriptor).inode == inode(directory),
        "\(directory)")
    }
  }

  /// The cache's keys hash only a path's length and last bytes: folders whose paths share
  /// both (`p/include`, `q/include`) still get their own handles, asked for in any order.
  @Test func theFolderCacheTellsApartFoldersWhosePathsEndAlike() throws {
    let folder = TemporaryFolder("entry-cache-alike")
    let directories = ["p", "q", "p/include", "q/include", "p/include/include"]
    for name in directories { try folder.makeFolder(name) }
    let base = try Self.openBase(folder.path)
    defer { close(base) }
    let cache = FolderHandleCache()
    var held: [FolderHandle] = []
    for directory in ["p/include", "q/include", "p/include", "q/include", "p/include/include"] {
      let handle = try cache.folder(
        of: RelativeLocation(base: base, directory: RawPath(directory), name: "x.gz"))
      held.append(handle)
      #expect(
        try Descriptor.status(handle.descriptor).inode
          == FileStatus.of(RawPath(directory), in: base).inode, "\(directory)")
    }
    #expect(held[0] === held[2])
    #expect(held[1] === held[3])
    #expect(held[0] !== held[1])
  }

  /// Whether `descriptor` is still open on the folder with `inode` (a closed number may
  /// have been given to another test's file meanwhile: then it names another inode).
  static func isOpen(_ descriptor: Int32, on inode: UInt64) -> Bool {
    var status = stat()
    return fstat(descriptor, &status) == 0 && UInt64(status.st_ino) == inode
  }

  /// A folder's handle that nothing uses any more (no temporary, not among the last
  /// ``FolderHandleCache/keptOpen`` opened) is closed: its descriptor does not stay open
  /// for the rest of the run.
  @Test func theFolderCacheClosesHandlesNothingUses() throws {
    let folder = TemporaryFolder("entry-cache-close")
    let count = FolderHandleCache.keptOpen + 3
    for index in 0..<count { try folder.makeFolder("f\(index)") }
    let base = try Self.openBase(folder.path)
    defer { close(base) }
    let cache = FolderHandleCache()
    var opened: [(descriptor: Int32, inode: UInt64)] = []
    for index in 0..<count {
      let handle = try cache.folder(
        of: RelativeLocation(base: base, directory: RawPath("f\(index)"), name: "x.gz"))
      opened.append((handle.descriptor, try Descriptor.status(handle.descriptor).inode))
    }
    #expect(cache.openCount == FolderHandleCache.keptOpen)
    let closedCount = count - FolderHandleCache.keptOpen
    for (index, handle) in opened.enumerated() {
      #expect(
        Self.isOpen(handle.descriptor, on: handle.inode) == (index >= closedCount), "f\(index)")
    }
  }

  /// Once the run's outputs are all published, ``FolderHandleCache/closeAll()`` closes the
  /// handles it kept for the next file (the last ones opened), which would otherwise stay
  /// open until the process ends.
  @Test func theFolderCacheClosesEveryHandleAtTheEnd() throws {
    let folder = TemporaryFolder("entry-cache-end")
    for name in ["a", "b"] { try folder.makeFolder(name) }
    let base = try Self.openBase(folder.path)
    defer { close(base) }
    let cache = FolderHandleCache()
    var opened: [(descriptor: Int32, inode: UInt64)] = []
    for directory in ["a", "b"] {
      let handle = try cache.folder(
        of: RelativeLocation(base: base, directory: RawPath(directory), name: "x.gz"))
      opened.append((handle.descriptor, try Descriptor.status(handle.descriptor).inode))
    }
    #expect(opened.allSatisfy { Self.isOpen($0.descriptor, on: $0.inode) })
    cache.closeAll()
    #expect(cache.openCount == 0)
    #expect(!opened.contains { Self.isOpen($0.descriptor, on: $0.inode) })
  }

  /// A handle a temporary still holds stays open however many folders are opened after
  /// it, and the cache gives that same handle again for its folder.
  @Test func theFolderCacheKeepsAndReusesAHandleInUse() throws {
    let folder = TemporaryFolder("entry-cache-reuse")
    let count = FolderHandleCache.keptOpen + 3
    try folder.makeFolder("held")
    for index in 0..<count { try folder.makeFolder("f\(index)") }
    let base = try Self.openBase(folder.path)
    defer { close(base) }
    let cache = FolderHandleCache()
    let held = try cache.folder(of: RelativeLocation(base: base, directory: "held", name: "x.gz"))
    let inode = try Descriptor.status(held.descriptor).inode
    for index in 0..<count {
      _ = try cache.folder(
        of: RelativeLocation(base: base, directory: RawPath("f\(index)"), name: "x.gz"))
    }
    #expect(cache.openCount == FolderHandleCache.keptOpen + 1)
    #expect(Self.isOpen(held.descriptor, on: inode))
    let again = try cache.folder(of: RelativeLocation(base: base, directory: "held", name: "x.gz"))
    #expect(again === held)
  }

  @Test func removingAllRemovesEveryKindAndRefusesNewTemporaries() throws {
    let folder = TemporaryFolder("entry-all")
    try folder.makeFolder("a")
    try folder.makeFolder("b")
    let base = try Self.openBase(folder.path)
    defer { close(base) }
    let namer = TemporaryNamer()
    let a = try FolderHandle.folder(of: RelativeLocation(base: base, directory: "a", name: "n"))
    let b = try FolderHandle.folder(of: RelativeLocation(base: base, directory: "b", name: "n"))
    let (_, descriptor) = try TemporaryEntry.file(in: a, namer: namer, permissions: 0o600)
    close(descriptor)
    _ = try TemporaryEntry.symbolicLink(to: "/etc/passwd", in: b, namer: namer)
    _ = try TemporaryEntry.directory(in: b, namer: namer, permissions: 0o700)
    #expect(rename(folder.url("b"), folder.url("b-moved")) == 0)
    #expect(namer.live.removeAll() == 3)
    #expect(TemporaryFolder.files(in: folder.url("a")).isEmpty)
    #expect(
      ((try? FileManager.default.contentsOfDirectory(atPath: folder.url("b-moved"))) ?? ["?"])
        .isEmpty)
    #expect(throws: SystemError(code: ECANCELED)) {
      _ = try TemporaryEntry.directory(in: a, namer: namer, permissions: 0o700)
    }
    #expect(
      ((try? FileManager.default.contentsOfDirectory(atPath: folder.url("a"))) ?? ["?"]).isEmpty)
  }
}
