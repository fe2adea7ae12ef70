import Foundation
import Glibc
import TestSupport
import Testing

/// SIGINT, SIGTERM and SIGHUP mid-run: temporaries removed, the partial summary printed, and
/// the process ends by the signal.
@Suite(.serialized) struct SignalTests {
  /// A folder big enough to still be working 300 ms after the start.
  static func busyFolder(_ folder: TemporaryFolder) throws {
    for index in 0..<400 {
      try folder.write(
        "in/d\(index % 10)/f\(index).txt", TestData.text(150_000, seed: UInt64(index)))
    }
  }

  @Test(arguments: [(SIGINT, Int32(130)), (SIGTERM, Int32(143)), (SIGHUP, Int32(129))])
  func aSignalStopsTheRunCleanly(signal number: Int32, status: Int32) throws {
    let folder = TemporaryFolder("signal")
    try Self.busyFolder(folder)
    let result = try SqueezeBinary.run(["-j", "2", folder.url("in")]) { pid in
      usleep(300_000)
      kill(pid, number)
    }
    #expect(result.signal == number, "ended by the signal: \(result.status) \(result.stderrText)")
    #expect(result.status == status)
    #expect(result.stderrText.contains("interrupted"), "the partial summary: \(result.stderrText)")
    let everything = try FileManager.default.subpathsOfDirectory(atPath: folder.path)
    #expect(everything.filter { $0.contains(".squeeze-") }.isEmpty, "no temporaries left")
    for output in everything.filter({ $0.hasSuffix(".gz") }) {
      #expect(try SystemGzip.accepts(folder.url(output)), "\(output) is whole")
    }
  }
}
