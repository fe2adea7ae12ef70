import Foundation
import Glibc
import TestSupport
import Testing

@testable import SqueezeCore

@Suite struct MirrorManifestTests {
  static let sample = MirrorManifest(entries: [
    "d1": EntryIdentity(kind: .folder, inode: 0x12, handle: [1, 0, 0, 0, 0xAB, 0xCD]),
    RawPath(bytes: Array("d1/name with space %25 and\nnewline".utf8) + [0xFF, 0x7F]):
      EntryIdentity(kind: .link, inode: 7, handle: [1, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7]),
    "d1/b.txt.gz": EntryIdentity(kind: .file, inode: UInt64.max, handle: [0xFF, 0xFF, 0xFF, 0xFF]),
  ])

  @Test func aManifestReadsBackWhatWasWrittenNamesAsBytes() throws {
    let bytes = Self.sample.encoded()
    #expect(bytes.starts(with: Array("squeeze manifest 1\n".utf8)))
    #expect(!bytes.dropLast().contains(0xFF), "every byte outside ! to ~ is written %HH")
    #expect(try MirrorManifest.decode(bytes) == Self.sample)
    #expect(try MirrorManifest.decode(MirrorManifest().encoded()) == MirrorManifest())
  }

  @Test func anotherFileIsNotTakenForAManifest() {
    #expect(throws: ManifestError.notAManifest) {
      _ = try MirrorManifest.decode(Array("my notes\n".utf8))
    }
  }

  /// Ways a manifest gets damaged.
  enum Damage: String, CaseIterable, CustomTestStringConvertible {
    case aByteChanged = "a byte changed"
    case cutShort = "cut short"
    case closingLineLost = "its closing line lost"
    case entryLineLost = "an entry line lost"
    var testDescription: String { rawValue }
  }

  @Test(arguments: Damage.allCases)
  func aDamagedManifestIsRefused(damage: Damage) {
    var bytes = Self.sample.encoded()
    let lines = bytes.split(separator: UInt8(ascii: "\n")).map { Array($0) + [UInt8(ascii: "\n")] }
    switch damage {
    case .aByteChanged: bytes[bytes.count / 2] ^= 0x04
    case .cutShort: bytes.removeLast(5)
    case .closingLineLost: bytes = Array(lines.dropLast().joined())
    case .entryLineLost:
      bytes = Array(lines.enumerated().filter { $0.offset != 2 }.map(\.element).joined())
    }
    #expect(throws: ManifestError.self) { _ = try MirrorManifest.decode(bytes) }
  }

  @Test func anIdentityChangesWhenAnInodeNumberIsReused() throws {
    let folder = TemporaryFolder("identity")
    let base = try FileDescriptor.open(
      RawPath(folder.path), flags: O_RDONLY | O_DIRECTORY, symlinks: .always
    ).release()
    defer { close(base) }
    let place = RelativeLocation(base: base, directory: "", name: "entry")
    symlink("target", folder.url("entry"))
    let first = try #require(try EntryIdentity.of(place))
    #expect(first.kind == .link)
    #expect(try EntryIdentity.of(place) == first, "the same entry, the same identity")
    unlink(folder.url("entry"))
    symlink("target", folder.url("entry"))
    let second = try #require(try EntryIdentity.of(place))
    // The number may be the same (ext4 hands it out again at once); the identity is not.
    #expect(second != first)
  }

  @Test func writingReplacesTheManifestAndReadingFindsIt() throws {
    let folder = TemporaryFolder("manifest-write")
    let base = try FileDescriptor.open(
      RawPath(folder.path), flags: O_RDONLY | O_DIRECTORY, symlinks: .always
    ).release()
    defer { close(base) }
    #expect(MirrorManifest.read(in: base) == .absent)
    let namer = TemporaryNamer()
    try Self.sample.write(in: base, namer: namer)
    #expect(MirrorManifest.read(in: base) == .read(Self.sample))
    try MirrorManifest().write(in: base, namer: namer)
    #expect(MirrorManifest.read(in: base) == .read(MirrorManifest()))
    #expect(TemporaryFolder.squeezeTemporaries(under: folder.path).isEmpty)
    #expect(namer.live.count == 0)
    unlink(folder.url(".squeeze-manifest"))
    symlink("elsewhere", folder.url(".squeeze-manifest"))
    #expect(MirrorManifest.read(in: base) == .unusable(.inTheWay(.symbolicLink)))
  }
}
