import Foundation
import Glibc
import TestSupport
import Testing

/// Hostile trees: names, depth, links, loops, overlapping arguments, the output
/// inside the input, hard links.
@Suite struct HostileTreeTests {
  /// Creates a file whose name is raw bytes (Foundation paths are text).
  static func writeRaw(_ folder: String, name: [UInt8], contents: [UInt8]) throws {
    let path = Array(folder.utf8) + [UInt8(ascii: "/")] + name + [0]
    let descriptor = path.withUnsafeBufferPointer {
      $0.withMemoryRebound(to: CChar.self) {
        open($0.baseAddress!, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
      }
    }
    guard descriptor >= 0 else {
      throw SystemGzip.GzipFailure(message: "cannot create raw name: \(errno)")
    }
    _ = contents.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    close(descriptor)
  }

  /// The raw names in `folder`.
  static func rawNames(_ folder: String) -> Set<[UInt8]> {
    guard let stream = opendir(folder) else { return [] }
    defer { closedir(stream) }
    var names: Set<[UInt8]> = []
    while let entry = readdir(stream) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
      if name != [46] && name != [46, 46] { names.insert(name) }
    }
    return names
  }

  @Test func hostileNamesRoundTripWithIdenticalBytes() throws {
    let folder = TemporaryFolder("names")
    try folder.makeFolder("in")
    let names: [[UInt8]] = [
      [0x62, 0x61, 0x64, 0xFF, 0xFE, 0x2E, 0x74, 0x78, 0x74],  // not UTF-8
      Array("line\nbreak".utf8),
      Array("-starts-with-dash".utf8),
      Array(repeating: UInt8(ascii: "n"), count: 250),
    ]
    for (index, name) in names.enumerated() {
      try Self.writeRaw(folder.url("in"), name: name, contents: Array("content \(index)".utf8))
    }
    let tooLong = Array(repeating: UInt8(ascii: "L"), count: 255)
    try Self.writeRaw(folder.url("in"), name: tooLong, contents: Array("long".utf8))
    let compressed = try SqueezeBinary.run(["-o", folder.url("gz"), folder.url("in/")])
    #expect(compressed.status == 1, "only the 255-byte name fails")
    #expect(
      compressed.stderrText.contains(
        "would be 258 bytes, over the 255-byte limit of the file system"))
    #expect(
      compressed.stderrText.contains("bad\\xff\\xfe.txt") == false, "no failure for the others")
    #expect(Self.rawNames(folder.url("gz")) == Set(names.map { $0 + Array(".gz".utf8) }))
    let restored = try SqueezeBinary.run(["-d", "-o", folder.url("back"), folder.url("gz/")])
    #expect(restored.status == 0, "\(restored.stderrText)")
    #expect(Self.rawNames(folder.url("back")) == Set(names))
    let listing = try SqueezeBinary.run(["-l", folder.url("gz")])
    #expect(listing.stdoutText.contains("bad\\xff\\xfe.txt"), "invalid bytes shown as \\xHH")
    #expect(listing.stdoutText.contains("line\\x0abreak"))
  }

  @Test(.tags(.system), .systemTier)
  func pathsDeeperThanPathMaxWork() throws {
    let folder = TemporaryFolder("deep")
    // 30 levels of 200-byte names: a path of over 6,000 bytes.
    var path = folder.url("in")
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    let component = String(repeating: "d", count: 200)
    let result = try Shell.run(
      "/usr/bin/python3",
      [
        "-c",
        """
        import os, sys
        fd = os.open(sys.argv[1], os.O_RDONLY)
        for i in range(30):
            os.mkdir(sys.argv[2], dir_fd=fd)
            nfd = os.open(sys.argv[2], os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = nfd
        f = os.open("deep.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(f, b"at the bottom\\n")
        os.close(f)
        """, path, component,
      ])
    #expect(result.status == 0, "\(result.stderrText)")
    let compressed = try SqueezeBinary.run(["-o", folder.url("gz"), path + "/"])
    #expect(compressed.status == 0, "\(compressed.stderrText)")
    let restored = try SqueezeBinary.run(["-d", "-o", folder.url("back"), folder.url("gz/")])
    #expect(restored.status == 0, "\(restored.stderrText)")
    let check = try Shell.run(
      "/usr/bin/python3",
      [
        "-c",
        """
        import os, sys
        fd = os.open(sys.argv[1], os.O_RDONLY)
        for i in range(30):
            nfd = os.open(sys.argv[2], os.O_RDONLY, dir_fd=fd); os.close(fd); fd = nfd
        f = os.open("deep.txt", os.O_RDONLY, dir_fd=fd)
        sys.stdout.write(os.read(f, 100).decode())
        """, folder.url("back"), component,
      ])
    #expect(check.stdoutText == "at the bottom\n")
    path = ""
  }

  @Test func linksAreNeverFollowedByDefault() throws {
    let folder = TemporaryFolder("passwd")
    try folder.write("in/real.txt", Array("real".utf8))
    symlink("/etc/passwd", folder.url("in/passwd"))
    symlink("/etc", folder.url("in/etc"))
    let result = try SqueezeBinary.run(["-o", folder.url("out"), folder.url("in/")])
    #expect(result.status == 0)
    #expect(TemporaryFolder.files(in: folder.url("out")) == ["real.txt.gz"])
  }

  @Test func followingLinksEndsLoopsTakesEachFileOnceAndReportsTheOutside() throws {
    let folder = TemporaryFolder("follow")
    try folder.write("in/a/file.txt", Array("once".utf8))
    try folder.write("outside/far.txt", Array("far away".utf8))
    symlink("../a", folder.url("in/a/loop"))  // a loop back to a
    symlink("a", folder.url("in/b"))  // the same folder again
    symlink("a/file.txt", folder.url("in/alias.txt"))  // the same file again
    symlink(folder.url("outside/far.txt"), folder.url("in/far-link.txt"))
    let result = try SqueezeBinary.run([
      "--follow-symlinks", "-v", "-o", folder.url("out"), folder.url("in/"),
    ])
    #expect(result.status == 0, "\(result.stderrText)")
    let outputs = TemporaryFolder.files(in: folder.url("out"))
    #expect(
      outputs.filter { $0.hasSuffix("file.txt.gz") || $0 == "alias.txt.gz" }.count == 1,
      "\(outputs)")
    #expect(outputs.contains("far-link.txt.gz"))
    #expect(try SystemGzip.decompress(folder.url("out/far-link.txt.gz")) == Array("far away".utf8))
    #expect(
      result.stderrText.contains("far-link.txt: is a symbolic link leading outside its argument"))
    #expect(result.stderrText.contains("in/a/loop: skipped: symbolic link loop"))
    // Beside the sources, through a linked folder, the output lands in the real folder.
    let beside = try SqueezeBinary.run(["--follow-symlinks", folder.url("in/b/")])
    #expect(beside.status == 0, "\(beside.stderrText)")
    #expect(try SystemGzip.decompress(folder.url("in/a/file.txt.gz")) == Array("once".utf8))
  }

  @Test(arguments: [["tw", "tw/"], ["tw", "./tw"], ["tw", "tw/sub"], ["tw/sub", "tw"]])
  func overlappingArgumentsCompressEachFileOnce(arguments: [String]) throws {
    let folder = TemporaryFolder("overlap")
    try folder.write("tw/a", Array("1".utf8))
    try folder.write("tw/sub/b", Array("2".utf8))
    let result = try SqueezeBinary.run(arguments, currentDirectory: folder.path)
    #expect(result.status == 0, "\(arguments): \(result.stderrText)")
    #expect(TemporaryFolder.files(in: folder.url("tw")) == ["a", "a.gz", "sub/b", "sub/b.gz"])
    let removing = try SqueezeBinary.run(["--rm", "-f"] + arguments, currentDirectory: folder.path)
    #expect(removing.status == 0, "\(arguments) --rm: \(removing.stderrText)")
    #expect(TemporaryFolder.files(in: folder.url("tw")) == ["a.gz", "sub/b.gz"])
  }

  @Test func theOutputFolderInsideTheInputIsNeverCompressedAgain() throws {
    let folder = TemporaryFolder("inside")
    for index in 0..<10 {
      try folder.write("in/f\(index).txt", TestData.text(2000, seed: UInt64(index)))
    }
    for round in 0..<3 {
      let result = try SqueezeBinary.run(["-v", "-o", folder.url("in/backup"), folder.url("in/")])
      #expect(result.status == 0, "round \(round): \(result.stderrText)")
    }
    let files = TemporaryFolder.files(in: folder.url("in/backup"))
    #expect(files.count == 10)
    #expect(files.allSatisfy { $0.hasSuffix(".txt.gz") && !$0.hasSuffix(".gz.gz") })
    // A re-run beside the sources skips the outputs of the last run.
    #expect(try SqueezeBinary.run([folder.url("in")]).status == 0)
    #expect(try SqueezeBinary.run([folder.url("in")]).status == 0)
    #expect(TemporaryFolder.files(in: folder.url("in")).filter { $0.hasSuffix(".gz.gz") }.isEmpty)
  }

  @Test func hardLinksGiveOneOutputPerPath() throws {
    let folder = TemporaryFolder("hardlinks")
    try folder.write("in/one.txt", Array("shared bytes".utf8))
    link(folder.url("in/one.txt"), folder.url("in/two.txt"))
    let result = try SqueezeBinary.run([
      "-o", folder.url("out"), folder.url("in/"), folder.url("in/one.txt"),
    ])
    #expect(result.status == 0, "\(result.stderrText)")
    #expect(TemporaryFolder.files(in: folder.url("out")) == ["one.txt.gz", "two.txt.gz"])
  }
}
