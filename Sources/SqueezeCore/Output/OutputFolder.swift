import SqueezeSystem

/// The `-o` folder: created when missing (with its parents, as `mkdir -p`), opened once, and
/// checked writable (`faccessat`, without writing anything), so an output that cannot be
/// created, is read-only or not ours to write stops the run at once with one message instead
/// of one error per file (with status 74 when its file system has no room for it). A full
/// disk later, writing the outputs, stops the run at its first output (``FullDisk``).
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
  /// - Parameter ownerMayNeedAccess: an argument's contents go to the folder's top (`a/x/`),
  ///   so the folder mirrors that source folder and carries its permission bits: when they
  ///   leave its owner without `rwx` (a `0555` source), squeeze, being the owner, gives
  ///   itself `rwx` while it works (the bits are set back once the work is done), as for
  ///   every folder of the mirror.
  /// - Returns: its index in `bases` and its identity (to keep discovery out of it).
  /// - Throws: ``Unusable`` naming the step that failed.
  static func prepare(
    _ path: RawPath, bases: BaseDirectories, ownerMayNeedAccess: Bool = false
  ) throws(Unusable) -> (base: Int, identity: FileIdentity) {
    do {
      try RelativeLocation(
        base: Descriptor.currentDirectory, directory: path, name: "", symlinks: .always
      )
      .createDirectories()
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
      let status = try FileStatus.of(".", in: descriptor)
      identity = FileIdentity(status)
      if ownerMayNeedAccess && status.userID == ProcessControl.effectiveUserID
        && status.permissions & 0o700 != 0o700
      {
        try Descriptor.setPermissions(descriptor, status.permissions | 0o700)
      }
      // Writable and searchable for this process (effective ids; EROFS on a read-only
      // mount), checked without writing anything, so an up-to-date re-run changes nothing.
      try Descriptor.checkWritableFolder(descriptor)
    } catch {
      throw Unusable(path: path, action: "write to", cause: error)
    }
    return (base, identity)
  }
}
