import SqueezeGzip
import SqueezeSystem
import Testing

@testable import SqueezeCore

@Suite struct GlobTests {
  @Test(arguments: [
    // Without '/': the name at any depth.
    ("*.log", "app.log", true), ("*.log", "deep/dir/app.log", true), ("*.log", "app.log.1", false),
    ("*.log", "dir.log/readme", false),
    ("a?c", "abc", true), ("a?c", "ac", false), ("a?c", "x/abc", true),
    ("[ab]*", "banana", true), ("[!ab]*", "banana", false), ("[^ab]*", "cherry", true),
    ("[a-c]x", "bx", true), ("[a-c]x", "dx", false),
    ("café", "dir/café", true), ("caf?", "café", true), ("caf[é]", "café", true),
    ("\\*", "*", true), ("\\*", "x", false),
    // With '/': the whole path below the argument.
    ("logs/*.log", "logs/a.log", true), ("logs/*.log", "x/logs/a.log", false),
    ("logs/*.log", "logs/sub/a.log", false), ("/top.txt", "top.txt", true),
    ("/top.txt", "sub/top.txt", false),
    ("logs/**", "logs/a/b/c.txt", true), ("logs/**", "other/a", false),
    ("**/cache/*", "cache/x", true), ("**/cache/*", "a/b/cache/x", true),
    ("**/cache/*", "a/b/cache/x/y", false),
    ("a/**/b", "a/b", true), ("a/**/b", "a/x/b", true), ("a/**/b", "a/x/y/b", true),
    ("a/**/b", "a/xb", false),
    ("*/*.c", "src/main.c", true), ("*/*.c", "src/sub/main.c", false),
    // A '*' right after '**/' is a star of its own, not part of the globstar.
    ("**/*.txt", "top.txt", true), ("**/*.txt", "a/b/c.txt", true),
    ("**/*.txt", "a/b/c.log", false), ("a/**/*.txt", "a/3.txt", true),
    ("a/**/*.txt", "a/b/4.txt", true), ("a/**/*.txt", "b/4.txt", false),
    ("a/**/?.txt", "a/b/4.txt", true), ("***/x", "a/x", true),
  ])
  func matchesLikeRsyncAndGitignore(pattern: String, path: String, expected: Bool) throws {
    let glob = try #require(Glob(pattern))
    #expect(glob.matches(RawPath(path), isFolder: false) == expected, "\(pattern) vs \(path)")
  }

  @Test func aTrailingSlashMatchesFoldersOnly() throws {
    let glob = try #require(Glob("build/"))
    #expect(glob.matches("build", isFolder: true))
    #expect(glob.matches("src/build", isFolder: true))
    #expect(!glob.matches("build", isFolder: false))
  }

  @Test func bytesThatAreNotUTF8StillMatch() throws {
    let glob = try #require(Glob("*.txt"))
    #expect(glob.matches(RawPath(bytes: [0xFF, 0xFE, 0x2E, 0x74, 0x78, 0x74]), isFolder: false))
    let one = try #require(Glob("?.txt"))
    #expect(one.matches(RawPath(bytes: [0xFF, 0x2E, 0x74, 0x78, 0x74]), isFolder: false))
  }

  @Test(arguments: ["", "[abc", "a\\", "[z-a]"])
  func malformedPatternsAreRefused(pattern: String) {
    #expect(Glob(pattern) == nil)
  }

  @Test func manyStarsStayFast() throws {
    let glob = try #require(Glob("*a*a*a*a*a*a*a*a*a*b"))
    let path = RawPath(String(repeating: "a", count: 3000))
    #expect(!glob.matches(path, isFolder: false))
  }

  @Test func excludeWinsOverIncludeAndFoldersAreNotEntered() throws {
    var selection = Selection()
    selection.includes = [try #require(Glob("*.log"))]
    selection.excludes = [try #require(Glob("secret.log")), try #require(Glob("tmp/"))]
    let now = Timestamp.now
    #expect(selection.skipReason(forFile: "a/app.log", modified: now) == nil)
    #expect(selection.skipReason(forFile: "a/secret.log", modified: now) == .excluded)
    #expect(selection.skipReason(forFile: "a/app.txt", modified: now) == .excluded)
    #expect(selection.skipReason(forFolder: "x/tmp") == .excluded)
    #expect(selection.skipReason(forFolder: "x/src") == nil)
  }

  @Test func olderThanKeepsOnlyFilesModifiedBeforeTheCutoff() {
    var selection = Selection()
    selection.modifiedBefore = Timestamp(seconds: 1000, nanoseconds: 0)
    #expect(
      selection.skipReason(
        forFile: "a", modified: Timestamp(seconds: 999, nanoseconds: 999_999_999)) == nil)
    #expect(
      selection.skipReason(forFile: "a", modified: Timestamp(seconds: 1000, nanoseconds: 0))
        == .tooRecent)
  }

  @Test func shardsPartitionPathsExactlyAndStably() {
    let paths = (0..<1000).map { RawPath("dir\($0 % 17)/file-\($0).txt") }
    var owners = [Int](repeating: 0, count: paths.count)
    for index in 1...3 {
      let shard = Shard(index: index, count: 3)
      for (position, path) in paths.enumerated() where shard.contains(path) {
        owners[position] += 1
      }
    }
    #expect(owners.allSatisfy { $0 == 1 })
    // FNV-1a 64 is fixed: these values are the same on every machine and in every version.
    #expect(FNV1a.hash64(Array("".utf8)) == 0xcbf2_9ce4_8422_2325)
    #expect(FNV1a.hash64(Array("a".utf8)) == 0xaf63_dc4c_8601_ec8c)
    #expect(FNV1a.hash64(Array("foobar".utf8)) == 0x8594_4171_f739_67e8)
  }

  @Test(arguments: [
    ("a.txt.gz", "a.txt"), ("a.tgz", "a.tar"), ("a.taz", "a.tar"), ("a-gz", "a"), ("a.z", "a"),
    ("a_z", "a"), ("a.txt", nil),
    // gzip compares suffixes without letter case.
    ("x.GZ", "x"), ("y.TGZ", "y.tar"), ("v.Z", "v"), ("w.Gz", "w"),
    ("\u{C9}t\u{E9}.GZ", "\u{C9}t\u{E9}"),
    // A suffix counts only in a longer name, as in gzip's get_suffix.
    (".gz", nil), (".tgz", nil), ("-gz", nil), ("_z", nil), (".Z", nil),
  ])
  func decompressedNamesFollowGzip(name: String, expected: String?) {
    #expect(
      GzipNaming.decompressedName(of: RawPath(name), suffix: ".gz") == expected.map { RawPath($0) })
  }

  @Test func compressedSuffixesIgnoreLetterCaseAsGzipDoes() {
    for name in ["a.GZ", "a.Tgz", "a.Z", "a-GZ", "a_Z", "a.gz"] {
      #expect(GzipNaming.hasCompressedSuffix(RawPath(name), suffix: ".gz"), "\(name)")
    }
    #expect(GzipNaming.hasCompressedSuffix(RawPath("a.BAK"), suffix: ".bak"), "the -S suffix too")
    #expect(!GzipNaming.hasCompressedSuffix(RawPath("a.gzip"), suffix: ".gz"))
    #expect(GzipNaming.decompressedName(of: RawPath("c.txt.GZ"), suffix: ".gz") == RawPath("c.txt"))
  }
}
