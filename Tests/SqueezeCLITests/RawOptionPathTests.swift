import Foundation
import Glibc
import TestSupport
import Testing

/// Option values that name files are bytes end to end: `-o`, `-S`, `--task-log` and
/// `timeline -o` with names that are not UTF-8 create and read exactly those names.
@Suite struct RawOptionPathTests {
  /// Bytes that are not UTF-8 (a lone continuation byte, 0xFE, 0xFF).
  static let notUTF8: [UInt8] = [0x80, 0xFE, 0xFF]

  /// `folder`'s path followed by `/` and `name`, as bytes.
  static func path(_ folder: String, _ name: [UInt8]) -> [UInt8] {
    Array(folder.utf8) + [UInt8(ascii: "/")] + name
  }

  /// The names in the folder at `path` (bytes), `.` and `..` left out.
  static func names(_ path: [UInt8]) -> Set<[UInt8]> {
    guard
      let stream = (path + [0]).withUnsafeBufferPointer({ buffer in
        buffer.withMemoryRebound(to: CChar.self) { opendir($0.baseAddress!) }
      })
    else { return [] }
    defer { closedir(stream) }
    var names: Set<[UInt8]> = []
    while let entry = readdir(stream) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
      if name != [46] && name != [46, 46] { names.insert(name) }
    }
    return names
  }

  @Test func aMirrorFolderThatIsNotUTF8IsCreatedWithItsBytes() throws {
    let folder = TemporaryFolder("raw-output")
    try folder.write("in/a.txt", text: "alpha")
    let mirror = Array("mirror".utf8) + Self.notUTF8
    let result = try SqueezeBinary.run(rawArguments: [
      Array("-o".utf8), Self.path(folder.path, mirror), Array(folder.url("in/").utf8),
    ])
    #expect(result.signal == nil && result.status == 0, "\(result.stderrText)")
    #expect(Self.names(Array(folder.path.utf8)) == [Array("in".utf8), mirror])
    #expect(Self.names(Self.path(folder.path, mirror)) == [Array("a.txt.gz".utf8)])
    // Restored from the same folder named with an attached value.
    let back = Array("back".utf8) + Self.notUTF8
    let restored = try SqueezeBinary.run(rawArguments: [
      Array("-d".utf8), Array("--output=".utf8) + Self.path(folder.path, back),
      Self.path(folder.path, mirror) + [UInt8(ascii: "/")],
    ])
    #expect(restored.signal == nil && restored.status == 0, "\(restored.stderrText)")
    #expect(Self.names(Self.path(folder.path, back)) == [Array("a.txt".utf8)])
  }

  @Test func aSuffixThatIsNotUTF8IsWrittenAndRestoredWithItsBytes() throws {
    let folder = TemporaryFolder("raw-suffix")
    try folder.write("in/a.txt", text: "alpha")
    let suffix = Array(".z".utf8) + Self.notUTF8
    let compressed = try SqueezeBinary.run(rawArguments: [
      Array("-S".utf8), suffix, Array(folder.url("in").utf8),
    ])
    #expect(compressed.signal == nil && compressed.status == 0, "\(compressed.stderrText)")
    let output = Array("a.txt".utf8) + suffix
    #expect(Self.names(Array(folder.url("in").utf8)) == [Array("a.txt".utf8), output])
    try FileManager.default.removeItem(atPath: folder.url("in/a.txt"))
    let restored = try SqueezeBinary.run(rawArguments: [
      Array("-d".utf8), Array("-S".utf8) + suffix, Array(folder.url("in").utf8),
    ])
    #expect(restored.signal == nil && restored.status == 0, "\(restored.stderrText)")
    #expect(try folder.read("in/a.txt") == Array("alpha".utf8))
  }

  @Test func aTaskLogAndATimelineThatAreNotUTF8AreWrittenWithTheirBytes() throws {
    let folder = TemporaryFolder("raw-log")
    try folder.write("in/a.txt", text: "alpha")
    let log = Array("log".utf8) + Self.notUTF8 + Array(".jsonl".utf8)
    let run = try SqueezeBinary.run(rawArguments: [
      Array("--task-log".utf8), Self.path(folder.path, log), Array(folder.url("in").utf8),
    ])
    #expect(run.signal == nil && run.status == 0, "\(run.stderrText)")
    #expect(Self.names(Array(folder.path.utf8)).contains(log), "the log under its own bytes")
    let picture = Array("picture".utf8) + Self.notUTF8 + Array(".svg".utf8)
    let drawn = try SqueezeBinary.run(rawArguments: [
      Array("timeline".utf8), Self.path(folder.path, log), Array("-o".utf8),
      Self.path(folder.path, picture),
    ])
    #expect(drawn.signal == nil && drawn.status == 0, "\(drawn.stderrText)")
    #expect(Self.names(Array(folder.path.utf8)) == [Array("in".utf8), log, picture])
    #expect(drawn.stderrText.contains("picture\\x80\\xfe\\xff.svg"), "shown with escapes")
  }
}
