import Foundation
import TestSupport
import Testing

@testable import SqueezeCLI
@testable import SqueezeCore
@testable import SqueezeSystem
@testable import SqueezeTaskLog

/// The progress a `--rm` run on a full disk feeds its bar counts each file's bytes once:
/// a file that found no room and is tried again after the sources in flight went takes back
/// what its failed attempt counted. Run in-process, so the feed's last totals can be read
/// (the bar draws at most ten times a second and is cleared at the end).
@Suite(
  .tags(.system), .systemTier,
  .enabled(if: TestMachine.canMountTmpfs, "needs root and mount(8) to mount a small tmpfs"))
struct FullDiskProgressTests {
  /// Runs the compression of `arguments` as ``RunCommand`` does, with no reporter; returns
  /// the results and the feed's last totals.
  static func compress(_ arguments: [String]) async throws -> (
    results: RunResults, progress: ProgressFeed.Snapshot, bytesTotal: Int64
  ) {
    let feed = ProgressFeed()
    let run = try await InProcessRun.make(arguments, feed: feed)
    let compressor = run.compressor
    let plan = run.plan
    let results = await compressor.processAll()
    feed.finish()
    return (results, feed.drain(), plan.progressTotals.bytes)
  }

  /// 50 files of 100 KiB whose outputs (about 52 KiB each) fit only as their sources go,
  /// 60 KiB free (``FullDiskTests/withRmTheRunFreesRoomAsItGoesAsGzipDoes()``): files that
  /// found no room are tried again, and the bytes done end equal to the bytes to do. Before,
  /// each failed attempt's bytes stayed counted: the bar went past its total.
  @Test(arguments: [["-j", "2"], ["-j", "2", "--block-size", "32K"]])
  func aFileTriedAgainIsCountedOnceInTheBytesDone(options: [String]) async throws {
    let disk = try FullDiskTests.SmallDisk("full-rm-progress", size: "5200k")
    defer { disk.unmount() }
    try FileManager.default.createDirectory(
      atPath: disk.url("in"), withIntermediateDirectories: true)
    for index in 0..<50 {
      try Data(FullDiskTests.halfCompressible(index)).write(
        to: URL(fileURLWithPath: disk.url("in/f\(index)")))
    }
    try disk.fill(leaving: 60 * 1024)
    let (results, progress, bytesTotal) = try await Self.compress(
      ["--rm"] + options + [disk.url("in")])
    #expect(results.done == 50, "\(results.failures.map(\.1.description))")
    #expect(bytesTotal == 50 * 102_400)
    #expect(progress.filesDone == 50)
    #expect(progress.bytesDone == bytesTotal, "bytes done \(progress.bytesDone) of \(bytesTotal)")
  }
}
