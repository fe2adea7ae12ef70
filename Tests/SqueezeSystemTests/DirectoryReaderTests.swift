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
    try Self.createFiles(named: names, in: folder)
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

  /// A listing sorted by name is in the byte-wise order of paths (``RawPath``'s `<`), and
  /// finds each of its names and no other: names that share their first eight bytes and
  /// more (the part the entries' keys do not hold), that end where another goes on, that
  /// hold bytes of 0x80 and above (unsigned) and the lowest byte a name may hold (0x01).
  @Test func aSortedListingIsInPathOrderAndFindsItsNames() {
    let alphabet: [UInt8] = [0x01, UInt8(ascii: "a"), UInt8(ascii: "b"), 0x7F, 0x80, 0xFF]
    var generator = SystemRandomNumberGenerator()
    var names = Set<[UInt8]>()
    for _ in 0..<400 {
      let shared = Array(
        repeating: UInt8(ascii: "a"), count: Int.random(in: 0...12, using: &generator))
      let tail = (0..<Int.random(in: 0...4, using: &generator)).map { _ in
        alphabet.randomElement(using: &generator)!
      }
      if !(shared + tail).isEmpty { names.insert(shared + tail) }
    }
    for name in ["abcdefgh", "abcdefghi", "abcdefg", "abcdefgi", "abcdefgh\u{1}", "b", "B"] {
      names.insert(Array(name.utf8))
    }
    var listing = DirectoryListing()
    for name in names.shuffled(using: &generator) {
      name.withUnsafeBytes { listing.append(name: $0, type: DirectoryReader.regularFile) }
    }
    listing.sortByName()
    let paths = names.map { RawPath(bytes: $0) }
    #expect(listing.entries.map { listing.name(of: $0) } == paths.sorted())
    #expect(paths.allSatisfy { listing.contains($0) })
    let absent = [
      "abcdefghh", "abcdefgh\u{2}", "aaaaaaaaaaaaaaaaa", "c", "\u{1}\u{1}\u{1}\u{1}\u{1}",
    ]
    .map { RawPath($0) }.filter { !paths.contains($0) }
    #expect(absent.allSatisfy { !listing.contains($0) })
    #expect(
      listing.hasName(endingIn: RawPath(bytes: [0xFF])) == paths.contains { $0.hasSuffix([0xFF]) })
    #expect(!listing.hasName(endingIn: "abcdefgh"), "a name is not longer than itself")
  }

  /// A listing read from a folder holds each name with the key the reference gives it, and
  /// sorted is in the byte-wise order of paths: names of 1 to 12 bytes (a key loaded past a
  /// short name keeps only the name's bytes, whatever follows it in the kernel's records),
  /// sharing their first eight bytes or not, holding bytes from 0x01 to 0xFF.
  @Test func aFolderReadAndSortedIsInPathOrderWithItsKeys() throws {
    let folder = TemporaryFolder("directory-listing")
    let alphabet: [UInt8] = [0x01, UInt8(ascii: "."), UInt8(ascii: "a"), 0x7F, 0x80, 0xFF]
    var generator = SystemRandomNumberGenerator()
    var names = Set<[UInt8]>()
    while names.count < 300 {
      let shared = Array("abcdefgh".utf8.prefix(Int.random(in: 0...8, using: &generator)))
      let tail = (0..<Int.random(in: 0...4, using: &generator)).map { _ in
        alphabet.randomElement(using: &generator)!
      }
      let name = shared + tail
      if !name.isEmpty && name != [UInt8(ascii: ".")] && name != Array("..".utf8) {
        names.insert(name)
      }
    }
    try Self.createFiles(named: names, in: folder)
    let directory = open(folder.path, O_RDONLY | O_DIRECTORY)
    try #require(directory >= 0)
    defer { close(directory) }
    var listing = try DirectoryReader.listing(of: directory)
    let keys = listing.entries.map { entry in
      listing.names.withUnsafeBytes {
        DirectoryListing.key(
          of: UnsafeRawBufferPointer(
            rebasing: $0[Int(entry.offset)..<(Int(entry.offset) + Int(entry.length))]))
      }
    }
    #expect(listing.entries.map(\.key) == keys)
    listing.sortByName()
    #expect(
      listing.entries.map { listing.name(of: $0) } == names.map { RawPath(bytes: $0) }.sorted())
  }

  /// Creates an empty file for each of `names` (raw bytes, not necessarily UTF-8) in `folder`.
  static func createFiles<Names: Sequence<[UInt8]>>(named names: Names, in folder: TemporaryFolder)
    throws
  {
    for name in names {
      let path = Array(folder.path.utf8) + [UInt8(ascii: "/")] + name + [0]
      let descriptor = path.withUnsafeBufferPointer { bytes in
        bytes.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_CREAT | O_WRONLY, 0o600) }
      }
      try #require(descriptor >= 0, "cannot create \(name)")
      close(descriptor)
    }
  }
}

extension DirectoryListing {
  /// Adds an entry named by `name` (no NUL inside) of type `type`, as the reader files the
  /// names it reads: a listing of any names, for the tests of keys and order.
  fileprivate mutating func append(name: UnsafeRawBufferPointer, type: UInt8) {
    let offset = UInt32(names.count)
    name.withMemoryRebound(to: UInt8.self) { names.append(contentsOf: $0) }
    names.append(0)
    entries.append(
      Entry(key: Self.key(of: name), offset: offset, length: UInt16(name.count), type: type))
  }
}
