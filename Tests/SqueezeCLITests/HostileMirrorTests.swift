import Foundation
import Glibc
import TestSupport
import Testing

/// Restores from mirrors someone else filled: links in the mirror, in folders and
/// as arguments, links already in the restore folder, names in gzip headers; nothing is ever
/// written outside R or through a link. And folder modes that would block a user who is not
/// root.
@Suite(.tags(.system), .systemTier) struct HostileMirrorTests {
  /// A gzip file holding `text`, with `name` (slashes and all) as its FNAME: written by
  /// hand, as Python's gzip module would keep only the base name.
  static func gzip(_ text: String, name: String, at path: String) throws {
    let script = """
      import os, struct, sys, zlib
      os.makedirs(os.path.dirname(sys.argv[1]), exist_ok=True)
      data = sys.argv[3].encode()
      packer = zlib.compressobj(6, zlib.DEFLATED, -15)
      body = packer.compress(data) + packer.flush()
      header = b'\\x1f\\x8b\\x08\\x08' + struct.pack('<I', 0) + b'\\x00\\x03'
      trailer = struct.pack('<II', zlib.crc32(data), len(data))
      open(sys.argv[1], 'wb').write(header + sys.argv[2].encode() + b'\\x00' + body + trailer)
      """
    let result = try Shell.run("/usr/bin/env", ["python3", "-c", script, path, name, text])
    try #require(result.status == 0, "\(result.stderrText)")
  }

  /// Everything below `path`, links included, as paths relative to it.
  static func everything(_ path: String) -> [String] {
    ((try? FileManager.default.subpathsOfDirectory(atPath: path)) ?? []).sorted()
  }

  @Test func linksInTheMirrorNeverLeadARestoreOutside() throws {
    let folder = TemporaryFolder("hostile")
    try folder.makeFolder("outside")
    let outside = folder.url("outside")
    try folder.makeFolder("M1")
    try folder.makeFolder("M2/evil")
    try folder.makeFolder("M2/up")
    symlink(outside, folder.url("M1/evil"))  // absolute target
    symlink("../outside", folder.url("M1/up"))  // a `..` target
    try Self.gzip("pwned", name: "passwd", at: folder.url("M2/evil/passwd.gz"))
    try Self.gzip("pwned too", name: "x", at: folder.url("M2/up/x.gz"))
    for (restore, order) in [("R", ["M1/", "M2/"]), ("R2", ["M2/", "M1/"])] {
      let result = try SqueezeBinary.run(
        ["-d", "-o", folder.url(restore)] + order.map { folder.url($0) })
      #expect(result.status == 1, "\(order): the links and folders clash")
      #expect(result.stderrText.contains("is also where"), "\(result.stderrText)")
      #expect(Self.everything(outside).isEmpty, "\(order): nothing written outside")
    }
    // Whatever the order, the folders are restored, the links that clash with them fail.
    var status = stat()
    for restore in ["R", "R2"] {
      #expect(
        lstat(folder.url("\(restore)/evil"), &status) == 0 && status.st_mode & S_IFMT == S_IFDIR)
      #expect(try folder.read("\(restore)/evil/passwd") == Array("pwned".utf8))
      #expect(try folder.read("\(restore)/up/x") == Array("pwned too".utf8))
    }
    // Alone, the links are restored as links, never written through.
    #expect(try SqueezeBinary.run(["-d", "-o", folder.url("R1"), folder.url("M1/")]).status == 0)
    #expect(lstat(folder.url("R1/evil"), &status) == 0 && status.st_mode & S_IFMT == S_IFLNK)
    #expect(lstat(folder.url("R1/up"), &status) == 0 && status.st_mode & S_IFMT == S_IFLNK)
    // A link already in the restore folder where the mirror has a folder is replaced by the
    // folder, not followed.
    try folder.makeFolder("R3")
    symlink(outside, folder.url("R3/evil"))
    let replaced = try SqueezeBinary.run(["-d", "-o", folder.url("R3"), folder.url("M2/")])
    #expect(replaced.status == 0, "\(replaced.stderrText)")
    #expect(lstat(folder.url("R3/evil"), &status) == 0 && status.st_mode & S_IFMT == S_IFDIR)
    #expect(try folder.read("R3/evil/passwd") == Array("pwned".utf8))
    #expect(Self.everything(outside).isEmpty)
  }

  @Test func aLinkArgumentIsRestoredAsALink() throws {
    let folder = TemporaryFolder("hostile-arg")
    try folder.makeFolder("outside")
    try folder.makeFolder("M")
    symlink(folder.url("outside"), folder.url("M/evil"))
    let result = try SqueezeBinary.run(["-d", "-o", folder.url("R"), folder.url("M/evil")])
    #expect(result.status == 0, "\(result.stderrText)")
    var status = stat()
    #expect(lstat(folder.url("R/evil"), &status) == 0 && status.st_mode & S_IFMT == S_IFLNK)
    // Restoring into a folder that a link names: the link is stored, nothing goes through it.
    try Self.gzip("into the link", name: "f", at: folder.url("N/evil/f.gz"))
    let through = try SqueezeBinary.run(["-d", "-o", folder.url("R"), folder.url("N/")])
    #expect(through.status == 0, "\(through.stderrText)")
    #expect(lstat(folder.url("R/evil"), &status) == 0 && status.st_mode & S_IFMT == S_IFDIR)
    #expect(Self.everything(folder.url("outside")).isEmpty)
  }

  /// A stored name with a path restores under its last component, in the folder the `.gz`
  /// file's output goes to, as `gzip -dN` and `pigz -dN` take it; one whose last component
  /// cannot name a file (`x/`, `dir/..`) restores under the `.gz` file's own name.
  @Test func namesInGzipHeadersNeverCarryAPath() throws {
    let folder = TemporaryFolder("hostile-names")
    try Self.gzip("up and out", name: "../../escape", at: folder.url("M/a.gz"))
    try Self.gzip("absolute", name: folder.url("absolute-escape"), at: folder.url("M/b.gz"))
    try Self.gzip("a folder's name", name: "x/", at: folder.url("M/c.gz"))
    try Self.gzip("up, by a last component", name: "dir/..", at: folder.url("M/d.gz"))
    let result = try SqueezeBinary.run(["-d", "-N", "-o", folder.url("R"), folder.url("M/")])
    #expect(result.status == 0, "\(result.stderrText)")
    #expect(Self.everything(folder.url("R")) == ["absolute-escape", "c", "d", "escape"])
    #expect(try String(contentsOfFile: folder.url("R/escape"), encoding: .utf8) == "up and out")
    #expect(!FileManager.default.fileExists(atPath: folder.url("escape")))
    #expect(!FileManager.default.fileExists(atPath: folder.url("absolute-escape")))
  }

  @Test(.enabled(if: TestMachine.isRoot, "needs root to run squeeze as the user nobody"))
  func readOnlySourceFoldersNeverBlockAUserWhoIsNotRoot() throws {
    let folder = TemporaryFolder("modes")
    let binary = try SqueezeBinary.publicCopy(in: folder)
    try folder.write("S/ro/f.txt", text: "in a 0500 folder")
    try folder.write("S/rx/g.txt", text: "in a 0555 folder")
    try folder.makeFolder("M")
    _ = try Shell.run("/bin/chown", ["-R", "nobody:nogroup", folder.url("S"), folder.url("M")])
    chmod(folder.url("S/ro"), 0o500)
    chmod(folder.url("S/rx"), 0o555)
    chmod(folder.url("S"), 0o555)
    func mode(_ path: String) -> mode_t {
      var status = stat()
      lstat(folder.url(path), &status)
      return status.st_mode & 0o7777
    }
    let first = try SqueezeBinary.runAsNobody(binary, ["-o", folder.url("M"), folder.url("S/")])
    #expect(first.status == 0, "\(first.stderrText)")
    #expect(mode("M/ro") == 0o500 && mode("M/rx") == 0o555 && mode("M") == 0o555)
    // A change inside the 0500 folder, and the run again as the same user.
    let change = try Shell.run(
      "/usr/bin/setpriv",
      [
        "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--", "/bin/sh", "-c",
        "chmod u+w \"$0\" && echo new > \"$0/h.txt\" && chmod 0500 \"$0\"", folder.url("S/ro"),
      ])
    #expect(change.status == 0, "\(change.stderrText)")
    let again = try SqueezeBinary.runAsNobody(binary, ["-o", folder.url("M"), folder.url("S/")])
    #expect(again.status == 0, "\(again.stderrText)")
    #expect(try SystemGzip.decompress(folder.url("M/ro/h.txt.gz")) == Array("new\n".utf8))
    #expect(mode("M/ro") == 0o500 && mode("M") == 0o555)
    _ = try Shell.run("/bin/mkdir", ["-p", folder.url("R")])
    _ = try Shell.run("/bin/chown", ["nobody:nogroup", folder.url("R")])
    for round in 0..<2 {
      let restored = try SqueezeBinary.runAsNobody(
        binary, ["-d", "-o", folder.url("R"), folder.url("M/")])
      #expect(restored.status == 0, "round \(round): \(restored.stderrText)")
    }
    #expect(mode("R/ro") == 0o500 && mode("R/rx") == 0o555 && mode("R") == 0o555)
    #expect(try folder.read("R/ro/h.txt") == Array("new\n".utf8))
  }
}
