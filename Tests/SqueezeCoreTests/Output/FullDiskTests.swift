import Glibc
import SqueezeSystem
import Testing

@testable import SqueezeCore
@testable import TestSupport

/// Which failures are a full file system, what the one line says, and how many files it
/// counts as not done (the end-to-end tests fill a real tmpfs: `FullDiskTests` in
/// SqueezeCLITests).
@Suite struct FullDiskUnitTests {
  @Test(arguments: [
    (failure: FileFailure.cannotWriteOutput("a.gz", SystemError(code: ENOSPC)), full: true),
    (failure: .cannotCreateOutput("a.gz", SystemError(code: EDQUOT)), full: true),
    (failure: .cannotPublish("a.gz", .sync, SystemError(code: ENOSPC)), full: true),
    (failure: .cannotSetMetadata("a.gz", .times, SystemError(code: ENOSPC)), full: true),
    (failure: .cannotWriteOutput("a.gz", SystemError(code: EIO)), full: false),
    (failure: .cannotCreateOutput("a.gz", SystemError(code: EROFS)), full: false),
    (failure: .cannotRead(SystemError(code: ENOSPC)), full: false),
    (failure: .interrupted, full: false),
  ])
  func onlyAnOutputsFileSystemWithNoRoomLeftStopsTheRun(failure: FileFailure, full: Bool) {
    #expect((FullDisk(file: "a", failure: failure) != nil) == full)
    #expect(
      FileMessages.mayPrint(.failed(failure), verbosity: .normal)
        == (failure != .interrupted && !full))
  }

  @Test func theLineNamesTheFileSystemTheCauseAndTheFilesNotDone() throws {
    let folder = TemporaryFolder("full-disk-line")
    try folder.write("in/a", text: "a")
    let quota = try #require(
      FullDisk(
        file: RawPath(folder.url("in/a")),
        failure: .cannotWriteOutput(RawPath(folder.url("in/a.gz")), SystemError(code: EDQUOT))))
    let line = quota.message(notDone: 1)
    #expect(
      line.contains(": disk quota exceeded: the run stopped; 1 file not done, its source kept"))
    #expect(
      line.hasSuffix(
        "(first: '\(folder.url("in/a"))': cannot write '\(folder.url("in/a.gz"))': Disk quota exceeded (errno 122))"
      ))
    // The mount point of the folder the output was to go in (the folder's own path when the
    // mount table cannot say).
    let fileSystem = FullDisk.fileSystem(of: RawPath(folder.url("in/a.gz")))
    #expect(line.hasPrefix(fileSystem + ": "))
    #expect(folder.url("in").hasPrefix(fileSystem))
    // An output whose folder was never made is looked up by the nearest folder that exists.
    #expect(FullDisk.fileSystem(of: RawPath(folder.url("in/not/made/a.gz"))) == fileSystem)
  }

  @Test func filesNotDoneAreThoseNeitherDoneCurrentLinkedNorFailedOnTheirOwn() throws {
    var results = RunResults()
    results.done = 5
    results.upToDate = 3
    results.linked = 2
    results.failedFiles = [10, 11, 12, 13]
    results.fullDisk = FullDisk(
      file: "x", failure: .cannotWriteOutput("x.gz", SystemError(code: ENOSPC)))
    results.fullDisk?.failedFiles = 2
    // 20 selected: 5 + 3 + 2 finished, 2 failed on their own; 2 failed and 6 never started
    // for the full disk.
    #expect(results.notDone(selected: 20) == 8)
  }
}
