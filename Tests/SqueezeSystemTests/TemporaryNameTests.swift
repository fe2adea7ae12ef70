import Testing

@testable import SqueezeSystem

@Suite struct TemporaryNameTests {
  @Test func namesCountInHexadecimalAndAreRecognizedAsThisRunsOwn() {
    let identity = ProcessIdentity(
      hostHash: "0badcafe", bootID: "12345678", pidNamespace: "f0000001", pid: 0x2a,
      startTicks: 0x1f)
    let namer = TemporaryNamer(identity: identity)
    let names = (1...17).map { _ in namer.next() }
    #expect(names[0] == RawPath(".squeeze-0badcafe-12345678-f0000001-2a-1f-1.tmp"))
    #expect(names[9] == RawPath(".squeeze-0badcafe-12345678-f0000001-2a-1f-a.tmp"))
    #expect(names[15] == RawPath(".squeeze-0badcafe-12345678-f0000001-2a-1f-10.tmp"))
    #expect(Set(names).count == names.count)
    for name in names {
      #expect(TemporaryNamer.isTemporary(name))
    }
  }

  @Test(arguments: [
    ".squeeze-my notes.tmp", ".squeeze-notes.tmp", ".squeeze-.tmp", ".squeeze-1-2-3-4-5.tmp",
    ".squeeze-1-2-3-4-5-6-7.tmp", ".squeeze-0BADCAFE-1-2-3-4-5.tmp", ".squeeze-1-2--4-5-6.tmp",
    ".squeeze-1-2-3-4-5-.tmp", ".squeeze-1-2-3-4-5-6.tmp.gz", "x.squeeze-1-2-3-4-5-6.tmp",
    ".squeeze-" + String(repeating: "f", count: 80) + "-1-2-3-4-5.tmp",
  ])
  func aNameOfAnotherShapeIsNotATemporary(name: String) {
    #expect(!TemporaryNamer.isTemporary(RawPath(name)))
  }

  @Test func theLongestNameOfTheShapeIsATemporary() {
    let fields = [8, 8, 16, 8, 16, 16].map { String(repeating: "f", count: $0) }
    let name = ".squeeze-" + fields.joined(separator: "-") + ".tmp"
    #expect(name.utf8.count == TemporaryNamer.maximumLength)
    #expect(TemporaryNamer.isTemporary(RawPath(name)))
    #expect(TemporaryNamer.isTemporary(RawPath(".squeeze-1-2-3-4-5-6.tmp")))
  }

  @Test func aNameOfThisProcessIsLive() {
    let namer = TemporaryNamer()
    #expect(namer.owner(of: namer.next()) == .live)
  }
}
