import Glibc
import TestSupport

@testable import SqueezeCore
@testable import SqueezeSystem

/// A temporary folder for publisher tests: open as a base descriptor, with a namer for the
/// temporaries made in it. Closes the descriptor when released.
final class PublishingFolder: Sendable {
  let folder: TemporaryFolder
  /// The folder's descriptor, the base of every request's final name.
  let base: Int32
  let namer = TemporaryNamer()

  /// - Throws: `SystemError` when the new folder cannot be opened.
  init(_ name: String) throws {
    folder = TemporaryFolder(name)
    base = try FileDescriptor.open(RawPath(folder.path), flags: .folder, symlinks: .always)
      .release()
  }

  deinit { close(base) }

  /// A request to publish a new temporary in the folder as `name` (its file system
  /// registered with `publisher`).
  func request(_ name: String, for publisher: Publisher) throws -> Publisher.Request {
    try OutcomeDeliveryTests.request(
      RawPath(name), in: FolderHandle(borrowing: base), base: base, namer: namer,
      publisher: publisher)
  }

  /// The regular files in the folder (``TemporaryFolder/files(in:)``).
  var files: [String] { TemporaryFolder.files(in: folder.path) }
}
