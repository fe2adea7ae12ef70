import SqueezeSystem

/// A listed file opened for reading, checked to still be the file discovery listed.
struct SourceFile {
  /// The open descriptor (owned by the caller once returned).
  let descriptor: Int32
  /// Its status right after opening.
  let status: FileStatus
  /// Where it is.
  let location: RelativeLocation

  /// Opens file `index` of `list` without following a link that replaced it (`ELOOP`) and
  /// without blocking on a FIFO that did (`O_NONBLOCK`), and checks it is the regular file
  /// that was listed (same device and inode). `name` is the file's name when the caller has
  /// it already (one path less to build).
  ///
  /// A file argument of `-t` or `-l` read through a link, or a pipe or device
  /// (``FileList/Root/isFollowedArgument``), is opened following links and may be a pipe or
  /// device: then, once something can be read from it (a pipe's writer may come later;
  /// `stop` ends the wait), it is read blocking, front to back.
  ///
  /// - Throws: ``FileFailure``: vanished, became a link, not regular, replaced, unreadable;
  ///   ``FileFailure/interrupted`` when `stop` is set while waiting for a pipe.
  static func open(
    index: Int, list: FileList, bases: BaseDirectories, symlinks: SymlinkPolicy = .never,
    name: RawPath? = nil, stop: AtomicFlag? = nil
  ) throws(FileFailure) -> SourceFile {
    let file = list.files[index]
    // The root's fields read in place: a copy of the root (`list.root(of:)`) retained and
    // released its paths for every file.
    let root = list.rootIndex(of: file)
    let followsArgument = list.roots[root].isFollowedArgument
    let location = RelativeLocation(
      base: bases.descriptor(list.roots[root].base),
      directory: list.relativePath(ofDirectory: file.directory),
      name: name ?? list.name(of: file), symlinks: followsArgument ? .always : symlinks)
    let descriptor: Int32
    do throws(SystemError) {
      descriptor = try location.open(flags: .source).release()
    } catch {
      switch error {
      case .noSuchFile: throw .vanished
      case .symbolicLinkLoop: throw .becameSymbolicLink
      default: throw .cannotOpen(error)
      }
    }
    let status: FileStatus
    do throws(SystemError) {
      status = try Descriptor.status(descriptor)
    } catch {
      Descriptor.close(descriptor)
      throw .cannotRead(error)
    }
    let special = status.kind == .fifo || status.kind == .characterDevice
    guard status.kind == .regular || (special && followsArgument) else {
      Descriptor.close(descriptor)
      throw .notRegularFile(status.kind)
    }
    if special {
      while !Descriptor.waitUntilReadable(descriptor, milliseconds: 100) {
        if stop?.isSet == true {
          Descriptor.close(descriptor)
          throw .interrupted
        }
      }
      Descriptor.clearStatusFlags(descriptor)
    }
    guard status.device == file.device && status.inode == file.inode else {
      Descriptor.close(descriptor)
      throw .replaced
    }
    return SourceFile(descriptor: descriptor, status: status, location: location)
  }
}
