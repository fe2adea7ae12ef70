import Foundation
import TestSupport
import Testing

/// Files of up to 128 bytes come out no larger than gzip's at the same level (gzip -9 for
/// squeeze's 10 to 12), and restore exactly: libdeflate stores the shortest of them where
/// gzip writes a fixed-Huffman block, so zlib's output is kept when shorter.
@Suite struct TinyInputTests {
  /// Text and binary inputs from 0 to 128 bytes.
  static let inputs: [(name: String, bytes: [UInt8])] = {
    var inputs: [(String, [UInt8])] = []
    for length in [0, 1, 2, 5, 10, 20, 23, 24, 28, 31, 40, 50, 51, 52, 64, 100, 127, 128] {
      inputs.append(
        ("text-\(length)", Array(TestData.text(length + 500, seed: UInt64(length)).prefix(length))))
    }
    for length in [3, 30, 60, 128] {
      inputs.append(("random-\(length)", TestData.random(length, seed: UInt64(length))))
    }
    return inputs
  }()

  @Test(arguments: 1...12)
  func tinyFilesAreNoLargerThanGzipsAtTheSameLevel(level: Int) throws {
    let folder = TemporaryFolder("tiny-\(level)")
    var larger: [String] = []
    for input in Self.inputs {
      let path = try folder.write(input.name, input.bytes)
      let squeeze = try SqueezeBinary.run(["-\(level)", "-c", path])
      try #require(squeeze.status == 0, "\(squeeze.stderrText)")
      let gzip = try Shell.run("/bin/gzip", ["-\(min(level, 9))", "-c", path])
      try #require(gzip.status == 0, "\(gzip.stderrText)")
      if squeeze.stdout.count > gzip.stdout.count {
        larger.append("\(input.name): \(squeeze.stdout.count) > \(gzip.stdout.count)")
      }
      let restored = try Shell.run("/bin/gzip", ["-dc"], input: squeeze.stdout)
      #expect(restored.status == 0 && restored.stdout == input.bytes, "\(input.name)")
    }
    #expect(larger.isEmpty, "larger than gzip -\(min(level, 9)): \(larger)")
  }
}
