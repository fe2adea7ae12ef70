import Testing

@testable import SqueezeCore

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

  @Test func aNameOfThisProcessIsLive() {
    let namer = TemporaryNamer()
    #expect(namer.owner(of: namer.next()) == .live)
  }
}
