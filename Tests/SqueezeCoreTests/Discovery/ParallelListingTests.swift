import Foundation
import Glibc
import SqueezeSystem
import Testing

@testable import SqueezeCore
@testable import TestSupport

/// Folders read on several threads (``ParallelListing``) give exactly the list, skips,
/// failures and warnings of the serial walk, and a folder reached twice (a bind mount) makes
/// the walk serial again.
@Suite
struct ParallelListingTests {
  /// A walk's result in a comparable shape: every list in its order.
  struct Summary: Equatable, CustomStringConvertible {
    var files: [String] = []
    var directories: [String] = []
    var skipped: [String] = []
    var skipCounts: [String] = []
    var failures: [String] = []
    var warnings: [String] = []
    var staleTemporaries = 0

    init(_ result: DiscoveryResult) {
      let list = result.files
      files = list.files.map {
        "\(list.displayPath(of: $0).displayString) \($0.size) \($0.outputListedBeside)"
      }
      directories = list.directories.indices.map {
        let folder = list.directories[$0]
        return "\(list.displayPath(ofDirectory: Int32($0)).displayString) parent \(folder.parent)"
          + " acl \(folder.hasNoDefaultACL)"
      }
      skipped = result.skipped.map { "\($0.path.displayString) \($0.reason)" }
      skipCounts = result.skipCounts.map { "\($0.key) \($0.value)" }.sorted()
      failures = result.failures.map(\.description)
      warnings = result.warnings.map(\.description)
      staleTemporaries = result.staleTemporaries.count
    }

    var description: String {
      [files, directories, skipped, skipCounts, failures, warnings].map {
        $0.joined(separator: "\n")
      }.joined(separator: "\n--\n")
    }
  }

  /// Walks `path` with `threads` listing threads.
  static func walk(
    _ path: String, threads: Int, wanted: DiscoveryOptions.Wanted = .uncompressed,
    excludes: [String] = []
  ) throws -> Summary {
    var options = DiscoveryOptions()
    options.wanted = wanted
    options.recordsSkippedPaths = true
    options.listingThreads = threads
    options.selection.excludes = try excludes.map { try #require(Glob($0)) }
    return Summary(
      Discovery.run(
        arguments: [RawPath(path)], options: options, bases: BaseDirectories(),
        namer: TemporaryNamer()))
  }

  /// A tree with folders of very different sizes and every kind of entry discovery decides
  /// on: files and their outputs, lone compressed names, a live and a stale temporary, a
  /// link, a named pipe, an excluded folder, a deep chain and a wide fan of folders.
  static func makeTree(in folder: TemporaryFolder) throws {
    for name in ["a.txt", "a.txt.gz", "b.txt", "lone.gz", "B", "é"] {
      try folder.write("in/\(name)", Array(name.utf8))
    }
    symlink("a.txt", folder.url("in/link"))
    mkfifo(folder.url("in/pipe"), 0o644)
    // A stale temporary: another host's, untouched for two days.
    let stale = try folder.write("in/deep/.squeeze-1-2-3-4-5-6.tmp", [0])
    var old = [
      timespec(tv_sec: time(nil) - 2 * 86_400, tv_nsec: 0),
      timespec(tv_sec: time(nil) - 2 * 86_400, tv_nsec: 0),
    ]
    _ = utimensat(AT_FDCWD, stale, &old, 0)
    var chain = "in/deep"
    for level in 0..<30 {
      chain += "/\(level)"
      try folder.write("\(chain)/f\(level)", [UInt8(level)])
    }
    for index in 0..<60 {
      let fan = "in/fan/\(String(format: "%02d", (index * 37) % 60))"
      try folder.makeFolder(fan)
      for file in 0..<(index % 7) { try folder.write("\(fan)/x\(file).c", [UInt8(file)]) }
      if index % 10 == 0 { try folder.write("\(fan)/sub/y.gz", [1]) }
    }
    try folder.write("in/skipme/hidden", [1])
    try folder.write("in/fan/05/skipme/hidden", [1])
  }

  @Test func readingOnTwoThreadsListsExactlyWhatOneThreadLists() throws {
    for wanted in [DiscoveryOptions.Wanted.uncompressed, .compressedByName] {
      let one = TemporaryFolder("listing-one")
      let two = TemporaryFolder("listing-two")
      try Self.makeTree(in: one)
      try Self.makeTree(in: two)
      var serial = try Self.walk(one.url("in"), threads: 1, wanted: wanted, excludes: ["skipme"])
      var parallel = try Self.walk(
        two.url("in"), threads: 2, wanted: wanted, excludes: ["skipme"])
      // The trees differ only in the folder they were made in.
      serial = Self.relabel(serial, from: one.path)
      parallel = Self.relabel(parallel, from: two.path)
      #expect(serial == parallel)
      #expect(serial.directories.count > 90)
      // A restore lists only compressed names: it never meets the temporary.
      #expect(serial.staleTemporaries == (wanted == .uncompressed ? 1 : 0))
      #expect(!serial.skipped.isEmpty && !serial.files.isEmpty)
    }
  }

  @Test func manyThreadsOnATreeOfOneFolderListItToo() throws {
    let folder = TemporaryFolder("listing-flat")
    for index in 0..<50 { try folder.write("in/\(index)", [UInt8(index)]) }
    let serial = try Self.walk(folder.url("in"), threads: 1)
    let parallel = try Self.walk(folder.url("in"), threads: 8)
    #expect(serial == parallel)
    #expect(parallel.files.count == 50)
  }

  /// The calling thread records each folder when its turn comes and waits when the folder
  /// is still being read: a helper that finishes between the caller's look and its wait
  /// must still wake it. Folders without subfolders leave nothing else to read, so a missed
  /// wake-up there would hang the walk; many walks of many such folders meet that moment
  /// (the listing hung on it in a run of the suite: it looked at the turn and decided to
  /// wait under two locks). Walks `walks` times a folder of 40 leaf folders on two threads.
  static func walkLeafFoldersRepeatedly(_ walks: Int) throws {
    let folder = TemporaryFolder("listing-leaves")
    for index in 0..<40 { try folder.write("in/\(index)/f", [UInt8(index)]) }
    let serial = try Self.walk(folder.url("in"), threads: 1)
    for walk in 0..<walks {
      let parallel = try Self.walk(folder.url("in"), threads: 2)
      #expect(parallel == serial, "walk \(walk)")
      if parallel != serial { break }
    }
  }

  // The time limits below are hang guards, not measurements: a missed wake-up never ends,
  // and each limit is far above what the walks take on a loaded machine.

  /// A few hundred walks: the unit tier's share of ``walkLeafFoldersRepeatedly(_:)``.
  @Test(.timeLimit(.minutes(10)))
  func manyWalksOfManyLeafFoldersAllEnd() throws {
    try Self.walkLeafFoldersRepeatedly(500)
  }

  /// Thousands of walks, which met the missed wake-up when it was there.
  @Test(.tags(.slow), .systemTier, .timeLimit(.minutes(30)))
  func thousandsOfWalksOfManyLeafFoldersAllEnd() throws {
    try Self.walkLeafFoldersRepeatedly(5000)
  }

  @Test(.tags(.system), .systemTier, .enabled(if: getuid() == 0, "bind mounts need root"))
  func aFolderReachedTwiceThroughABindMountIsListedOnceAsSerially() throws {
    let folder = TemporaryFolder("listing-bind")
    try folder.write("in/a/f", [1])
    try folder.write("in/a/b/g", [2])
    // Folders before the second way in, so the threads have recorded some when they meet it.
    for index in 0..<40 { try folder.write("in/a/c\(index)/h", [3]) }
    try folder.makeFolder("in/z/m")
    let serial = try Self.walkBothWays(
      folder.url("in"), mounting: folder.url("in/a"), on: folder.url("in/z/m"))
    let top = folder.url("in")
    #expect(serial.skipped == ["\(top)/z/m alreadyListed"])
    #expect(serial.files.count == 42)
    #expect(Array(serial.files.map(Self.path).prefix(2)) == ["\(top)/a/f", "\(top)/a/b/g"])
  }

  @Test(.tags(.system), .systemTier, .enabled(if: getuid() == 0, "bind mounts need root"))
  func aBindMountOfAnAncestorIsALoopAsSerially() throws {
    let folder = TemporaryFolder("listing-loop")
    try folder.write("in/a/f", [1])
    try folder.makeFolder("in/a/b/loop")
    let serial = try Self.walkBothWays(
      folder.url("in"), mounting: folder.url("in"), on: folder.url("in/a/b/loop"))
    #expect(serial.skipped == ["\(folder.url("in"))/a/b/loop symlinkLoop"])
    #expect(serial.files.map(Self.path) == ["\(folder.url("in"))/a/f"])
  }

  /// Bind-mounts `source` on `target`, walks `path` on one thread and on two, expects the
  /// same, and returns the serial walk's summary.
  static func walkBothWays(
    _ path: String, mounting source: String, on target: String
  ) throws -> Summary {
    try mount(source, on: target)
    defer { unmount(target) }
    let serial = try walk(path, threads: 1)
    #expect(try walk(path, threads: 2) == serial)
    return serial
  }

  /// The path of a summary's file line.
  static func path(_ line: String) -> String {
    String(line.split(separator: " ")[0])
  }

  /// The summary with `prefix` replaced by a fixed word.
  static func relabel(_ summary: Summary, from prefix: String) -> Summary {
    func relabel(_ lines: [String]) -> [String] {
      lines.map { $0.replacingOccurrences(of: prefix, with: "ROOT") }
    }
    var copy = summary
    copy.files = relabel(summary.files)
    copy.directories = relabel(summary.directories)
    copy.skipped = relabel(summary.skipped)
    copy.failures = relabel(summary.failures)
    copy.warnings = relabel(summary.warnings)
    return copy
  }

  static func mount(_ source: String, on target: String) throws {
    let run = try Shell.run("/bin/mount", ["--bind", source, target])
    try #require(run.status == 0, "mount --bind: \(run.stderrText)")
  }

  static func unmount(_ target: String) {
    _ = try? Shell.run("/bin/umount", [target])
  }
}
