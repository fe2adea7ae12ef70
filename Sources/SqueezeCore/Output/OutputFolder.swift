import Glibc

/// The `-o` folder: created when missing (with its parents, as `mkdir -p`), opened once, and
/// checked writable by creating and removing a temporary, so a read-only or full output
/// stops the run at once with one message instead of one error per file (spec §3).
enum OutputFolder {
  /// Why the output folder cannot be used.
  struct Unusable: Error, CustomStringConvertible {
    var path: RawPath
    var action: String
    var cause: SystemError
    var description: String { "cannot \(action) output folder '\(path.displayString)': \(cause)" }
  }

  /// Prepares `path` for writing.
  ///
  /// - Returns: its index in `bases` and its identity (to keep discovery out of it).
  /// - Throws: ``Unusable`` naming the step that failed.
  static func prepare(
    _ path: RawPath, bases: BaseDirectories, namer: TemporaryNamer
  ) throws(Unusable) -> (base: Int, identity: FileIdentity) {
    do {
      try RelativeLocation(base: AT_FDCWD, directory: path, name: "").createDirectories()
    } catch {
      throw Unusable(path: path, action: "create", cause: error)
    }
    let base: Int
    do {
      base = try bases.open(path)
    } catch {
      throw Unusable(path: path, action: "open", cause: error)
    }
    let descriptor = bases.descriptor(base)
    let identity: FileIdentity
    do {
      identity = FileIdentity(try FileStatus.of(".", in: descriptor))
      let probe = RelativeLocation(base: descriptor, directory: "", name: namer.next())
      let file = try probe.open(flags: O_WRONLY | O_CREAT | O_EXCL, permissions: 0o600)
      try file.close()
      try probe.remove()
    } catch {
      throw Unusable(path: path, action: "write to", cause: error)
    }
    return (base, identity)
  }
}
