import Foundation
import Glibc
import TestSupport
import Testing

/// gzip headers of any length RFC 1952 allows (FNAME and FCOMMENT run to a zero byte, with no
/// bound): `-d`, `-d -N`, `-t` and `-l` read the same files, in bounded memory.
@Suite struct LongGzipHeaderTests {
  /// A gzip file of `payload` whose header holds `name` (FNAME) and a comment (FCOMMENT) of
  /// `commentBytes` bytes, with the deflate data and trailer of the system's `gzip -n`.
  static func file(
    _ payload: [UInt8], name: [UInt8]?, commentBytes: Int, in folder: TemporaryFolder
  ) throws -> [UInt8] {
    let compressed = try Shell.run("/bin/gzip", ["-n", "-c"], input: payload)
    try #require(compressed.status == 0)
    var flags: UInt8 = 0
    if name != nil { flags |= 0x08 }
    if commentBytes > 0 { flags |= 0x10 }
    var bytes: [UInt8] = [0x1F, 0x8B, 8, flags, 0x80, 0x30, 0x5F, 0x65, 0, 3]
    if let name { bytes += name + [0] }
    if commentBytes > 0 {
      bytes += [UInt8](repeating: UInt8(ascii: "c"), count: commentBytes) + [0]
    }
    return bytes + compressed.stdout.dropFirst(10)
  }

  /// The 65,600-byte header that `-d -N` once refused ("longer than 1 MiB") while `-t` and
  /// `-d` read it: a short name and a long comment, read by every mode alike.
  @Test func aHeaderOf65600BytesIsReadByDecompressNameTestAndList() throws {
    let folder = TemporaryFolder("long-header")
    let payload = TestData.text(50_000)
    let name = Array("restored.txt".utf8)
    let commentBytes = 65_600 - 10 - (name.count + 1) - 1
    let bytes = try Self.file(payload, name: name, commentBytes: commentBytes, in: folder)
    let headerLength =
      bytes.count - (try Shell.run("/bin/gzip", ["-n", "-c"], input: payload)).stdout.count + 10
    #expect(headerLength == 65_600)
    let gz = try folder.write("in/data.txt.gz", bytes)
    #expect(try SystemGzip.decompress(gz) == payload, "the system's gzip reads it")

    let tested = try SqueezeBinary.run(["-t", gz])
    #expect(tested.status == 0, "\(tested.stderrText)")
    let listed = try SqueezeBinary.run(["-l", gz])
    #expect(listed.status == 0, "\(listed.stderrText)")
    #expect(
      listed.stdoutText.contains(" \(bytes.count) ")
        && listed.stdoutText.contains(" \(payload.count) "))
    let listedWithName = try SqueezeBinary.run(["-l", "-N", gz])
    #expect(listedWithName.status == 0)
    #expect(listedWithName.stdoutText.contains("in/restored.txt"))

    let restored = try SqueezeBinary.run(["-d", "-k", gz])
    #expect(restored.status == 0, "\(restored.stderrText)")
    #expect(try folder.read("in/data.txt") == payload)
    let named = try SqueezeBinary.run(["-d", "-N", "-k", gz])
    #expect(named.status == 0, "\(named.stderrText)")
    #expect(try folder.read("in/restored.txt") == payload)
    var status = stat()
    stat(folder.url("in/restored.txt"), &status)
    #expect(status.st_mtim.tv_sec == 0x655F_3080, "-N restores the header's time too")
  }

  /// A big file squeeze wrote (restored chunk by chunk in parallel from the end of its
  /// header) with a 65,600-byte header put in front of its deflate data.
  @Test func aBigFileWithALongHeaderRestoresInParallel() throws {
    let folder = TemporaryFolder("long-header-big")
    let payload = TestData.text(6_000_000, seed: 9)
    try folder.write("src/big.txt", payload)
    let made = try SqueezeBinary.run(["-k", "--block-size", "128K", folder.url("src/big.txt")])
    #expect(made.status == 0, "\(made.stderrText)")
    let original = try folder.read("src/big.txt.gz")
    // squeeze writes ID1 ID2 CM FLG(FNAME) MTIME XFL OS, then the name: add a comment after it.
    try #require(original[3] == 0x08)
    let nameEnd = try #require(original[10...].firstIndex(of: 0))
    var bytes = Array(original[..<(nameEnd + 1)])
    bytes[3] |= 0x10
    bytes += [UInt8](repeating: UInt8(ascii: "c"), count: 65_600 - bytes.count - 1) + [0]
    #expect(bytes.count == 65_600)
    bytes += original[(nameEnd + 1)...]
    let gz = try folder.write("in/big.txt.gz", bytes)
    #expect(try SystemGzip.decompress(gz) == payload)
    for arguments in [["-d", "-k"], ["-d", "-N", "-k"]] {
      let log = folder.url("restore.jsonl")
      let restored = try SqueezeBinary.run(
        arguments + ["-f", "-j", "2", "--task-log", log, gz])
      #expect(restored.status == 0, "\(arguments): \(restored.stderrText)")
      #expect(try folder.read("in/big.txt") == payload, "\(arguments)")
      // Chunks in the log: it was restored in parallel, from the end of the long header
      // (not by the serial decoder a header it cannot read falls back to).
      let events = String(decoding: try folder.read("restore.jsonl"), as: UTF8.self)
      #expect(events.contains(#""event":"chunk""#), "\(arguments): restored chunk by chunk")
    }
  }

  /// An FNAME longer than a file name can be: `-d`, `-t` and `-l` read the file; `-N`, which
  /// would name the output with it, says exactly why it cannot, and writes nothing.
  @Test func aStoredNameLongerThanAFileNameCanBeIsAnErrorOnlyWhereItWouldNameAFile() throws {
    let folder = TemporaryFolder("long-name")
    let payload = TestData.text(20_000)
    let name = [UInt8](repeating: UInt8(ascii: "n"), count: 65_589)
    let gz = try folder.write(
      "data.txt.gz", try Self.file(payload, name: name, commentBytes: 0, in: folder))
    #expect(try SqueezeBinary.run(["-t", gz]).status == 0)
    #expect(try SqueezeBinary.run(["-l", gz]).status == 0)
    let restored = try SqueezeBinary.run(["-d", "-k", gz])
    #expect(restored.status == 0)
    #expect(try folder.read("data.txt") == payload)
    try FileManager.default.removeItem(atPath: folder.url("data.txt"))
    let message =
      "squeeze: \(gz): the name stored in its gzip header is 65,589 bytes, longer than a file name can be (255 bytes); not used (-N)\n"
    for arguments in [["-d", "-N", "-k"], ["-l", "-N"]] {
      let refused = try SqueezeBinary.run(arguments + [gz])
      #expect(refused.status == 1, "\(arguments)")
      #expect(refused.stderrText == message, "\(arguments)")
    }
    #expect(folder.allFiles() == ["data.txt.gz"], "nothing written under any name")
  }

  /// A comment of 64 MiB is read past, not held: testing the file stays within a few MiB of
  /// squeeze's usual size (the whole comment in memory would be 64 MiB more).
  @Test func aHugeCommentIsReadPastInBoundedMemory() throws {
    let folder = TemporaryFolder("huge-comment")
    let payload = TestData.text(10_000)
    let gz = try folder.write(
      "data.gz",
      try Self.file(payload, name: Array("a".utf8), commentBytes: 64 << 20, in: folder))
    let script = """
      import resource, subprocess, sys
      result = subprocess.run([sys.argv[1], "-t", sys.argv[2]])
      print(result.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
      """
    let run = try Shell.run("/usr/bin/python3", ["-c", script, SqueezeBinary.path, gz])
    let fields = run.stdoutText.split(separator: " ").map {
      Int($0.trimmingCharacters(in: .whitespacesAndNewlines))
    }
    #expect(fields.first == 0, "\(run.stdoutText) \(run.stderrText)")
    let kilobytes = try #require(fields.last ?? nil)
    #expect(kilobytes < 48 * 1024, "peak RSS \(kilobytes) KiB")
  }
}
