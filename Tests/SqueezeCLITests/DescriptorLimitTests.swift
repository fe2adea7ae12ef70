import Foundation
import Glibc
import TestSupport
import Testing

/// A low limit on open descriptors (`ulimit -n`): every file is still compressed. Each output
/// waiting to be published keeps its folder open, so a tree of many small folders is the hard
/// case: under a hard limit of 24, 82 of these 90 files failed with `EMFILE` when the queue
/// held at least 16 outputs, and under a soft limit of 12 every one did before squeeze raised
/// the soft limit toward the hard one.
@Suite(.tags(.system), .systemTier) struct DescriptorLimitTests {
  /// 30 folders of 3 small files each.
  static func manyFolders(_ folder: TemporaryFolder) throws -> [String: [UInt8]] {
    var files: [String: [UInt8]] = [:]
    for index in 0..<90 {
      let relative = "in/d\(index / 3)/f\(index % 3).txt"
      let bytes = Array("file \(index) \(String(repeating: "squeeze ", count: index))".utf8)
      try folder.write(relative, bytes)
      files[relative] = bytes
    }
    return files
  }

  /// `prlimit` (util-linux) runs squeeze with the soft and hard `RLIMIT_NOFILE` given.
  @Test(arguments: [("24:24", "a hard limit of 24"), ("12:4096", "a soft limit of 12")])
  func everyFileIsCompressedUnderALowDescriptorLimit(limits: String, what: String) throws {
    let folder = TemporaryFolder("descriptor-limit")
    let files = try Self.manyFolders(folder)
    let result = try Shell.run(
      "/usr/bin/prlimit", ["--nofile=\(limits)", SqueezeBinary.path, "-q", folder.url("in")])
    #expect(result.status == 0, "under \(what): \(result.stderrText)")
    #expect(result.stderrText == "", "no file failed under \(what)")
    for (relative, bytes) in files {
      let output = folder.url(relative + ".gz")
      #expect(try SystemGzip.decompress(output) == bytes, "\(relative) under \(what)")
    }
  }
}
