import Foundation
import Glibc
import TestSupport
import Testing

/// squeeze's outputs are standard gzip: the system's gzip restores every byte, the name and
/// the modification time.
@Suite struct RoundTripTests {
  /// A file content for a round trip, generated when the test runs (and named, not dumped,
  /// in the test log).
  enum Content: String, CaseIterable, Sendable {
    case empty, oneByte, randomMebibyte, textTenMebibytes

    var bytes: [UInt8] {
      switch self {
      case .empty: []
      case .oneByte: [0x41]
      case .randomMebibyte: TestData.random(1 << 20)
      case .textTenMebibytes: TestData.text(10 << 20)
      }
    }
  }

  @Test(arguments: Content.allCases)
  func gunzipRestoresEveryByte(content: Content) throws {
    let label = content.rawValue
    let bytes = content.bytes
    let folder = TemporaryFolder("roundtrip")
    let source = try folder.write("in/file.dat", bytes)
    let result = try SqueezeBinary.run([folder.url("in")])
    #expect(result.status == 0, "\(label): \(result.stderrText)")
    #expect(try SystemGzip.decompress(source + ".gz") == bytes, "\(label)")
    #expect(try folder.read("in/file.dat") == bytes, "the original is kept")
  }

  @Test func theHeaderCarriesTheOriginalNameAndModificationTime() throws {
    let folder = TemporaryFolder("header")
    let source = try folder.write("in/notes of the day.txt", TestData.text(5000))
    var times = [
      timespec(tv_sec: 1_600_000_123, tv_nsec: 456_789_000),
      timespec(tv_sec: 1_600_000_123, tv_nsec: 456_789_000),
    ]
    utimensat(AT_FDCWD, source, &times, 0)
    #expect(try SqueezeBinary.run([folder.url("in")]).status == 0)
    // gzip -N restores the name and time from the header: rename the .gz first so the
    // name can only come from inside it.
    try folder.makeFolder("restore")
    try FileManager.default.copyItem(
      atPath: source + ".gz", toPath: folder.url("restore/renamed.gz"))
    let restored = try Shell.run("/bin/gzip", ["-dN", folder.url("restore/renamed.gz")])
    #expect(restored.status == 0, "\(restored.stderrText)")
    var status = stat()
    #expect(stat(folder.url("restore/notes of the day.txt"), &status) == 0)
    #expect(status.st_mtim.tv_sec == 1_600_000_123)
    // The output itself carries the source's time to the nanosecond.
    #expect(stat(source + ".gz", &status) == 0)
    #expect(status.st_mtim.tv_sec == 1_600_000_123 && status.st_mtim.tv_nsec == 456_789_000)
  }

  @Test func aNestedTreeOf200FilesRoundTrips() throws {
    let folder = TemporaryFolder("tree")
    var expected: [String: [UInt8]] = [:]
    for index in 0..<200 {
      let path = "tree/d\(index % 7)/e\(index % 3)/file-\(index).txt"
      let bytes = TestData.text(100 + index * 97, seed: UInt64(index))
      try folder.write(path, bytes)
      expected[path] = bytes
    }
    let result = try SqueezeBinary.run(["-j", "3", folder.url("tree")])
    #expect(result.status == 0, "\(result.stderrText)")
    for (path, bytes) in expected {
      #expect(try SystemGzip.decompress(folder.url(path) + ".gz") == bytes, "\(path)")
    }
    #expect(folder.allFiles().filter { $0.hasSuffix(".gz") }.count == 200)
  }

  @Test func namesWithSpacesAndNonASCIILettersRoundTrip() throws {
    let folder = TemporaryFolder("names")
    let names = ["with space.txt", "café Übersicht.txt", "日本語.log", "  leading and trailing  "]
    for name in names { try folder.write("in/\(name)", Array("contents of \(name)".utf8)) }
    #expect(try SqueezeBinary.run([folder.url("in")]).status == 0)
    for name in names {
      #expect(
        try SystemGzip.decompress(folder.url("in/\(name).gz")) == Array("contents of \(name)".utf8))
    }
  }

  /// Real text (the repository's samples and the system's kernel headers, which every
  /// machine with a C compiler has): the default engine's output at level 6 is no larger
  /// than `gzip -6`'s, header names included.
  @Test func outputOfATextTreeIsNoLargerThanGzip6() throws {
    let folder = TemporaryFolder("size")
    let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("samples")
    for copy in ["ours", "gzip"] {
      try folder.makeFolder(copy)
      let script =
        "cp -r \(Shell.quote(samples.path)) /usr/include/linux \(Shell.quote(folder.url(copy)))"
      #expect(try Shell.sh(script).status == 0)
    }
    #expect(try SqueezeBinary.run(["-6", folder.url("ours")]).status == 0)
    #expect(try Shell.run("/bin/gzip", ["-6", "-r", "-k", folder.url("gzip")]).status == 0)
    func total(_ copy: String) throws -> Int {
      try TemporaryFolder.files(in: folder.url(copy)).filter { $0.hasSuffix(".gz") }.reduce(0) {
        let path = folder.url(copy) + "/" + $1
        return $0 + (try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int)
      }
    }
    let ours = try total("ours")
    let theirs = try total("gzip")
    #expect(ours > 0 && ours <= theirs, "squeeze \(ours) bytes, gzip -6 \(theirs) bytes")
  }
}
