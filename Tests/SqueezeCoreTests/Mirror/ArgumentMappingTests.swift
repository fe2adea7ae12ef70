import SqueezeSystem
import Testing

@testable import SqueezeCore

/// Arguments map into a mirror as rsync's and cp's do.
@Suite struct ArgumentMappingTests {
  @Test(arguments: [
    (argument: "a/x", destination: "x"),
    (argument: "/home/me/photos", destination: "photos"),
    (argument: "x", destination: "x"),
    (argument: "a/x/", destination: ""),
    (argument: "a/x//", destination: ""),
    (argument: "a/x/.", destination: ""),
    (argument: ".", destination: ""),
    (argument: "..", destination: ""),
    (argument: "a/..", destination: ""),
    (argument: "/", destination: ""),
    (argument: "a/.x", destination: ".x"),
  ])
  func foldersLandUnderTheirNameUnlessTheirContentsAreNamed(argument: String, destination: String) {
    #expect(
      ArgumentMapping.destination(of: RawPath(argument), isFolder: true) == RawPath(destination))
  }

  @Test func filesAndLinksLandAtTheTop() {
    #expect(ArgumentMapping.destination(of: "a/f.txt", isFolder: false) == "")
  }
}
