import SqueezeSystem
import Testing

@testable import SqueezeCore

/// What each file's settings decide, and what they cost to ask.
@Suite struct FileSettingsTests {
  /// Settings beside the sources, or in a mirror that wraps compressed names.
  static func settings(wrapping: Bool) -> FileSettings {
    var settings = FileSettings(
      plan: OutputPlan(
        destination: wrapping ? .mirror(base: -1, path: "M") : .besideSources,
        naming: .addSuffix(".gz")))
    settings.wrapsCompressedNames = wrapping
    return settings
  }

  /// Beside the sources no name is stored, and the name is not even made (each file's
  /// outcome asks); in a mirror a compressed name is stored and a plain one deflated.
  @Test(arguments: [
    (wrapping: false, name: "a.gz", stores: false, namesMade: 0),
    (wrapping: false, name: "a.txt", stores: false, namesMade: 0),
    (wrapping: true, name: "a.gz", stores: true, namesMade: 1),
    (wrapping: true, name: "a.txt", stores: false, namesMade: 1),
  ])
  func storesMakesTheNameOnlyWhereNamesAreWrapped(
    wrapping: Bool, name: String, stores: Bool, namesMade: Int
  ) {
    let settings = Self.settings(wrapping: wrapping)
    var made = 0
    func makeName() -> RawPath {
      made += 1
      return RawPath(name)
    }
    #expect(settings.stores(makeName()) == stores)
    #expect(made == namesMade)
  }
}
