import Foundation
import TestSupport
import Testing

/// `squeeze -l`'s table against gzip 1.12's on the same files, byte for byte: `-lv`'s
/// method, CRC-32, date and time columns, and `-l` without them.
@Suite struct ListTableTests {
  /// The same list from squeeze and from the system's gzip, in one time zone that is not UTC
  /// (so a time written in UTC instead of local time shows).
  static func lists(_ arguments: [String], in folder: TemporaryFolder) throws -> (
    squeeze: String, gzip: String
  ) {
    let zone = ["TZ": "Asia/Kolkata", "LC_ALL": "C"]
    let squeeze = try Shell.run(SqueezeBinary.path, arguments, environment: zone)
    try #require(squeeze.status == 0, "\(squeeze.stderrText)")
    let gzip = try Shell.run("/bin/gzip", arguments, environment: zone)
    try #require(gzip.status == 0, "\(gzip.stderrText)")
    return (squeeze.stdoutText, gzip.stdoutText)
  }

  /// Sets `path`'s modification time (`touch -d`).
  static func touch(_ path: String, _ date: String) throws {
    try #require(try Shell.run("/usr/bin/touch", ["-d", date, path]).status == 0)
  }

  /// A file squeeze made, one `gzip -n` made (no MTIME in its header) and an empty one,
  /// each `.gz` file given its own modification time.
  static func makeFiles(in folder: TemporaryFolder) throws -> [String] {
    try folder.write("a.txt", TestData.text(200_000, seed: 11))
    try folder.write("b.txt", TestData.text(150_000, seed: 12))
    try folder.write("empty", [])
    try touch(folder.url("a.txt"), "2024-02-29 23:59:30 UTC")
    #expect(try SqueezeBinary.run([folder.url("a.txt"), folder.url("empty")]).status == 0)
    let nameless = try Shell.run("/bin/gzip", ["-nc", folder.url("b.txt")])
    try Data(nameless.stdout).write(to: URL(fileURLWithPath: folder.url("b.txt.gz")))
    try touch(folder.url("a.txt.gz"), "2025-07-04 08:05:00 UTC")
    try touch(folder.url("b.txt.gz"), "2021-01-02 03:04:05 UTC")
    return ["a.txt.gz", "b.txt.gz", "empty.gz"].map { folder.url($0) }
  }

  @Test func verboseListsAreGzipsByteForByte() throws {
    let folder = TemporaryFolder("list-verbose")
    let files = try Self.makeFiles(in: folder)
    for arguments in [
      ["-lv", files[0]], ["-lv", files[1]], ["-lv"] + files, ["-lvN"] + files, ["-lvN", files[0]],
    ] {
      let (squeeze, gzip) = try Self.lists(arguments, in: folder)
      #expect(squeeze == gzip, "\(arguments)")
      #expect(squeeze.hasPrefix("method  crc     date  time  "), "\(squeeze)")
    }
  }

  /// Several members: the crc column is the last trailer's, as gzip's (which reads only the
  /// file's last 8 bytes; the sizes differ on purpose, squeeze decoding every member).
  @Test func theCRCOfSeveralMembersIsTheLastTrailersAsGzipShowsIt() throws {
    let folder = TemporaryFolder("list-verbose-members")
    try folder.write("one", TestData.text(5_000, seed: 13))
    try folder.write("two", TestData.text(7_000, seed: 14))
    let joined =
      try Shell.run("/bin/gzip", ["-c", folder.url("one")]).stdout
      + Shell.run("/bin/gzip", ["-c", folder.url("two")]).stdout
    try Data(joined).write(to: URL(fileURLWithPath: folder.url("both.gz")))
    let (squeeze, gzip) = try Self.lists(["-lv", folder.url("both.gz")], in: folder)
    let (squeezeRow, gzipRow) = (
      squeeze.split(separator: "\n").last ?? "", gzip.split(separator: "\n").last ?? ""
    )
    #expect(squeezeRow.prefix(28) == gzipRow.prefix(28), "\(squeeze)\n\(gzip)")
    #expect(squeezeRow.contains(" 12000 "), "every member counted: \(squeeze)")
  }

  /// Without `-v` the table has gzip -l's four columns only.
  @Test func aListWithoutVerboseIsGzipsToo() throws {
    let folder = TemporaryFolder("list-plain")
    let files = try Self.makeFiles(in: folder)
    for arguments in [["-l", files[0]], ["-l"] + files, ["-lq"] + files] {
      let (squeeze, gzip) = try Self.lists(arguments, in: folder)
      #expect(squeeze == gzip, "\(arguments)")
    }
  }

  /// A list with no row has no heading either, as gzip prints its heading with the first
  /// row: a folder without `.gz` files, with `-l` and `-lv`, prints nothing on stdout.
  @Test func aListWithNoRowsPrintsNoHeading() throws {
    let folder = TemporaryFolder("list-empty")
    try folder.makeFolder("none/sub")
    for flags in ["-lr", "-lvr"] {
      let (squeeze, gzip) = try Self.lists([flags, folder.url("none")], in: folder)
      #expect(squeeze == gzip, "\(flags)")
      #expect(squeeze.isEmpty, "\(flags): \(squeeze)")
    }
    // A file that cannot be listed: its error on stderr, and nothing on stdout.
    try folder.write("bad.gz", Array("not gzip".utf8))
    let bad = try SqueezeBinary.run(["-l", folder.url("bad.gz")])
    #expect(bad.status == 1)
    #expect(bad.stdoutText.isEmpty, "\(bad.stdoutText)")
  }

  /// `-l --json` writes its keys in the order the user's guide lists them: what the file is,
  /// then its measures, the deprecated `ratio` last; the totals likewise.
  @Test func theJSONKeysComeInTheGuidesOrder() throws {
    let folder = TemporaryFolder("list-json-order")
    let files = try Self.makeFiles(in: folder)
    let result = try SqueezeBinary.run(["-l", "--json"] + files)
    try #require(result.status == 0, "\(result.stderrText)")
    let keys = try Regex(#""([A-Za-z]+)":"#)
    let order = result.stdoutText.matches(of: keys).map { String($0.output[1].substring ?? "") }
    let file = ["path", "name", "compressed", "uncompressed", "savedPercent", "ratio"]
    let totals = ["compressed", "uncompressed", "savedPercent", "ratio"]
    #expect(order == ["schema", "files"] + file + file + file + ["totals"] + totals)
  }
}
