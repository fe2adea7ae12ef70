import Foundation
import Testing

@testable import SqueezeCore
@testable import TestSupport

/// The list's name arena is addressed with 32-bit offsets (4 GiB of names): an entry past it
/// is a failure naming the entry, never a trap converting the offset. The capacity is
/// lowered here to reach that edge without 4 GiB of names.
struct ListCapacityTests {
  @Test(arguments: [1, 4])
  func entriesPastTheNameCapacityAreFailuresNamingThem(threads: Int) throws {
    let folder = TemporaryFolder("capacity")
    try folder.write("in/a.txt", [1])
    try folder.write("in/b.txt", [2])
    try folder.write("in/sub/c.txt", [3])
    try folder.write("in/z.txt", [4])
    var options = DiscoveryOptions()
    // "a.txt" and "b.txt" fill it; "sub" and "z.txt" do not fit.
    options.nameCapacity = 10
    options.listingThreads = threads
    let result = Discovery.run(
      arguments: [RawPath(folder.url("in"))], options: options, bases: BaseDirectories(),
      namer: TemporaryNamer())
    #expect(result.files.files.map { result.files.name(of: $0) } == ["a.txt", "b.txt"])
    #expect(
      result.failures.map(\.description) == [
        "\(folder.url("in/sub")): \(FileList.fullMessage)",
        "\(folder.url("in/z.txt")): \(FileList.fullMessage)",
      ])
  }

  @Test func theArenaRefusesWhatItsOffsetsAndLengthsCannotHold() {
    var list = FileList()
    list.nameCapacity = 8
    #expect(list.store("abcd")! == (offset: 0, length: 4))
    #expect(list.store("efghi") == nil, "past the capacity")
    #expect(list.store("efgh")! == (offset: 4, length: 4))
    var long = FileList()
    #expect(long.store(RawPath(bytes: [UInt8](repeating: 0x61, count: 65_536))) == nil)
    #expect(long.names.isEmpty)
    #expect(FileList.maximumNameBytes == Int(UInt32.max))
  }
}
