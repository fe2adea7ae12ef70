import Glibc

/// The `-o` folder: created when missing (with its parents, as `mkdir -p`), opened once, and
/// checked writable (`faccessat`, without writing anything), so an output that cannot be
/// created, is read-only or not ours to write stops the run at once with one message instead
/// of one error per file (spec §3). A full disk is reported per file, as space may free up.
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
    _ path: RawPath, bases: BaseDirectories
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
      // Writable and searchable for this process (effective ids; EROFS on a read-only
      // mount), checked without writing anything, so an up-to-date re-run changes nothing.
      _ = try retryingOnInterrupt { faccessat(descriptor, ".", W_OK | X_OK, AT_EACCESS) }
    } catch {
      throw Unusable(path: path, action: "write to", cause: error)
    }
    return (base, identity)
  }
}
