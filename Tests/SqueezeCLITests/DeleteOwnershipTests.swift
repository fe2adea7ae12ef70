import Foundation
import Glibc
import TestSupport
import Testing

/// `--delete` removes only what squeeze itself put in the mirror: outputs (by their gzip
/// header), and the links and folders its manifest lists with the identity they still have.
// Serialized: the kill -9 rounds time their kills against a run that should have both
// cores; tests running beside it would only move where the kills land.
@Suite(.serialized) struct DeleteOwnershipTests {
  static func files(_ summary: [String: Any], _ key: String) -> Int? {
    ((summary["files"] as? [String: Any])?[key] as? NSNumber)?.intValue
  }

  /// What `lstat` says is at `path`: its kind, and a link's target.
  static func entry(_ path: String) -> String? {
    var status = stat()
    guard lstat(path, &status) == 0 else { return nil }
    switch status.st_mode & S_IFMT {
    case S_IFLNK:
      let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) ?? "?"
      return "link -> \(target)"
    case S_IFDIR: return "folder"
    case S_IFREG: return "file"
    default: return "other"
    }
  }

  /// The paths (below `root`) listed after `marker` on lines of `text`.
  static func paths(after marker: String, in text: String, root: String) -> Set<String> {
    Set(
      text.split(separator: "\n").compactMap { line -> String? in
        let line = String(line)
        if marker.hasSuffix(": ") {
          guard line.hasPrefix(marker) else { return nil }
          return String(line.dropFirst(marker.count).dropFirst(root.count + 1))
        }
        guard line.hasSuffix(marker), line.hasPrefix(root + "/") else { return nil }
        return String(line.dropLast(marker.count).dropFirst(root.count + 1))
      })
  }

  /// Entries a user puts in folder `inside` of the mirror `mirror` (names starting with
  /// `mine-`): a folder tree with files, a link and subfolders, an empty folder, a link
  /// and a dangling link. Returns what each is, by path below the mirror.
  static func plantForeign(
    in mirror: String, inside: String = "", tag: String = ""
  ) throws -> [String: String] {
    let base = (inside.isEmpty ? "" : "\(inside)/") + "mine\(tag)-"
    let root = "\(mirror)/\(base)"
    let fileManager = FileManager.default
    try fileManager.createDirectory(
      atPath: root + "tree/sub/deeper", withIntermediateDirectories: true)
    try fileManager.createDirectory(atPath: root + "empty", withIntermediateDirectories: true)
    try Data("the user's own notes".utf8).write(to: URL(fileURLWithPath: root + "tree/notes.txt"))
    try Data("more".utf8).write(to: URL(fileURLWithPath: root + "tree/sub/more.txt"))
    symlink("notes.txt", root + "tree/link")
    symlink("/etc/passwd", root + "link")
    symlink("nowhere/at/all", root + "dangling")
    var planted: [String: String] = [:]
    for path in [
      "tree", "tree/sub", "tree/sub/deeper", "tree/notes.txt", "tree/sub/more.txt",
      "tree/link", "empty", "link", "dangling",
    ] {
      planted[base + path] = entry(root + path)
    }
    return planted
  }

  @Test func keepsTheUsersLinksAndFoldersAndPrunesItsOwnAsTheDryRunSaid() throws {
    let folder = TemporaryFolder("delete-own")
    try folder.write("S/keep.txt", text: "keep")
    try folder.write("S/sub/kept.txt", text: "kept")
    try folder.write("S/gone/inner/deep.txt", text: "deep")
    try folder.makeFolder("S/gone/empty")
    try folder.makeFolder("S/empty-gone")
    symlink("keep.txt", folder.url("S/link"))
    symlink("keep.txt", folder.url("S/link-gone"))
    symlink("../keep.txt", folder.url("S/gone/link"))
    try folder.write("S/pair/a.txt", text: "one inode, two names")
    link(folder.url("S/pair/a.txt"), folder.url("S/pair/b.txt"))
    #expect(try SqueezeBinary.run(["-o", folder.url("M"), folder.url("S/")]).status == 0)
    #expect(FileManager.default.fileExists(atPath: folder.url("M/.squeeze-manifest")))
    var planted = try Self.plantForeign(in: folder.url("M"))
    planted.merge(try Self.plantForeign(in: folder.url("M"), inside: "sub")) { first, _ in first }
    _ = try Shell.run("/bin/rm", ["-r", folder.url("S/gone"), folder.url("S/empty-gone")])
    _ = try Shell.run("/bin/rm", [folder.url("S/link-gone"), "-r", folder.url("S/pair")])
    let dry = try SqueezeBinary.run([
      "--delete", "--dry-run", "-o", folder.url("M"), folder.url("S/"),
    ])
    #expect(dry.status == 0, "\(dry.stderrText)")
    let wouldGo = Self.paths(after: "would delete: ", in: dry.stdoutText, root: folder.url("M"))
    let result = try SqueezeBinary.run([
      "--delete", "-v", "--json", "-o", folder.url("M"), folder.url("S/"),
    ])
    #expect(result.status == 0, "\(result.stderrText)")
    let gone = Self.paths(after: ": deleted", in: result.stderrText, root: folder.url("M"))
    let expected: Set<String> = [
      "gone/inner/deep.txt.gz", "gone/inner", "gone/empty", "gone/link", "gone", "empty-gone",
      "link-gone", "pair/a.txt.gz", "pair/b.txt.gz", "pair",
    ]
    #expect(gone == expected, "\(result.stderrText)")
    #expect(wouldGo == gone, "the dry run lists exactly what goes")
    let summary = try #require(
      JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any])
    #expect(Self.files(summary, "deleted") == expected.count)
    for (path, what) in planted.sorted(by: { $0.key < $1.key }) {
      #expect(Self.entry(folder.url("M/\(path)")) == what, "\(path) is the user's: kept")
    }
    #expect(result.stderrText.contains("\(folder.url("M/mine-link")): kept (not recorded"))
    #expect(Self.entry(folder.url("M/link")) == "link -> keep.txt")
    #expect(
      TemporaryFolder.files(in: folder.url("M")).filter { !$0.contains("mine-") } == [
        "keep.txt.gz", "sub/kept.txt.gz",
      ])
    // Nothing more goes on the next run.
    let again = try SqueezeBinary.run(["--delete", "-v", "-o", folder.url("M"), folder.url("S/")])
    #expect(again.status == 0)
    #expect(!again.stderrText.contains(": deleted"), "\(again.stderrText)")
  }

  @Test func aRecordedLinkOrFolderTheUserReplacedIsKept() throws {
    let folder = TemporaryFolder("delete-replaced")
    try folder.write("S/keep.txt", text: "keep")
    symlink("keep.txt", folder.url("S/link"))
    try folder.makeFolder("S/folder")
    #expect(try SqueezeBinary.run(["-o", folder.url("M"), folder.url("S/")]).status == 0)
    var before = stat()
    lstat(folder.url("M/link"), &before)
    unlink(folder.url("S/link"))
    rmdir(folder.url("S/folder"))
    // The user's own, in the same places (on ext4 usually under the same inode numbers).
    unlink(folder.url("M/link"))
    symlink("keep.txt.gz", folder.url("M/link"))
    rmdir(folder.url("M/folder"))
    mkdir(folder.url("M/folder"), 0o755)
    let result = try SqueezeBinary.run(["--delete", "-v", "-o", folder.url("M"), folder.url("S/")])
    #expect(result.status == 0, "\(result.stderrText)")
    #expect(Self.entry(folder.url("M/link")) == "link -> keep.txt.gz", "\(result.stderrText)")
    #expect(Self.entry(folder.url("M/folder")) == "folder", "\(result.stderrText)")
    #expect(!result.stderrText.contains(": deleted"))
  }

  @Test func aMirrorWithoutAManifestPrunesOnlyOutputsUntilARunHasRecorded() throws {
    let folder = TemporaryFolder("delete-legacy")
    try folder.write("S/keep.txt", text: "keep")
    try folder.write("S/old/file.txt", text: "its source goes")
    symlink("keep.txt", folder.url("S/link"))
    #expect(try SqueezeBinary.run(["-o", folder.url("M"), folder.url("S/")]).status == 0)
    // What a mirror made before squeeze kept a manifest looks like.
    unlink(folder.url("M/.squeeze-manifest"))
    _ = try Shell.run("/bin/rm", ["-r", folder.url("S/old"), folder.url("S/link")])
    let dry = try SqueezeBinary.run([
      "--delete", "--dry-run", "-o", folder.url("M"), folder.url("S/"),
    ])
    let result = try SqueezeBinary.run(["--delete", "-v", "-o", folder.url("M"), folder.url("S/")])
    #expect(result.status == 0, "\(result.stderrText)")
    let gone = Self.paths(after: ": deleted", in: result.stderrText, root: folder.url("M"))
    #expect(gone == ["old/file.txt.gz"], "outputs are known by their header")
    #expect(Self.paths(after: "would delete: ", in: dry.stdoutText, root: folder.url("M")) == gone)
    #expect(Self.entry(folder.url("M/link")) == "link -> keep.txt", "not provably squeeze's")
    #expect(Self.entry(folder.url("M/old")) == "folder")
    // That run recorded what is squeeze's now; a link and a folder it mirrors go once their
    // sources do.
    symlink("keep.txt", folder.url("S/link2"))
    try folder.makeFolder("S/new")
    #expect(try SqueezeBinary.run(["-o", folder.url("M"), folder.url("S/")]).status == 0)
    unlink(folder.url("S/link2"))
    rmdir(folder.url("S/new"))
    let later = try SqueezeBinary.run(["--delete", "-v", "-o", folder.url("M"), folder.url("S/")])
    #expect(
      Self.paths(after: ": deleted", in: later.stderrText, root: folder.url("M")) == [
        "link2", "new",
      ], "\(later.stderrText)")
  }

  @Test func aDamagedManifestKeepsLinksAndFoldersAndIsWrittenAgain() throws {
    let folder = TemporaryFolder("delete-damaged")
    try folder.write("S/keep.txt", text: "keep")
    symlink("keep.txt", folder.url("S/link"))
    #expect(try SqueezeBinary.run(["-o", folder.url("M"), folder.url("S/")]).status == 0)
    var manifest = try folder.read("M/.squeeze-manifest")
    manifest[manifest.count / 2] ^= 0x01
    try folder.write("M/.squeeze-manifest", manifest)
    unlink(folder.url("S/link"))
    let result = try SqueezeBinary.run(["--delete", "-v", "-o", folder.url("M"), folder.url("S/")])
    #expect(result.status == 0)
    #expect(
      result.stderrText.contains(
        "squeeze: \(folder.url("M/.squeeze-manifest")): damaged manifest: its checksum does not match; --delete keeps every link and folder"
      ), "\(result.stderrText)")
    #expect(Self.entry(folder.url("M/link")) == "link -> keep.txt")
    let again = try SqueezeBinary.run(["--delete", "-o", folder.url("M"), folder.url("S/")])
    #expect(again.status == 0)
    #expect(again.stderrText.isEmpty, "written again whole: \(again.stderrText)")
  }

  @Test func aRestoreLeavesTheManifestOutAndARunWithNothingNewWritesNothing() throws {
    let folder = TemporaryFolder("manifest-restore")
    try folder.write("S/a/b.txt", text: "b")
    symlink("a", folder.url("S/link"))
    #expect(try SqueezeBinary.run(["-o", folder.url("M"), folder.url("S/")]).status == 0)
    let before = TreeSnapshot(folder.url("M"))
    #expect(try SqueezeBinary.run(["-o", folder.url("M"), folder.url("S/")]).status == 0)
    #expect(TreeSnapshot(folder.url("M")).identities == before.identities, "nothing rewritten")
    let restored = try SqueezeBinary.run(["--json", "-d", "-o", folder.url("R"), folder.url("M/")])
    #expect(restored.status == 0, "\(restored.stderrText)")
    #expect(!FileManager.default.fileExists(atPath: folder.url("R/.squeeze-manifest")))
    let summary = try #require(
      JSONSerialization.jsonObject(with: Data(restored.stdout)) as? [String: Any])
    let skipped = (summary["files"] as? [String: Any])?["skipped"] as? [String: Any]
    #expect((skipped?["total"] as? NSNumber)?.intValue == 0)
  }

  @Test func shardsWritingOneMirrorEachRecordWhatTheyMade() throws {
    let folder = TemporaryFolder("delete-shards")
    for index in 0..<40 {
      try folder.write("S/d\(index % 4)/f\(index).txt", text: "file \(index)")
      symlink("f\(index).txt", folder.url("S/d\(index % 4)/link\(index)"))
    }
    for shard in 1...3 {
      let result = try SqueezeBinary.run([
        "--shard", "\(shard)/3", "-o", folder.url("M"), folder.url("S/"),
      ])
      #expect(result.status == 0, "\(result.stderrText)")
    }
    _ = try Shell.run("/bin/rm", ["-r", folder.url("S/d3")])
    for index in 0..<10 where index % 4 != 3 { unlink(folder.url("S/d\(index % 4)/link\(index)")) }
    let result = try SqueezeBinary.run(["--delete", "-v", "-o", folder.url("M"), folder.url("S/")])
    #expect(result.status == 0, "\(result.stderrText)")
    var expected: Set<String> = ["d3"]
    for index in 0..<40 where index % 4 == 3 {
      expected.formUnion(["d3/f\(index).txt.gz", "d3/link\(index)"])
    }
    for index in 0..<10 where index % 4 != 3 { expected.insert("d\(index % 4)/link\(index)") }
    #expect(
      Self.paths(after: ": deleted", in: result.stderrText, root: folder.url("M")) == expected,
      "\(result.stderrText)")
  }

  /// Pseudo-random numbers from a printed seed (xorshift64*), so a failing round can be
  /// told apart and its delays drawn again.
  struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed }
    mutating func next() -> UInt64 {
      state ^= state >> 12
      state ^= state << 25
      state ^= state >> 27
      return state &* 0x2545_F491_4F6C_DD1D
    }
  }

  /// Each entry below `root` (not `.`), by path, and its kind.
  static func kinds(_ root: String) -> [String: String] {
    var kinds: [String: String] = [:]
    for (path, entry) in TreeSnapshot(root).entries where path != [UInt8(ascii: ".")] {
      kinds[String(decoding: path, as: UTF8.self)] = entry.kind
    }
    return kinds
  }

  @Test func killNineAtRandomMomentsNeverDeletesAForeignEntryAndTheMirrorEndsRight() throws {
    let seed =
      ProcessInfo.processInfo.environment["SQUEEZE_KILL_SEED"].flatMap { UInt64($0) }
      ?? UInt64.random(in: 1...UInt64.max)
    print(
      "DeleteOwnershipTests: kill -9 delays from seed \(seed) (set SQUEEZE_KILL_SEED to repeat)")
    var random = SeededGenerator(seed: seed)
    let folder = TemporaryFolder("delete-kill")
    let mirror = folder.url("M")
    for index in 0..<960 {
      try folder.write(
        "S/d\(index % 6)/e\(index % 4)/f\(index).txt",
        TestData.text(1000 + index * 3, seed: UInt64(index)))
    }
    for index in 0..<24 {
      symlink("e\(index % 4)/f\(index * 6).txt", folder.url("S/d\(index % 6)/link\(index)"))
      try folder.makeFolder("S/d\(index % 6)/empty\(index)")
    }
    #expect(try SqueezeBinary.run(["-o", mirror, folder.url("S/")]).status == 0)
    // New sources come once; what goes, goes a little each round (what a killed run may
    // have made for the new ones stays wanted, so the last runs find it in place).
    for index in 0..<120 {
      try folder.write(
        "S/n\(index % 3)/g\(index % 2)/new\(index).txt",
        TestData.text(3000 + index, seed: UInt64(1000 + index)))
    }
    for index in 0..<6 {
      symlink("g0/new\(index * 3).txt", folder.url("S/n\(index % 3)/newlink\(index)"))
      try folder.makeFolder("S/n\(index % 3)/newempty\(index)")
    }
    // A user's entries: in squeeze's folders, in one whose source goes, and in the places
    // of squeeze's links and folders whose sources went (replaced by the user's own).
    var planted = try Self.plantForeign(in: mirror, tag: "-top")
    planted.merge(try Self.plantForeign(in: mirror, inside: "d1", tag: "-d1")) { a, _ in a }
    planted.merge(try Self.plantForeign(in: mirror, inside: "d5/e0", tag: "-gone")) { a, _ in a }
    for index in [0, 6] {
      unlink(folder.url("S/d\(index % 6)/link\(index)"))
      rmdir(folder.url("S/d\(index % 6)/empty\(index)"))
      let place = "d\(index % 6)/link\(index)"
      unlink("\(mirror)/\(place)")
      symlink("the user's", "\(mirror)/\(place)")
      planted[place] = Self.entry("\(mirror)/\(place)")
      let empty = "d\(index % 6)/empty\(index)"
      rmdir("\(mirror)/\(empty)")
      mkdir("\(mirror)/\(empty)", 0o755)
      planted[empty] = Self.entry("\(mirror)/\(empty)")
    }
    func checkPlanted(_ when: String) {
      for (path, what) in planted.sorted(by: { $0.key < $1.key }) {
        #expect(Self.entry("\(mirror)/\(path)") == what, "\(when), seed \(seed): \(path)")
      }
    }
    for round in 0..<10 {
      for index in stride(from: round, to: 960, by: 10) where index % 3 == 0 {
        unlink(folder.url("S/d\(index % 6)/e\(index % 4)/f\(index).txt"))
      }
      for index in [round + 1, round + 12] where index % 6 != 0 {
        unlink(folder.url("S/d\(index % 6)/link\(index)"))
        rmdir(folder.url("S/d\(index % 6)/empty\(index)"))
      }
      if round == 3 || round == 6 {
        _ = try Shell.run("/bin/rm", ["-r", folder.url(round == 3 ? "S/d5" : "S/d4/e3")])
      }
      planted.merge(
        try Self.plantForeign(in: mirror, inside: round % 2 == 0 ? "" : "d2", tag: "-\(round)")
      ) { a, _ in a }
      let delay = UInt32.random(in: 5_000...800_000, using: &random)
      let killed = try SqueezeBinary.run(["--delete", "-j", "2", "-o", mirror, folder.url("S/")]) {
        pid in
        usleep(delay)
        kill(pid, SIGKILL)
      }
      print("DeleteOwnershipTests: round \(round), kill after \(delay) µs, status \(killed.status)")
      checkPlanted("round \(round), killed after \(delay) µs (status \(killed.status))")
    }
    for run in 0..<2 {
      let result = try SqueezeBinary.run(["--delete", "-o", mirror, folder.url("S/")])
      #expect(result.status == 0, "run \(run) after the kills, seed \(seed): \(result.stderrText)")
    }
    checkPlanted("after the kills")
    // The mirror ends as the sources say, with the user's entries (and the folders holding
    // them) beside.
    var expected: [String: String] = [:]
    for (path, kind) in Self.kinds(folder.url("S")) {
      expected[kind == "file" ? path + ".gz" : path] = kind
    }
    var allowed = Set(planted.keys)
    for path in planted.keys {
      var parts = path.split(separator: "/").dropLast()
      while !parts.isEmpty {
        allowed.insert(parts.joined(separator: "/"))
        parts = parts.dropLast()
      }
    }
    var actual = Self.kinds(mirror)
    actual[".squeeze-manifest"] = nil
    for path in allowed where expected[path] == nil { actual[path] = nil }
    #expect(actual == expected, "seed \(seed)")
    for (path, kind) in expected where kind == "file" && path.hasPrefix("n1/") {
      #expect(
        try SystemGzip.decompress("\(mirror)/\(path)")
          == (try folder.read("S/\(path.dropLast(3))")), "\(path)")
    }
    #expect(TemporaryFolder.squeezeTemporaries(under: folder.path).isEmpty)
  }
}
