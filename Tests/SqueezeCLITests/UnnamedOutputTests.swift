import Foundation
import Glibc
import TestSupport
import Testing

/// New outputs are written unnamed (`O_TMPFILE`) and linked under their final names once
/// durable: a run killed at any moment leaves no temporary behind.
@Suite struct UnnamedOutputTests {
  @Test func killNineMidRunLeavesNoTemporaryAtAll() throws {
    let folder = TemporaryFolder("unnamed-kill9")
    try SignalTests.slowFolder(folder)
    let result = try SqueezeBinary.run(["-9", "-j", "2", folder.url("in")]) { pid in
      SignalTests.waitForTemporary(under: folder.path, pid: pid)
      // Outputs are being written now: unnamed ones (a named one would have ended the wait
      // too, and would be left behind by the kill).
      kill(pid, SIGKILL)
    }
    #expect(result.signal == SIGKILL)
    #expect(TemporaryFolder.squeezeTemporaries(under: folder.path) == [])
    // Whatever was published is whole.
    _ = try FaultTests.checkOutputs(folder.url("in"), sources: folder.url("in"))
  }
}
