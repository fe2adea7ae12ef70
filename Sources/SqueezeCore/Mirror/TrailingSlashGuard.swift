import SqueezeSystem

/// Guards a mirror against the rsync mistake: updating it without the trailing slash it was
/// made with. `squeeze -o /backup/photos /home/me/photos/` puts the folder's contents at the
/// mirror's top; run again as `squeeze -o /backup/photos /home/me/photos` (no slash), the
/// argument names the folder itself (``ArgumentMapping``, as rsync's and cp's), which would
/// start a second copy in `/backup/photos/photos/` and leave the first one to go stale.
///
/// When `M/<name>` does not exist and M's top already holds squeeze outputs of the
/// argument's top-level files, or folders named like its top-level folders that hold such
/// outputs, the run stops before doing anything (status 1) and says to add the trailing
/// slash, or to create `M/<name>` to ask for a second copy. Restores are guarded the same
/// way: files restored from the argument's top-level `.gz` files (same modification time)
/// already at R's top.
enum TrailingSlashGuard {
  /// What the guard found: the argument named without its trailing slash, and one entry
  /// its contents left at the mirror's top.
  struct Finding: Sendable {
    var argument: RawPath
    var evidence: RawPath
    var mirror: RawPath

    /// The message for the user.
    var message: String {
      let slashed = argument.trimmingTrailingSlashes.displayString + "/"
      return
        "'\(mirror.displayString)' holds a mirror of the contents of '\(slashed)' ('\(evidence.displayString)' is there); without the trailing slash, '\(argument.displayString)' goes to '\(mirror.trimmingTrailingSlashes.appending(argument.lastComponent).displayString)', a second copy. Name it with a trailing slash ('\(slashed)') to keep updating this mirror, or create that folder to start a new copy there; nothing was done"
    }
  }

  /// How many candidate entries are examined per argument at most.
  static let examinedEntries = 64

  /// The first folder argument, named without a trailing slash, whose contents the mirror
  /// already holds at its top, or nil.
  static func check(
    list: FileList, settings: FileSettings, bases: BaseDirectories
  ) -> Finding? {
    guard case .mirror(let baseIndex, let mirrorPath) = settings.plan.destination, baseIndex >= 0
    else { return nil }
    let base = bases.descriptor(baseIndex)
    guard let top = try? FileDescriptor.open(".", in: base, flags: .folder),
      let entries = try? DirectoryReader.entries(of: top.rawValue)
    else { return nil }
    let present = Set(entries.map(\.name))
    for (index, directory) in list.directories.enumerated() where directory.parent < 0 {
      let root = list.roots[Int(directory.root)]
      guard !root.isFileArgument, !root.destination.isEmpty, !present.contains(root.destination)
      else { continue }
      let looker = Looker(
        list: list, settings: settings, base: base, top: Int32(index), present: present)
      if let evidence = looker.evidence() {
        return Finding(
          argument: root.argument, evidence: settings.plan.mirrorDisplay(evidence),
          mirror: mirrorPath)
      }
    }
    return nil
  }

  /// Looks for one argument's contents at the mirror's top.
  private struct Looker {
    let list: FileList
    let settings: FileSettings
    let base: Int32
    let top: Int32
    let present: Set<RawPath>

    /// An entry of the argument's contents at the mirror's top, as a path below the mirror,
    /// or nil.
    func evidence() -> RawPath? {
      var examined = 0
      for (index, file) in list.files.enumerated() where file.directory == top {
        guard let name = settings.plan.outputName(for: list.name(of: file)),
          present.contains(name)
        else { continue }
        if matches(RelativeLocation(base: base, directory: "", name: name), file: index) {
          return name
        }
        examined += 1
        if examined >= TrailingSlashGuard.examinedEntries { return nil }
      }
      for (index, directory) in list.directories.enumerated() where directory.parent == top {
        let name = list.name(offset: directory.nameOffset, length: directory.nameLength)
        guard present.contains(name), let found = evidence(inFolder: name, of: Int32(index)) else {
          continue
        }
        return found  // one folder holding outputs is enough
      }
      return nil
    }

    /// An output of a file of listed folder `directory` in the mirror's folder `name`.
    private func evidence(inFolder name: RawPath, of directory: Int32) -> RawPath? {
      var examined = 0
      for (index, file) in list.files.enumerated() where file.directory == directory {
        guard let output = settings.plan.outputName(for: list.name(of: file)) else { continue }
        if matches(RelativeLocation(base: base, directory: name, name: output), file: index) {
          return name.appending(output)
        }
        examined += 1
        if examined >= TrailingSlashGuard.examinedEntries { return nil }
      }
      return nil
    }

    /// True when the entry at `location` is what file `index` became when its folder was
    /// named with the trailing slash: its output (compressing), or the file restored from it
    /// (restoring).
    private func matches(_ location: RelativeLocation, file index: Int) -> Bool {
      let file = list.files[index]
      switch settings.operation {
      case .compress:
        return ExistingOutput.namesSource(location, sourceName: list.name(of: file))
      case .decompress, .test:
        guard let status = try? location.entryStatus(), status.kind == .regular else {
          return false
        }
        return status.modificationTime == file.modificationTime
      }
    }
  }
}
