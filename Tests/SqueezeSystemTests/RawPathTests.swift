import Testing

@testable import SqueezeSystem

@Suite struct RawPathTests {
  @Test(arguments: [
    (bytes: Array("plain.txt".utf8), shown: "plain.txt"),
    (bytes: Array("café Übersicht.txt".utf8), shown: "café Übersicht.txt"),
    (bytes: [0x61, 0xFF, 0x62], shown: "a\\xffb"),
    (bytes: [0x61, 0x0A, 0x62], shown: "a\\x0ab"),
    (bytes: Array("back\\slash".utf8), shown: "back\\\\slash"),
    (bytes: [0xC3], shown: "\\xc3"),  // truncated sequence
    (bytes: [0xED, 0xA0, 0x80], shown: "\\xed\\xa0\\x80"),  // a surrogate
    (bytes: [0xC0, 0xAF], shown: "\\xc0\\xaf"),  // overlong '/'
    (bytes: [0xF0, 0x9F, 0x98, 0x80], shown: "😀"),
  ])
  func displaysNamesLosslessly(bytes: [UInt8], shown: String) {
    let path = RawPath(bytes: bytes)
    #expect(path.displayString == shown)
    #expect(RawPath(displayString: shown) == path)
  }

  /// C1 control characters (U+0080 to U+009F, valid UTF-8) are control characters too, and
  /// are shown escaped byte by byte: U+009B is CSI, which a terminal may take as the start
  /// of an escape sequence. A no-break space (U+00A0) is printable and shown as it is.
  @Test func c1ControlCharactersAreEscaped() {
    let cases: [([UInt8], String)] = [
      ([0x61, 0xC2, 0x9B, 0x33, 0x31, 0x6D], "a\\xc2\\x9b31m"),
      ([0xC2, 0x80], "\\xc2\\x80"),
      ([0xC2, 0x9F], "\\xc2\\x9f"),
      ([0xC2, 0xA0], "\u{A0}"),
    ]
    for (bytes, shown) in cases {
      let path = RawPath(bytes: bytes)
      #expect(path.displayString == shown)
      #expect(RawPath(displayString: shown) == path)
    }
  }

  /// The bidirectional controls (U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069) are
  /// shown escaped byte by byte, as C1 is: `evil\u{202E}txt.exe` would show as
  /// `evilexe.txt` on a terminal. Their neighbours (U+200D, U+202F, U+2065, U+206A) and the
  /// same bytes cut short are shown as other text or bytes are.
  @Test(arguments: [
    (bytes: Array("evil\u{202E}txt.exe".utf8), shown: "evil\\xe2\\x80\\xaetxt.exe"),
    (bytes: Array("\u{200E}".utf8), shown: "\\xe2\\x80\\x8e"),
    (bytes: Array("\u{200F}".utf8), shown: "\\xe2\\x80\\x8f"),
    (bytes: Array("\u{202A}".utf8), shown: "\\xe2\\x80\\xaa"),
    (bytes: Array("\u{202D}".utf8), shown: "\\xe2\\x80\\xad"),
    (bytes: Array("\u{2066}".utf8), shown: "\\xe2\\x81\\xa6"),
    (bytes: Array("a\u{2069}b".utf8), shown: "a\\xe2\\x81\\xa9b"),
    (
      bytes: Array("\u{200D}\u{202F}\u{2065}\u{206A}".utf8),
      shown: "\u{200D}\u{202F}\u{2065}\u{206A}"
    ),
    (bytes: [0xE2, 0x80], shown: "\\xe2\\x80"),
  ])
  func bidirectionalControlsAreEscaped(bytes: [UInt8], shown: String) {
    let path = RawPath(bytes: bytes)
    #expect(path.displayString == shown)
    #expect(RawPath(displayString: shown) == path)
  }

  @Test func everyByteStringRoundTripsThroughItsDisplay() {
    var state: UInt32 = 1
    for length in 0..<200 {
      var bytes: [UInt8] = []
      for _ in 0..<length {
        state = state &* 1_103_515_245 &+ 12345
        bytes.append(UInt8(truncatingIfNeeded: state >> 16))
      }
      let path = RawPath(bytes: bytes)
      #expect(RawPath(displayString: path.displayString) == path)
    }
  }

  @Test(arguments: [
    (path: "a/b/c.txt", last: "c.txt", parent: "a/b"),
    (path: "c.txt", last: "c.txt", parent: "."),
    (path: "/c", last: "c", parent: "/"),
    (path: "a/b/", last: "b", parent: "a"),
    (path: "/", last: "/", parent: "/"),
  ])
  func splitsPathsAsDirnameAndBasenameDo(path: String, last: String, parent: String) {
    #expect(RawPath(path).lastComponent == RawPath(last))
    #expect(RawPath(path).parent == RawPath(parent))
  }

  @Test func slicesLongPathsBelowPathMax() {
    let component = String(repeating: "d", count: 200)
    let path = RawPath(Array(repeating: component, count: 60).joined(separator: "/"))
    let slices = FileDescriptor.longPathSlices(path)
    #expect(slices.count > 1)
    #expect(slices.allSatisfy { $0.count < FileDescriptor.pathSliceLimit })
    #expect(slices.map(\.displayString).joined(separator: "/") == path.displayString)
  }

  @Test(arguments: [
    (directory: "", name: "f.gz"),
    (directory: "a/b", name: "f.gz"),
    (directory: "a/b/", name: "f.gz"),
    (directory: "/", name: "f"),
    (directory: String(repeating: "x", count: 3000), name: "long name"),
  ])
  func joinsCStringsAsAppendingDoes(directory: String, name: String) {
    let joined = RawPath.withJoinedCString(RawPath(directory), RawPath(name)) { cPath in
      String(cString: cPath)
    }
    #expect(joined == RawPath(directory).appending(RawPath(name)).displayString)
    #expect(RawPath(name).withCString { String(cString: $0) } == name)
  }
}
