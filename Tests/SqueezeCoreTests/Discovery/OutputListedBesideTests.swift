import Foundation
import SqueezeSystem
import Testing

@testable import SqueezeCore
@testable import TestSupport

/// Discovery tells each file whether its output name was in the same folder listing, so a
/// run beside the sources inspects only outputs that are there (``OutputInspection``).
struct OutputListedBesideTests {
  /// The listed files of a walk of `folder/name`, by name, with their flag.
  static func flags(
    of name: String, in folder: TemporaryFolder, wanted: DiscoveryOptions.Wanted
  ) -> [String: Bool] {
    var options = DiscoveryOptions()
    options.wanted = wanted
    let list = Discovery.run(
      arguments: [RawPath(folder.url(name))], options: options, bases: BaseDirectories(),
      namer: TemporaryNamer()
    ).files
    var flags: [String: Bool] = [:]
    for file in list.files {
      flags[String(decoding: list.name(of: file).bytes, as: UTF8.self)] = file.outputListedBeside
    }
    return flags
  }

  @Test func aRestoreKnowsWhichRestoredNamesAreAlreadyBesideTheirGzipFile() throws {
    let folder = TemporaryFolder("listed-restore")
    for name in ["a.txt.gz", "a.txt", "b.txt.gz", "c.TGZ", "c.tar", "d.tgz", "e-gz", "e"] {
      try folder.write("in/\(name)", [1, 2, 3])
    }
    let flags = Self.flags(of: "in", in: folder, wanted: .compressedByName)
    #expect(
      flags == ["a.txt.gz": true, "b.txt.gz": false, "c.TGZ": true, "d.tgz": false, "e-gz": true])
  }

  /// A folder with no name ending in `.gz` takes a shorter path (no output names are built):
  /// its other compressed names are still skipped as compressed, not compressed again.
  /// A regular file is judged by its name as soon as it is listed, and nothing else is:
  /// a followed link is judged by its own name once its stat says it leads to a file, so
  /// `c.gz` (a link to a plain file) is skipped as compressed and `d` (a link to a
  /// compressed file) is taken.
  @Test func followedLinksAreJudgedByTheirOwnNamesAfterTheirStat() throws {
    let folder = TemporaryFolder("listed-links")
    for name in ["a.gz", "b.txt"] { try folder.write("in/\(name)", [1, 2, 3]) }
    try FileManager.default.createSymbolicLink(
      atPath: folder.url("in/c.gz"), withDestinationPath: "b.txt")
    try FileManager.default.createSymbolicLink(
      atPath: folder.url("in/d"), withDestinationPath: "a.gz")
    var options = DiscoveryOptions()
    options.wanted = .uncompressed
    options.followSymlinks = true
    let result = Discovery.run(
      arguments: [RawPath(folder.url("in"))], options: options, bases: BaseDirectories(),
      namer: TemporaryNamer())
    #expect(result.files.files.map { result.files.name(of: $0) } == ["b.txt", "d"])
    #expect(result.skipCounts[.alreadyCompressed] == 2)
  }

  @Test func aFolderWithoutOutputsStillSkipsItsOtherCompressedNames() throws {
    let folder = TemporaryFolder("listed-no-outputs")
    for name in ["a.txt", "b.tgz", "c.Z", "d-gz"] { try folder.write("in/\(name)", [1, 2, 3]) }
    var options = DiscoveryOptions()
    options.wanted = .uncompressed
    let result = Discovery.run(
      arguments: [RawPath(folder.url("in"))], options: options, bases: BaseDirectories(),
      namer: TemporaryNamer())
    #expect(result.files.files.map { result.files.name(of: $0) } == ["a.txt"])
    #expect(result.files.files.allSatisfy { !$0.outputListedBeside })
    #expect(result.skipCounts[.alreadyCompressed] == 3)
  }

  @Test func compressionKnowsWhichOutputsAreAlreadyBesideTheirSource() throws {
    let folder = TemporaryFolder("listed-compress")
    for name in ["a.txt", "a.txt.gz", "b.txt"] { try folder.write("in/\(name)", [1, 2, 3]) }
    let flags = Self.flags(of: "in", in: folder, wanted: .uncompressed)
    #expect(flags == ["a.txt": true, "b.txt": false])
  }
}
