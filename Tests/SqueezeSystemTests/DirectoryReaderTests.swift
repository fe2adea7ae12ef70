import Foundation
import Glibc
import TestSupport
import Testing

@testable import SqueezeSystem

@Suite struct DirectoryReaderTests {
  /// Every name but `.` and `..` is listed, byte for byte: names that start with dots, are
  /// made of dots, are one byte long, are the longest Linux allows (255 bytes, whose record
  /// ends with the name's NUL), or hold bytes that are not UTF-8.
  @Test func everyNameButDotAndDotDotIsListedExactly() throws {
    let folder = TemporaryFolder("directory-reader")
    let names: [[UInt8]] = [
      Array(".hidden".utf8), Array("..x".utf8), Array("...".utf8), Array("a".utf8),
      Array(".".utf8) + Array("a".utf8), [0x2E, 0xFF], [0xC3, 0x28, 0x2E, 0x2E],
      Array(repeating: UInt8(ascii: "n"), count: 255),
      Array(repeating: UInt8(ascii: "."), count: 7),
    ]
    for name in names {
      let path = Array(folder.path.utf8) + [UInt8(ascii: "/")] + name + [0]
      let descriptor = path.withUnsafeBufferPointer { bytes in
        bytes.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_CREAT | O_WRONLY, 0o600) }
      }
      try #require(descriptor >= 0, "cannot create \(name)")
      close(descriptor)
    }
    try folder.makeFolder("..folder")
    let directory = open(folder.path, O_RDONLY | O_DIRECTORY)
    try #require(directory >= 0)
    defer { close(directory) }
    let entries = try DirectoryReader.entries(of: directory)
    #expect(
      entries.map(\.name.bytes).sorted { $0.lexicographicallyPrecedes($1) }
        == (names + [Array("..folder".utf8)]).sorted { $0.lexicographicallyPrecedes($1) })
    #expect(entries.first { $0.name.bytes == Array("..folder".utf8) }?.type == UInt8(DT_DIR))
    #expect(entries.first { $0.name.bytes == Array("a".utf8) }?.type == DirectoryReader.regularFile)
  }
}
