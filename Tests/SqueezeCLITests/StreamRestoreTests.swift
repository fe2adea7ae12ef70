import Foundation
import TestSupport
import Testing

/// `-dc` and `-tc` of a regular file restore it chunk-parallel, as `-d` into a file does,
/// and give exactly what the one-core path gives (a pipe's) and what gzip gives.
@Suite struct StreamRestoreTests {
  /// The chunk size the files are made with: small, so files of a few chunks stay small.
  static let block = 256 << 10

  /// How the files are made: levels ISA-L and libdeflate compress at, content-defined
  /// chunks, and the zlib engine (whose chunks share a dictionary: restored serially).
  static let makers: [[String]] = [
    ["-1"], ["-6"], ["-9"], ["--rsyncable"], ["--engine", "zlib"],
  ]

  /// Sizes around the chunk size, and several chunks.
  static let sizes = [block - 1, block, block + 1, 3 * block + 17, 6 * block + 4321]

  /// True when `a` and `b` are the same bytes. A plain `#expect(a == b)` of megabytes that
  /// differ would have the testing library diff them, which takes minutes.
  static func same(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    a == b
  }

  /// Writes `in/<size>.txt` for every size and compresses them with `maker` into `gz/`.
  static func makeFiles(in folder: TemporaryFolder, maker: [String]) throws -> [String: [UInt8]] {
    var originals: [String: [UInt8]] = [:]
    for (index, size) in sizes.enumerated() {
      let name = "\(size).txt"
      originals[name] = TestData.text(size, seed: UInt64(index + 7))
      try folder.write("in/\(name)", originals[name]!)
    }
    let made = try SqueezeBinary.run(
      maker + ["--block-size", "256K", "-o", folder.url("gz"), folder.url("in/")])
    #expect(made.status == 0, "\(made.stderrText)")
    return originals
  }

  @Test(arguments: makers)
  func restoresSqueezeFilesLikeGzipAndThePipe(maker: [String]) throws {
    let folder = TemporaryFolder("dc-\(maker.joined())")
    let originals = try Self.makeFiles(in: folder, maker: maker)
    for (name, original) in originals {
      let gz = folder.url("gz/\(name).gz")
      for engine in ["fast", "zlib"] {
        let restored = try SqueezeBinary.run(["--engine", engine, "-dc", "-j", "2", gz])
        #expect(restored.status == 0, "\(name) \(engine): \(restored.stderrText)")
        #expect(Self.same(restored.stdout, original), "\(maker) \(name) \(engine)")
        let tested = try SqueezeBinary.run(["--engine", engine, "-tc", "-j", "2", gz])
        #expect(tested.status == 0 && tested.stdout.isEmpty, "\(name): \(tested.stderrText)")
      }
      #expect(Self.same(try SystemGzip.decompress(gz), original))
      // Standard input redirected from the file is a regular file too.
      let redirected = try Shell.sh(
        "\(Shell.quote(SqueezeBinary.path)) -dc -j 2 < \(Shell.quote(gz))")
      #expect(redirected.status == 0, "\(name) < file: \(redirected.stderrText)")
      #expect(Self.same(redirected.stdout, original), "\(name) < file")
    }
  }

  @Test func severalFilesRestoreOneAfterAnother() throws {
    let folder = TemporaryFolder("dc-several")
    let originals = try Self.makeFiles(in: folder, maker: ["-6"])
    let names = Self.sizes.map { "\($0).txt" }
    let joined = names.flatMap { originals[$0]! }
    let restored = try SqueezeBinary.run(
      ["-dc", "-j", "2"] + names.map { folder.url("gz/\($0).gz") })
    #expect(restored.status == 0, "\(restored.stderrText)")
    #expect(Self.same(restored.stdout, joined))
    // A file of several members (two squeeze files and a gzip one, joined) restores whole.
    let gzipMade = try Shell.run("/bin/gzip", ["-c"], input: originals[names[0]]!).stdout
    try folder.write(
      "joined.gz",
      try folder.read("gz/\(names[4]).gz") + gzipMade + folder.read("gz/\(names[3]).gz"))
    let members = try SqueezeBinary.run(["-dc", "-j", "2", folder.url("joined.gz")])
    #expect(members.status == 0, "\(members.stderrText)")
    #expect(
      Self.same(
        members.stdout, originals[names[4]]! + originals[names[0]]! + originals[names[3]]!))
  }

  /// `-dcf` passes through what is not gzip, as zcat -f, and data after the last member:
  /// the same bytes as through a pipe (the one-core path).
  @Test func forcedRestorePassesThroughAsThePipeDoes() throws {
    let folder = TemporaryFolder("dcf")
    let originals = try Self.makeFiles(in: folder, maker: ["-6"])
    let name = "\(Self.sizes[4]).txt"
    let gz = try folder.read("gz/\(name).gz")
    try folder.write("plain.txt", Array("not gzip at all\n".utf8))
    try folder.write("empty", [])
    try folder.write("trailing.gz", gz + Array("trailing data".utf8))
    let inputs = ["plain.txt", "gz/\(name).gz", "empty", "trailing.gz"]
    let original = originals[name]!
    // With zlib too: the fast engine's refusal of the trailing data could hide behind zlib's
    // second decode.
    for engine in ["fast", "zlib"] {
      let restored = try SqueezeBinary.run(
        ["--engine", engine, "-dcf", "-j", "2"] + inputs.map { folder.url($0) })
      #expect(restored.status == 0, "\(engine): \(restored.stderrText)")
      #expect(
        Self.same(
          restored.stdout,
          Array("not gzip at all\n".utf8) + original + original + Array("trailing data".utf8)),
        "\(engine)")
    }
    for input in inputs {
      let piped = try SqueezeBinary.run(["-dcf"], input: try folder.read(input))
      let file = try SqueezeBinary.run(["-dcf", "-j", "2", folder.url(input)])
      #expect(file.status == piped.status, "\(input)")
      #expect(Self.same(file.stdout, piped.stdout), "\(input)")
    }
    // Without -f, data after the last member is an error, as through the pipe.
    let refused = try SqueezeBinary.run(["-dc", folder.url("trailing.gz")])
    let piped = try SqueezeBinary.run(["-dc"], input: try folder.read("trailing.gz"))
    #expect(refused.status == 1 && piped.status == 1)
    #expect(Self.same(refused.stdout, piped.stdout))
    #expect(
      refused.stderrText.replacingOccurrences(of: folder.url("trailing.gz"), with: "X")
        == piped.stderrText.replacingOccurrences(of: "(standard input)", with: "X"))
  }

  /// A chunk damaged in the middle of a file fails the restore with the fault `-d` reports,
  /// status 1, and no byte is sent twice when zlib decodes the file again (it skips what
  /// was sent).
  @Test func aDamagedChunkFailsAsTheFileRestoreDoes() throws {
    let folder = TemporaryFolder("dc-damaged")
    let originals = try Self.makeFiles(in: folder, maker: ["-6"])
    let name = "\(Self.sizes[4]).txt"
    let good = try folder.read("gz/\(name).gz")
    for (index, position) in [good.count / 2, good.count / 2 + 1000, good.count - 12]
      .enumerated()
    {
      var damaged = good
      damaged[position] ^= 0x10
      let path = try folder.write("bad\(index)/\(name).gz", damaged)
      let restored = try SqueezeBinary.run(["-dc", "-j", "2", path])
      #expect(restored.status == 1, "\(index)")
      #expect(restored.stdout.count <= originals[name]!.count, "\(index): nothing twice")
      let intoFile = try SqueezeBinary.run(["-d", "-k", "-j", "2", path])
      #expect(intoFile.status == 1)
      #expect(restored.stderrText == intoFile.stderrText, "\(index)")
      #expect(restored.stderrText.hasPrefix("squeeze: \(path): "), "\(restored.stderrText)")
    }
  }

  /// A pipe, and standard input a caller already read from, are read as they come (one
  /// core): still the original bytes.
  @Test func pipesAndPositionedInputStillRestore() throws {
    let folder = TemporaryFolder("dc-pipe")
    let originals = try Self.makeFiles(in: folder, maker: ["-6"])
    let name = "\(Self.sizes[4]).txt"
    let gz = try folder.read("gz/\(name).gz")
    let piped = try SqueezeBinary.run(["-dc", "-j", "2"], input: gz)
    #expect(piped.status == 0)
    #expect(Self.same(piped.stdout, originals[name]!))
    // Three bytes before the gzip data, read by dd before squeeze starts.
    let prefixed = try folder.write("prefixed.gz", Array("abc".utf8) + gz)
    let positioned = try Shell.sh(
      "{ dd bs=3 count=1 of=/dev/null 2>/dev/null; \(Shell.quote(SqueezeBinary.path)) -dc -j 2; } < \(Shell.quote(prefixed))"
    )
    #expect(positioned.status == 0, "\(positioned.stderrText)")
    #expect(Self.same(positioned.stdout, originals[name]!))
  }

  /// The chunk-parallel path is taken: under strace, squeeze reads the file at chunk starts
  /// (right after a sync marker `00 00 ff ff`), which only chunk decoding does; a pipe and
  /// a gzip-made file (no markers) are read front to back.
  @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/strace")))
  func theChunkParallelPathIsTaken() throws {
    let folder = TemporaryFolder("dc-strace")
    let originals = try Self.makeFiles(in: folder, maker: ["-6"])
    let name = "\(Self.sizes[4]).txt"
    let squeezeMade = folder.url("gz/\(name).gz")
    let gzipMade = try folder.write(
      "gzip.gz", try Shell.run("/bin/gzip", ["-c"], input: originals[name]!).stdout)
    func chunkReads(_ command: String, of path: String) throws -> Int {
      let trace = folder.url("trace-\(UUID().uuidString)")
      let result = try Shell.sh(
        "strace -f -qq -e trace=pread64 -o \(Shell.quote(trace)) sh -c \(Shell.quote(command)) > /dev/null"
      )
      #expect(result.status == 0, "\(command): \(result.stderrText)")
      let compressed = try folder.read(String(path.dropFirst(folder.path.count + 1)))
      let pattern = try NSRegularExpression(pattern: #"(\d+), (\d+)\) = \d+$"#)
      var count = 0
      for line in try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n")
      where line.contains("pread64") {
        let text = String(line)
        guard
          let match = pattern.firstMatch(
            in: text, range: NSRange(text.startIndex..., in: text)),
          let range = Range(match.range(at: 2), in: text), let offset = Int(text[range]),
          offset >= 4, offset <= compressed.count
        else { continue }
        if Array(compressed[(offset - 4)..<offset]) == [0, 0, 0xff, 0xff] { count += 1 }
      }
      return count
    }
    let binary = Shell.quote(SqueezeBinary.path)
    #expect(try chunkReads("\(binary) -dc -j 2 \(Shell.quote(squeezeMade))", of: squeezeMade) >= 4)
    #expect(try chunkReads("\(binary) -tc -j 2 \(Shell.quote(squeezeMade))", of: squeezeMade) >= 4)
    #expect(
      try chunkReads("\(binary) -dc -j 2 < \(Shell.quote(squeezeMade))", of: squeezeMade) >= 4)
    #expect(
      try chunkReads("cat \(Shell.quote(squeezeMade)) | \(binary) -dc -j 2", of: squeezeMade) == 0)
    #expect(try chunkReads("\(binary) -dc -j 2 \(Shell.quote(gzipMade))", of: gzipMade) == 0)
  }
}
