import Foundation
import Glibc
import Synchronization
import TestSupport
import Testing

/// squeeze on a FUSE file system (bindfs), which refuses `renameat2(RENAME_NOREPLACE)` and
/// `O_TMPFILE` and whose `syncfs` commits nothing: every mode writes there, never replaces a
/// file that appeared meanwhile, and syncs each output before naming it.
@Suite(
  .tags(.system), .systemTier,
  .enabled(if: Bindfs.isAvailable, Bindfs.requirement))
struct FuseTests {
  /// The tree every test starts from, under `root`: two text files in two folders, a
  /// random (stored) one, a symbolic link, a hard link and an empty folder.
  static func makeTree(_ root: String, hardLink: Bool = true) throws -> [String: [UInt8]] {
    let files: [String: [UInt8]] = [
      "a.txt": TestData.text(200_000, seed: 1),
      "sub/b.txt": TestData.text(30_000, seed: 2),
      "sub/noise.bin": TestData.random(40_000),
    ]
    for (name, bytes) in files {
      let path = root + "/" + name
      try FileManager.default.createDirectory(
        atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
      try Data(bytes).write(to: URL(fileURLWithPath: path))
    }
    try FileManager.default.createDirectory(
      atPath: root + "/empty", withIntermediateDirectories: true)
    #expect(symlink("a.txt", root + "/link") == 0)
    var all = files
    if hardLink {
      #expect(link(root + "/a.txt", root + "/hard.txt") == 0)
      all["hard.txt"] = files["a.txt"]
    }
    return all
  }

  /// Runs squeeze and expects it to succeed silently.
  static func squeeze(_ arguments: [String]) throws {
    let result = try SqueezeBinary.run(arguments)
    #expect(result.status == 0, "squeeze \(arguments): \(result.stderrText)")
    #expect(result.stderrText == "", "squeeze \(arguments)")
  }

  /// Expects every file of `files` under `root` to have a `.gz` output under `outputs` that
  /// the system's gunzip restores to its bytes.
  static func expectOutputs(of files: [String: [UInt8]], in outputs: String) throws {
    for (name, bytes) in files {
      #expect(try SystemGzip.decompress(outputs + "/" + name + ".gz") == bytes, "\(name)")
    }
  }

  /// Names left behind under `root` that are squeeze's temporaries.
  static func temporaries(under root: String) -> [String] {
    (FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? []).filter {
      ($0 as NSString).lastPathComponent.hasPrefix(".squeeze-")
        && ($0 as NSString).lastPathComponent.hasSuffix(".tmp")
    }
  }

  static func inode(_ path: String) -> ino_t? {
    var status = stat()
    return lstat(path, &status) == 0 ? status.st_ino : nil
  }

  @Test func everyModeWritesAndRestoresOnBindfs() throws {
    let folder = TemporaryFolder("fuse-modes")
    try Bindfs.withMount(in: folder) { m in
      let files = try Self.makeTree(m + "/src")

      // Beside each file, then a re-run that leaves every output alone.
      let plain = try Self.makeTree(m + "/inplace", hardLink: false)
      try Self.squeeze(["-q", m + "/inplace"])
      try Self.expectOutputs(of: plain, in: m + "/inplace")
      let before = Self.inode(m + "/inplace/a.txt.gz")
      try Self.squeeze([m + "/inplace"])
      #expect(Self.inode(m + "/inplace/a.txt.gz") == before)
      // Restoring beside the .gz files, after the originals went away.
      for name in plain.keys { unlink(m + "/inplace/" + name) }
      try Self.squeeze(["-q", "-d", m + "/inplace"])
      for (name, bytes) in plain {
        #expect(FileManager.default.contents(atPath: m + "/inplace/" + name) == Data(bytes))
      }

      // -k on one file, --rm on a tree.
      try Self.squeeze(["-q", "-k", "-f", m + "/inplace/a.txt"])
      #expect(try SystemGzip.decompress(m + "/inplace/a.txt.gz") == files["a.txt"])
      let removable = try Self.makeTree(m + "/rm", hardLink: false)
      try Self.squeeze(["-q", "--rm", m + "/rm"])
      try Self.expectOutputs(of: removable, in: m + "/rm")
      for name in removable.keys {
        #expect(!FileManager.default.fileExists(atPath: m + "/rm/" + name), "\(name)")
      }

      // A mirror, pruned, run again, checked, tested, and restored entry by entry.
      try Self.squeeze(["-q", "-o", m + "/M", "--delete", m + "/src/"])
      try Self.expectOutputs(of: files, in: m + "/M")
      try Self.squeeze(["-q", "-o", m + "/M", "--delete", m + "/src/"])
      try Self.squeeze(["-q", "--check", "-o", m + "/M", m + "/src/"])
      try Self.squeeze(["-q", "-t", m + "/M"])
      try Self.squeeze(["-q", "-d", "-o", m + "/R", m + "/M/"])
      for (name, bytes) in files {
        #expect(FileManager.default.contents(atPath: m + "/R/" + name) == Data(bytes), "\(name)")
      }
      #expect(
        try FileManager.default.destinationOfSymbolicLink(atPath: m + "/R/link") == "a.txt")
      #expect(Self.inode(m + "/R/a.txt") == Self.inode(m + "/R/hard.txt"))
      #expect(FileManager.default.fileExists(atPath: m + "/R/empty"))

      // Tonight's snapshot links last night's unchanged outputs.
      try Self.squeeze(["-q", "-o", m + "/snap", "--link-dest", "../M", m + "/src/"])
      #expect(Self.inode(m + "/snap/sub/b.txt.gz") == Self.inode(m + "/M/sub/b.txt.gz"))
      try Self.expectOutputs(of: files, in: m + "/snap")

      // To standard output.
      let streamed = try SqueezeBinary.run(["-c", m + "/src/a.txt"])
      #expect(streamed.status == 0, "\(streamed.stderrText)")
      let stream = m + "/stream.gz"
      try Data(streamed.stdout).write(to: URL(fileURLWithPath: stream))
      #expect(try SystemGzip.decompress(stream) == files["a.txt"])

      #expect(Self.temporaries(under: m) == [])
    }
  }

  /// Set once the racing file is in place.
  final class Placed: Sendable {
    let value = Atomic<Bool>(false)
  }

  /// The pid of the first child of `pid` (the program strace runs), or nil.
  static func firstChild(of pid: Int32) -> Int32? {
    let text = try? String(
      contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)
    return text?.split(separator: " ").first.flatMap { Int32($0) }
  }

  /// True when a thread of `pid` is in (or stopped at the entry of) `linkat` (265 on
  /// x86-64, 37 on arm64), as `/proc/PID/task/TID/syscall` shows.
  static func isInLinkat(_ pid: Int32) -> Bool {
    let number = Self.linkatNumber
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
    return tasks.contains { task in
      let text = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/syscall", encoding: .utf8)
      return text?.split(separator: " ").first == Substring(number)
    }
  }

  #if arch(x86_64)
    static let linkatNumber = "265"
  #else
    static let linkatNumber = "37"
  #endif

  @Test(
    .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/strace"), "needs strace"))
  func aFileThatAppearsUnderTheOutputNameJustBeforeTheLinkKeepsItsBytes() throws {
    let folder = TemporaryFolder("fuse-race")
    try Bindfs.withMount(in: folder) { m in
      let source = Data(TestData.text(300_000))
      try source.write(to: URL(fileURLWithPath: m + "/a.txt"))
      let racer = Data("written by someone else".utf8)
      let placed = Placed()
      // strace holds squeeze for 3 s at the entry of its linkat, after every check of the
      // output name: a file put there meanwhile is what a racing writer looks like.
      let result = try Shell.run(
        "/usr/bin/strace",
        [
          "-f", "-qq", "-o", "/dev/null", "-e", "trace=linkat", "-e",
          "inject=linkat:delay_enter=3000000", SqueezeBinary.path, "-q", m,
        ]
      ) { tracer in
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
          if let squeeze = Self.firstChild(of: tracer), Self.isInLinkat(squeeze) {
            if FileManager.default.createFile(atPath: m + "/a.txt.gz", contents: racer) {
              placed.value.store(true, ordering: .releasing)
            }
            return
          }
          usleep(1000)
        }
      }
      let wasPlaced = placed.value.load(ordering: .acquiring)
      try #require(wasPlaced, "squeeze was never seen in linkat")
      #expect(result.status == 1)
      #expect(
        result.stderrText.contains("'\(m)/a.txt.gz' appeared while"), "\(result.stderrText)")
      #expect(FileManager.default.contents(atPath: m + "/a.txt.gz") == racer)
      #expect(FileManager.default.contents(atPath: m + "/a.txt") == source)
      #expect(Self.temporaries(under: m) == [])
    }
  }

  @Test(.enabled(if: FaultShim.canBuild, "needs gcc to build scripts/faults/faultshim.c"))
  func aFileSystemThatAlsoRefusesHardLinksFailsTheFileNamingTheCause() throws {
    let folder = TemporaryFolder("fuse-nolinks")
    try Bindfs.withMount(in: folder) { m in
      let bytes = TestData.text(50_000)
      try Data(bytes).write(to: URL(fileURLWithPath: m + "/a.txt"))
      // The run's one link, after renameat2 refused RENAME_NOREPLACE, is refused as a file
      // system without hard links refuses it.
      let run = try FaultShim.run(
        ["-q", m], in: folder, failing: FaultShim.Fault(kind: "link", at: 1, errno: "EPERM"))
      #expect(run.fired)
      #expect(run.result.status == 1)
      #expect(
        run.result.stderrText
          == "squeeze: \(m)/a.txt: the file system refuses both RENAME_NOREPLACE and hard links, so squeeze cannot safely name '\(m)/a.txt.gz': Operation not supported (errno 95)\n"
      )
      #expect(!FileManager.default.fileExists(atPath: m + "/a.txt.gz"))
      #expect(FileManager.default.contents(atPath: m + "/a.txt") == Data(bytes))
      #expect(Self.temporaries(under: m) == [])
    }
  }

  @Test(
    .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/strace"), "needs strace"),
    arguments: ["beside", "rm", "restore", "blocking"])
  func eachOutputIsSyncedByItselfBeforeItsLinkAndEachRemovalAfterItsFolder(mode: String) throws {
    let folder = TemporaryFolder("fuse-durability-\(mode)")
    try Bindfs.withMount(in: folder) { mount in
      // strace -y prints resolved paths.
      let m = URL(fileURLWithPath: mount).resolvingSymlinksInPath().path
      for index in 0..<5 {
        try Data(TestData.text(5_000 + index * 700, seed: UInt64(index)))
          .write(to: URL(fileURLWithPath: m + "/f\(index).txt"))
      }
      if mode == "restore" {
        // Restoring beside the .gz files, once the originals are gone.
        try Self.squeeze(["-q", "--rm", m])
      }
      let arguments =
        switch mode {
        case "rm": ["-q", "--rm", m]
        case "restore": ["-q", "-d", m]
        // Each output published on the thread that wrote it (BlockingReplay).
        case "blocking": ["-q", "--isolation", "blocking", m]
        default: ["-q", m]
        }
      let trace = folder.url("trace.txt")
      let result = try Shell.run(
        "/usr/bin/strace",
        ["-f", "-qq", "-y", "-o", trace, "-e", "trace=\(DurabilityOrderTests.calls)"]
          + [SqueezeBinary.path] + arguments)
      #expect(result.status == 0, "\(result.stderrText)")
      let text = try String(contentsOfFile: trace, encoding: .utf8)
      // syncfs succeeds on FUSE without committing anything: only fsyncs count.
      let calls = DurabilityOrderTests.parse(text)
      let reading = DurabilityOrderTests.Reading(calls, under: m, syncfsCommits: false)
      #expect(reading.publications.count == 5, "\(reading.publications.map(\.final))")
      #expect(reading.unsyncedPublications() == [])
      // Each new name is on disk when the run ends: its folder fsynced after it was made.
      #expect(Self.namesNotCommitted(calls, under: m) == [])
      if mode == "rm" {
        #expect(reading.removals.count == 5, "\(reading.removals.map(\.path))")
        #expect(reading.sourcesRemovedEarly { $0 + ".gz" } == [])
      }
    }
  }

  /// The calls a durability trace needs, with the ones that make symbolic links and folders.
  static let namingCalls = DurabilityOrderTests.calls + ",symlink,symlinkat,mkdir,mkdirat,link"

  /// Each name `calls` shows made below `root` (a file published, a symbolic link, a
  /// further hard-link name, a folder) whose folder no `fsync` started after the name was
  /// made and returned before line `before`: on FUSE only an fsync of the folder puts a
  /// name on disk.
  static func namesNotCommitted(
    _ calls: [DurabilityOrderTests.Call], under root: String, before: Int = Int.max
  ) -> [String] {
    var made: [(folder: String, name: String, line: Int)] = []
    for call in calls where call.succeeded {
      let place: (String?, String?)
      switch call.name {
      case "renameat", "renameat2", "linkat": place = (call.descriptorPath(2), call.string(3))
      case "symlinkat": place = (call.descriptorPath(1), call.string(2))
      case "mkdirat": place = (call.descriptorPath(0), call.string(1))
      default: continue
      }
      guard let folder = place.0, let name = place.1, !DurabilityOrderTests.isTemporary(name),
        folder == root || folder.hasPrefix(root + "/")
      else { continue }
      made.append((folder, name, call.exit))
    }
    let folderSyncs = calls.filter { $0.name == "fsync" && $0.succeeded }
    return made.compactMap { entry in
      let synced = folderSyncs.contains {
        $0.entry > entry.line && $0.exit < before && $0.descriptorPath(0) == entry.folder
      }
      if synced { return nil }
      return
        "\(entry.folder)/\(entry.name): made on line \(entry.line + 1), its folder never fsynced after"
    }
  }

  /// Runs squeeze under `strace -f -y` and returns the calls it made.
  static func traced(_ arguments: [String], in folder: TemporaryFolder) throws
    -> [DurabilityOrderTests.Call]
  {
    let trace = folder.url("trace.txt")
    let result = try Shell.run(
      "/usr/bin/strace",
      ["-f", "-qq", "-y", "-o", trace, "-e", "trace=\(Self.namingCalls)", SqueezeBinary.path]
        + arguments)
    #expect(result.status == 0, "squeeze \(arguments): \(result.stderrText)")
    #expect(result.stderrText == "", "squeeze \(arguments)")
    let text = try String(contentsOfFile: trace, encoding: .utf8)
    unlink(trace)
    return DurabilityOrderTests.parse(text)
  }

  @Test(
    .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/strace"), "needs strace"),
    arguments: ["mirror", "restore", "snapshot"])
  func everyNameAMirrorRunMakesIsFsyncedAfterWhatItNames(mode: String) throws {
    let folder = TemporaryFolder("fuse-names-\(mode)")
    try Bindfs.withMount(in: folder) { mount in
      // strace -y prints resolved paths.
      let m = URL(fileURLWithPath: mount).resolvingSymlinksInPath().path
      let files = try Self.makeTree(m + "/src")
      try FileManager.default.createDirectory(
        atPath: m + "/src/sub/deeper", withIntermediateDirectories: true)
      #expect(symlink("../a.txt", m + "/src/sub/up") == 0)
      let arguments: [String]
      let output: String
      switch mode {
      case "mirror":
        (arguments, output) = (["-q", "-o", m + "/M", m + "/src/"], m + "/M")
      case "restore":
        try Self.squeeze(["-q", "-o", m + "/M", m + "/src/"])
        (arguments, output) = (["-q", "-d", "-o", m + "/R", m + "/M/"], m + "/R")
      default:
        try Self.squeeze(["-q", "-o", m + "/M", m + "/src/"])
        try Data(TestData.text(9_000, seed: 9)).write(to: URL(fileURLWithPath: m + "/src/a.txt"))
        (arguments, output) = (
          ["-q", "-o", m + "/snap", "--link-dest", "../M", m + "/src/"], m + "/snap"
        )
      }
      let calls = try Self.traced(arguments, in: folder)
      let reading = DurabilityOrderTests.Reading(calls, under: m, syncfsCommits: false)
      // Each output, the manifest and the snapshot's marker synced by itself before its name.
      let published = reading.publications.map(\.final)
      #expect(published.count >= (mode == "snapshot" ? 1 : 3), "\(published)")
      if mode != "restore" {
        #expect(published.contains(output + "/.squeeze-manifest"), "\(published)")
      }
      #expect(reading.unsyncedPublications() == [])
      // Each name made (outputs, links, hard-link names, folders) committed by an fsync of
      // its folder before the run ended.
      #expect(Self.namesNotCommitted(calls, under: output) == [])
      // A further hard-link name links an output published (so synced) earlier in the run.
      for call in calls where call.name == "linkat" && call.succeeded {
        guard let fromFolder = call.descriptorPath(0), fromFolder.hasPrefix(output),
          let from = call.string(1), from != "", !DurabilityOrderTests.isTemporary(from)
        else { continue }
        #expect(
          reading.publications.contains {
            $0.final == fromFolder + "/" + from && $0.rename.exit < call.entry
          }, "\(fromFolder)/\(from) linked on line \(call.entry + 1) before it was published")
      }
      if mode == "snapshot" {
        // The marker goes only once every name of the night is on disk.
        let removal = calls.first {
          $0.name == "unlinkat" && $0.succeeded && $0.descriptorPath(0) == output
            && $0.string(1) == ".squeeze-snapshot"
        }
        let markerGone = try #require(removal, "the snapshot's marker was never removed")
        #expect(Self.namesNotCommitted(calls, under: output, before: markerGone.entry) == [])
        #expect(
          calls.contains { $0.name == "linkat" && $0.descriptorPath(2) == output + "/sub" },
          "no link to last night's output")
      }
      if mode == "restore" {
        for (name, bytes) in files {
          #expect(FileManager.default.contents(atPath: output + "/" + name) == Data(bytes))
        }
      }
    }
  }
}
