import Foundation
import Glibc
import TestSupport
import Testing

/// `-c` and standard input, block-parallel, as gzip's streams.
@Suite struct StreamTests {
  @Test func standardInputRoundTripsThroughPipes() throws {
    let data = TestData.text(700_000, seed: 11)
    let compressed = try SqueezeBinary.run(["--block-size", "64K", "-j", "3"], input: data)
    #expect(compressed.status == 0, "\(compressed.stderrText)")
    #expect(try Shell.run("/bin/gzip", ["-dc"], input: compressed.stdout).stdout == data)
    let restored = try SqueezeBinary.run(["-d"], input: compressed.stdout)
    #expect(restored.status == 0)
    #expect(restored.stdout == data)
    let viaDash = try SqueezeBinary.run(["-dc", "-"], input: compressed.stdout)
    #expect(viaDash.stdout == data)
  }

  @Test func aTarPipelineWorks() throws {
    let folder = TemporaryFolder("tar")
    for index in 0..<30 {
      try folder.write("tree/f\(index).txt", TestData.text(5000, seed: UInt64(index)))
    }
    let result = try Shell.sh(
      "tar -C \(Shell.quote(folder.path)) -c tree | \(Shell.quote(SqueezeBinary.path)) > \(Shell.quote(folder.url("tree.tar.gz"))) && mkdir \(Shell.quote(folder.url("x"))) && \(Shell.quote(SqueezeBinary.path)) -dc \(Shell.quote(folder.url("tree.tar.gz"))) | tar -C \(Shell.quote(folder.url("x"))) -x"
    )
    #expect(result.status == 0, "\(result.stderrText)")
    #expect(try folder.read("x/tree/f7.txt") == TestData.text(5000, seed: 7))
  }

  @Test func stdoutWithFilesWritesConcatenatedMembersAndKeepsThem() throws {
    let folder = TemporaryFolder("cat")
    try folder.write("a.txt", Array("alpha\n".utf8))
    try folder.write("b.txt", Array("beta\n".utf8))
    let result = try SqueezeBinary.run(["-c", folder.url("a.txt"), folder.url("b.txt")])
    #expect(result.status == 0)
    #expect(
      try Shell.run("/bin/gzip", ["-dc"], input: result.stdout).stdout
        == Array("alpha\nbeta\n".utf8))
    #expect(TemporaryFolder.files(in: folder.path) == ["a.txt", "b.txt"])
    let missing = try SqueezeBinary.run(["-c", folder.url("nope.txt"), folder.url("a.txt")])
    #expect(missing.status == 1)
    #expect(
      try Shell.run("/bin/gzip", ["-dc"], input: missing.stdout).stdout == Array("alpha\n".utf8))
  }

  @Test func aFileCompressesToTheSameBytesThroughTheStreamAndTheFolderPath() throws {
    let folder = TemporaryFolder("same")
    try folder.write("in/big.txt", TestData.text(900_000, seed: 3))
    #expect(try SqueezeBinary.run(["--block-size", "64K", folder.url("in")]).status == 0)
    let streamed = try SqueezeBinary.run(["-c", "--block-size", "64K", folder.url("in/big.txt")])
    #expect(streamed.stdout == (try folder.read("in/big.txt.gz")))
  }

  @Test func stdoutOpensOneFileAtATime() throws {
    // 300 files under `ulimit -n 64`: each is opened when its turn comes.
    let folder = TemporaryFolder("stream-many")
    for index in 0..<300 {
      try folder.write("in/f\(String(format: "%03d", index))", text: "\(index)\n")
    }
    let result = try Shell.sh(
      "ulimit -n 64; \(Shell.quote(SqueezeBinary.path)) -c \(Shell.quote(folder.url("in"))) | gzip -dc"
    )
    #expect(result.status == 0, "\(result.stderrText.prefix(300))")
    #expect(result.stdoutText == (0..<300).map { "\($0)\n" }.joined())
  }

  @Test func namedPipesAreReadWithStdoutAsGzipDoes() throws {
    let folder = TemporaryFolder("stream-fifo")
    let squeeze = Shell.quote(SqueezeBinary.path)
    let pipe = Shell.quote(folder.url("pipe"))
    let compressed = try Shell.sh(
      "mkfifo \(pipe) && (seq 1 2000 > \(pipe) &) && \(squeeze) -c \(pipe) | gzip -dc")
    #expect(compressed.status == 0, "\(compressed.stderrText)")
    #expect(compressed.stdoutText == (1...2000).map { "\($0)\n" }.joined())
    let restored = try Shell.sh("(seq 1 50 | gzip -c > \(pipe) &) && \(squeeze) -dc \(pipe)")
    #expect(restored.status == 0, "\(restored.stderrText)")
    #expect(restored.stdoutText == (1...50).map { "\($0)\n" }.joined())
    // A signal ends a wait for a pipe's writer at once.
    let waiting = try SqueezeBinary.run(["-c", folder.url("pipe")]) { pid in
      usleep(300_000)
      kill(pid, SIGTERM)
    }
    #expect(waiting.signal == SIGTERM, "\(waiting.status) \(waiting.stderrText)")
    // A link named directly is read too: /dev/stdin redirected from a file.
    try folder.write("data.txt", text: "through a link\n")
    let linked = try Shell.sh(
      "\(squeeze) -c /dev/stdin < \(Shell.quote(folder.url("data.txt"))) | gzip -dc")
    #expect(linked.stdoutText == "through a link\n", "\(linked.stderrText)")
    // Without -c a named pipe is still skipped with a warning, as gzip does.
    let skipped = try SqueezeBinary.run([folder.url("pipe")])
    #expect(skipped.stderrText.contains("is a named pipe, not a regular file or folder; ignored"))
  }

  @Test func aClosedStandardDescriptorIsReportedAndNeverReused() throws {
    let folder = TemporaryFolder("closed-fds")
    try folder.write("in/a.txt", TestData.text(20_000))
    let squeeze = Shell.quote(SqueezeBinary.path)
    let file = Shell.quote(folder.url("in/a.txt"))
    let closedOut = try Shell.sh("\(squeeze) -c \(file) >&-")
    #expect(closedOut.status == 1)
    #expect(closedOut.stderrText.contains("cannot write '(standard output)': Bad file descriptor"))
    let closedIn = try Shell.sh("\(squeeze) -dc <&-")
    #expect(closedIn.status == 1)
    #expect(closedIn.stderrText.contains("(standard input): cannot read: Bad file descriptor"))
    // --json with stdout closed: the summary fails; no output file receives it.
    let json = try Shell.sh("\(squeeze) --json \(Shell.quote(folder.url("in"))) >&-")
    #expect(json.status == 1)
    #expect(json.stderrText.contains("cannot write the --json summary to standard output"))
    #expect(try SystemGzip.decompress(folder.url("in/a.txt.gz")) == (try folder.read("in/a.txt")))
  }

  @Test func corruptStandardInputIsStatusOne() throws {
    let result = try SqueezeBinary.run(["-t"], input: Array("not gzip at all".utf8))
    #expect(result.status == 1)
    #expect(result.stderrText.contains("(standard input): not in gzip format (bad magic number)"))
  }
}
