import Foundation
import Glibc
import SqueezeSystem
import Testing

@testable import SqueezeCore
@testable import TestSupport

/// Discovery finds the temporaries killed runs left and removes nothing; the run removes
/// them before its work.
@Suite struct StaleTemporariesTests {
  @Test func discoveryFindsStaleTemporariesAndTheRunRemovesThem() throws {
    let folder = TemporaryFolder("stale-found")
    try folder.write("in/sub/a.txt", text: "a")
    // Another host's temporary, untouched for two days: stale.
    let stale = try folder.write("in/sub/.squeeze-1-2-3-4-5-6.tmp", [0])
    var old = [
      timespec(tv_sec: time(nil) - 2 * 86_400, tv_nsec: 0),
      timespec(tv_sec: time(nil) - 2 * 86_400, tv_nsec: 0),
    ]
    _ = utimensat(AT_FDCWD, stale, &old, 0)
    // One of this process's: its writer is alive.
    let namer = TemporaryNamer()
    let live = try folder.write("in/sub/\(namer.next().displayString)", [0])
    let bases = BaseDirectories()
    let result = Discovery.run(
      arguments: [RawPath(folder.url("in"))], options: DiscoveryOptions(), bases: bases,
      namer: namer)
    #expect(FileManager.default.fileExists(atPath: stale), "discovery removed nothing")
    #expect(result.staleTemporaries.map(\.name) == [".squeeze-1-2-3-4-5-6.tmp"])
    #expect(result.skipCounts[.temporary] == 1, "the live one is skipped")
    let removed = StaleTemporaries.remove(
      result.staleTemporaries, in: result.files, bases: bases, symlinks: .never, namer: namer)
    #expect(removed == 1)
    #expect(!FileManager.default.fileExists(atPath: stale))
    #expect(FileManager.default.fileExists(atPath: live))
  }
}
