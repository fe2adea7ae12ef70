import Foundation
import Glibc
import Synchronization
import TestSupport
import Testing

/// Renames a folder away, puts a symbolic link in its place, then puts the folder back, over
/// and over on a thread of its own, until stopped: what a user reorganising a tree (or an
/// attacker) does to a folder squeeze is writing in.
final class FolderSwapper: Sendable {
  /// The folder swapped.
  let folder: String
  /// Where it is while away.
  let away: String
  /// What the link put in its place points to, in turn: the folder's new place, and a decoy.
  let targets: [String]
  private let stopRequested = Atomic<Bool>(false)
  private let finished = Atomic<Bool>(false)
  private let swapCount = Atomic<Int>(0)

  init(_ folder: String, decoy: String) {
    self.folder = folder
    away = folder + "-away"
    targets = [away, decoy]
  }

  /// Swaps done so far.
  var swaps: Int { swapCount.load(ordering: .relaxed) }

  /// Starts swapping.
  func start() {
    Thread { [self] in
      var round = 0
      while !stopRequested.load(ordering: .relaxed) {
        if rename(folder, away) == 0 {
          symlink(targets[round % targets.count], folder)
          usleep(300)
          unlink(folder)
          rename(away, folder)
          swapCount.add(1, ordering: .relaxed)
        }
        usleep(300)
        round += 1
      }
      finished.store(true, ordering: .releasing)
    }.start()
  }

  /// Stops swapping and leaves the folder in its place.
  func stop() {
    stopRequested.store(true, ordering: .relaxed)
    while !finished.load(ordering: .acquiring) { usleep(1000) }
    var status = stat()
    if lstat(folder, &status) == 0 && status.st_mode & S_IFMT == S_IFLNK { unlink(folder) }
    if lstat(away, &status) == 0 { rename(away, folder) }
  }
}

/// Temporaries die with the run that made them (they are removed through the descriptor of
/// the folder they were made in), whatever happens to that folder meanwhile.
// Serialized: each test keeps both cores busy with squeeze and a swapping thread; side by
// side they would only slow each other down.
@Suite(.serialized) struct TemporaryLifetimeTests {
  /// Every squeeze temporary below `path`.
  static func temporaries(under path: String) -> [String] {
    TemporaryFolder.squeezeTemporaries(under: path)
  }

  /// How a run writes into the swapped folder.
  enum Mode: String, CaseIterable, CustomTestStringConvertible {
    case besideSources = "compress beside the sources"
    case mirror = "compress into a mirror (-o)"
    case restoreBeside = "restore beside (-d)"
    case restoreMirror = "restore a mirror (-d -o)"
    var testDescription: String { rawValue }
  }

  @Test(arguments: Mode.allCases)
  func aFolderSwappedForALinkMidRunKeepsNoTemporary(mode: Mode) throws {
    let folder = TemporaryFolder("swap")
    try folder.makeFolder("decoy")
    var contents: [String: [UInt8]] = [:]
    // Restoring is much faster than compressing at -9: bigger files keep it busy as long.
    let restores = mode == .restoreBeside || mode == .restoreMirror
    for index in 0..<300 {
      let name = "f\(index).txt"
      contents[name] = TestData.text(
        (restores ? 200_000 : 40_000) + index * 13, seed: UInt64(index))
      try folder.write("in/d/\(name)", contents[name]!)
    }
    let swapped: String
    var arguments = ["-9", "-j", "2"]
    switch mode {
    case .besideSources:
      swapped = folder.url("in/d")
      arguments.append(folder.url("in"))
    case .mirror:
      try folder.makeFolder("M/d")
      swapped = folder.url("M/d")
      arguments += ["-o", folder.url("M"), folder.url("in/")]
    case .restoreBeside:
      #expect(try SqueezeBinary.run(["-1", "--rm", folder.url("in")]).status == 0)
      swapped = folder.url("in/d")
      arguments += ["-d", folder.url("in")]
    case .restoreMirror:
      #expect(
        try SqueezeBinary.run(["-1", "-o", folder.url("M"), folder.url("in/")]).status == 0)
      try folder.makeFolder("R/d")
      swapped = folder.url("R/d")
      arguments += ["-d", "-o", folder.url("R"), folder.url("M/")]
    }
    let swapper = FolderSwapper(swapped, decoy: folder.url("decoy"))
    swapper.start()
    let before = swapper.swaps
    let result = try SqueezeBinary.run(arguments)
    let during = swapper.swaps - before
    swapper.stop()
    #expect(during > 0, "the folder was swapped while squeeze worked")
    // Files met while the link was in place fail (status 1); none may leave a temporary.
    #expect([0, 1].contains(result.status), "\(result.stderrText.suffix(800))")
    #expect(Self.temporaries(under: folder.path).isEmpty, "\(Self.temporaries(under: folder.path))")
    // What was published is whole, wherever the folder was at the time.
    let written = ((try? FileManager.default.subpathsOfDirectory(atPath: folder.path)) ?? [])
    for path in written where path.hasSuffix(".txt.gz") {
      #expect(try SystemGzip.accepts(folder.url(path)), "\(path) is whole")
    }
    if restores {
      for path in written where path.hasSuffix(".txt") {
        let name = (path as NSString).lastPathComponent
        #expect(try folder.read(path) == contents[name], "\(path) is restored whole")
      }
    }
  }

  @Test func anOutputWaitingForAFolderInTheWayIsRemovedWhenTheRunStops() throws {
    let folder = TemporaryFolder("held-stop")
    for index in 0..<4 {
      try folder.write("S/big\(index).txt", TestData.text(12_000_000, seed: UInt64(index)))
    }
    try folder.write("S/sub/a.txt", text: "its output waits for the folder in the way")
    try folder.write("S/sub/b.txt", text: "published after a.txt's output")
    // An empty folder where a.txt's output goes: the output waits, durable, under its
    // temporary name, to take the folder's place once every file is done.
    try folder.makeFolder("M/sub/a.txt.gz")
    let result = try SqueezeBinary.run(["-9", "-j", "2", "-o", folder.url("M"), folder.url("S/")]) {
      pid in
      // b.txt's output is published in a.txt's batch or after it: a.txt's is waiting then.
      for _ in 0..<60_000 {
        if FileManager.default.fileExists(atPath: folder.url("M/sub/b.txt.gz")) { break }
        if kill(pid, 0) != 0 { return }
        usleep(1000)
      }
      kill(pid, SIGINT)
    }
    #expect(result.signal == SIGINT, "\(result.status) \(result.stderrText)")
    #expect(Self.temporaries(under: folder.path).isEmpty, "\(Self.temporaries(under: folder.path))")
  }
}
