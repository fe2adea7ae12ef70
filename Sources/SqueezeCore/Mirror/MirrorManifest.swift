import SqueezeSystem

/// What makes one entry of a mirror the very entry it was: its kind, its inode number, and
/// the file system's handle for it (`name_to_handle_at(2)`), which also holds the inode's
/// generation. Inode numbers are reused at once (on ext4 a link removed and a folder made
/// next get the same number); the generation changes each time, so an entry someone puts
/// where squeeze's was never has squeeze's identity.
struct EntryIdentity: Hashable, Sendable {
  /// The kinds of entry squeeze records.
  enum Kind: UInt8, Sendable {
    /// A regular file (the further names of hard-link groups).
    case file = 0x66  // "f"
    /// A symbolic link.
    case link = 0x6C  // "l"
    /// A folder.
    case folder = 0x64  // "d"
  }

  /// The entry's kind.
  var kind: Kind
  /// Its inode number (`st_ino`).
  var inode: UInt64
  /// The file system's handle: its type (4 bytes, little-endian), then its bytes.
  var handle: [UInt8]

  /// The identity of the entry at `location` (not following a link there or on the way):
  /// opened with `O_PATH | O_NOFOLLOW`, so the kind, inode and handle are all the one
  /// entry's.
  ///
  /// - Returns: nil for an entry of another kind (a device, a pipe).
  /// - Throws: ``SystemError``: `ENOENT` when absent, `ELOOP` for a link on the way,
  ///   `EOPNOTSUPP` when the file system gives no handles.
  static func of(_ location: RelativeLocation) throws(SystemError) -> EntryIdentity? {
    let opened = try FileDescriptor.open(
      location.relativePath, in: location.base, flags: [.pathOnly, .noFollow],
      symlinks: .never)
    let status = try opened.status()
    let kind: Kind
    switch status.kind {
    case .regular: kind = .file
    case .symbolicLink: kind = .link
    case .directory: kind = .folder
    default: return nil
    }
    let (type, bytes) = try Descriptor.fileHandle(opened.rawValue)
    let typeBytes = withUnsafeBytes(of: UInt32(bitPattern: type).littleEndian) { Array($0) }
    return EntryIdentity(kind: kind, inode: status.inode, handle: typeBytes + bytes)
  }
}

/// Why a mirror's manifest cannot be read or written.
enum ManifestError: Error, Equatable, Sendable, CustomStringConvertible {
  /// Reading it failed.
  case cannotRead(SystemError)
  /// A file of that name is there that squeeze did not write (its first line is not the
  /// manifest's): it is never replaced.
  case notAManifest
  /// Its lines or its closing checksum do not add up (a disk fault, an edit by hand).
  case damaged(String)
  /// Something other than a regular file has its name.
  case inTheWay(FileKind)
  /// A step of writing it failed.
  case cannotWrite(String, SystemError)

  var description: String {
    switch self {
    case .cannotRead(let error): "cannot read the manifest: \(error)"
    case .notAManifest: "not a manifest squeeze wrote; not replaced"
    case .damaged(let reason): "damaged manifest: \(reason)"
    case .inTheWay(let kind): "\(kind) is where the manifest goes; not replaced"
    case .cannotWrite(let step, let error): "cannot \(step) the manifest: \(error)"
    }
  }
}

/// The record of the folders, symbolic links and further hard-link names squeeze made in a
/// mirror, kept at the mirror's top (``name``), so `--delete` removes only what squeeze
/// itself put there: a link or folder is pruned only when the manifest lists it at that
/// path with the identity it has now (``EntryIdentity``). Outputs need no record: their
/// gzip header names their source (RFC 1952 FNAME).
///
/// Each run that writes into the mirror (compressing with `-o`) records, once its writes
/// are on disk, the entries it made or found at the places where it mirrors a source of
/// the same kind (those are the mirror's; a folder or link a user put anywhere else never
/// is), together with the entries already listed that still have their identity. The file
/// is written whole under a temporary name, synced, renamed over the old one and the
/// folder synced (only when it changed: an up-to-date run writes nothing), so a crash
/// leaves the old manifest or the new one. Whatever the order of events, an entry is listed
/// only after squeeze made or checked it, and an entry that was replaced since has another
/// identity: a crash can leave an entry of squeeze's unlisted (kept, and listed by the
/// next run while its source is there), never a foreign entry listed.
///
/// The format is text, one line each: `squeeze manifest 1`, then per entry its kind (`d`,
/// `l`, `f`), inode and handle in hexadecimal and its path below the mirror (bytes outside
/// `!`…`~` and `%` written `%HH`), then `end <count> <FNV-1a 64 of everything before>`.
struct MirrorManifest: Equatable, Sendable {
  /// The file's name at the mirror's top. It has no compressed suffix and is not a squeeze
  /// temporary's shape; restores and `--delete` leave it alone.
  static let name: RawPath = ".squeeze-manifest"

  /// The first line.
  static let header = Array("squeeze manifest 1\n".utf8)

  /// The entries, by path below the mirror.
  var entries: [RawPath: EntryIdentity] = [:]

  /// What is at the manifest's place.
  enum Reading: Equatable, Sendable {
    /// No manifest: a mirror made before squeeze recorded its entries, or a new one.
    case absent
    /// A manifest, read whole.
    case read(MirrorManifest)
    /// A manifest that cannot be used, or another entry with its name.
    case unusable(ManifestError)

    /// The entries listed; none when there is no usable manifest.
    var entries: [RawPath: EntryIdentity] {
      if case .read(let manifest) = self { return manifest.entries }
      return [:]
    }
  }

  /// Reads the manifest of the mirror open as `mirror`.
  static func read(in mirror: Int32) -> Reading {
    let opened: FileDescriptor
    do {
      opened = try FileDescriptor.open(name, in: mirror, flags: .source)
    } catch  where error == .noSuchFile {
      return .absent
    } catch  where error == .symbolicLinkLoop {
      return .unusable(.inTheWay(.symbolicLink))
    } catch {
      return .unusable(.cannotRead(error))
    }
    var bytes: [UInt8] = []
    do throws(SystemError) {
      let status = try opened.status()
      guard status.kind == .regular else { return .unusable(.inTheWay(status.kind)) }
      var chunk = [UInt8](repeating: 0, count: 64 * 1024)
      while true {
        let count = try opened.readFully(into: &chunk, at: Int64(bytes.count))
        bytes += chunk[..<count]
        if count < chunk.count { break }
      }
    } catch {
      return .unusable(.cannotRead(error))
    }
    do {
      return .read(try decode(bytes))
    } catch {
      return .unusable(error)
    }
  }

  /// The manifest's bytes.
  func encoded() -> [UInt8] {
    var bytes = Self.header
    for path in entries.keys.sorted() {
      guard let identity = entries[path] else { continue }
      bytes.append(identity.kind.rawValue)
      bytes.append(UInt8(ascii: " "))
      bytes += Array(String(identity.inode, radix: 16).utf8)
      bytes.append(UInt8(ascii: " "))
      for byte in identity.handle { Self.appendHex(byte, to: &bytes) }
      bytes.append(UInt8(ascii: " "))
      for byte in path.bytes {
        if byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: "%") {
          bytes.append(byte)
        } else {
          bytes.append(UInt8(ascii: "%"))
          Self.appendHex(byte, to: &bytes)
        }
      }
      bytes.append(UInt8(ascii: "\n"))
    }
    let checksum = FNV1a.hash64(bytes)
    bytes += Array("end \(entries.count) \(String(checksum, radix: 16))\n".utf8)
    return bytes
  }

  private static let hexDigits = Array("0123456789abcdef".utf8)

  private static func appendHex(_ byte: UInt8, to bytes: inout [UInt8]) {
    bytes.append(hexDigits[Int(byte >> 4)])
    bytes.append(hexDigits[Int(byte & 0xF)])
  }

  /// The value of one hexadecimal digit, or nil.
  private static func hexValue(_ digit: UInt8) -> UInt8? {
    switch digit {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
    default: nil
    }
  }

  /// Reads a manifest from its bytes.
  ///
  /// - Throws: ``ManifestError/notAManifest`` when the first line is not the manifest's,
  ///   ``ManifestError/damaged(_:)`` when a line, the count or the checksum is wrong.
  static func decode(_ bytes: [UInt8]) throws(ManifestError) -> MirrorManifest {
    guard bytes.starts(with: header) else { throw .notAManifest }
    guard bytes.last == UInt8(ascii: "\n") else { throw .damaged("its last line is cut short") }
    // The last line is the closing one; the checksum covers everything before it.
    let body = bytes.dropLast()
    let closingStart = (body.lastIndex(of: UInt8(ascii: "\n")) ?? -1) + 1
    let closing = String(decoding: bytes[closingStart..<(bytes.count - 1)], as: UTF8.self)
      .split(separator: " ")
    guard closing.count == 3, closing[0] == "end", let count = Int(closing[1]),
      let checksum = UInt64(closing[2], radix: 16)
    else { throw .damaged("no closing line") }
    guard FNV1a.hash64(bytes[..<closingStart]) == checksum else {
      throw .damaged("its checksum does not match")
    }
    var manifest = MirrorManifest()
    let lines = bytes[header.count..<closingStart].split(separator: UInt8(ascii: "\n"))
    for (number, line) in lines.enumerated() {
      guard let (path, identity) = parse(line) else {
        throw .damaged("line \(number + 2) is not an entry")
      }
      manifest.entries[path] = identity
    }
    guard manifest.entries.count == count, lines.count == count else {
      throw .damaged("it lists \(lines.count) entries, its last line says \(count)")
    }
    return manifest
  }

  /// One entry line: kind, inode, handle, path.
  private static func parse(_ line: ArraySlice<UInt8>) -> (RawPath, EntryIdentity)? {
    let fields = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
    guard fields.count == 4, fields[0].count == 1,
      let kind = EntryIdentity.Kind(rawValue: fields[0][fields[0].startIndex]),
      let inode = UInt64(String(decoding: fields[1], as: UTF8.self), radix: 16),
      fields[2].count % 2 == 0, fields[2].count >= 8, !fields[3].isEmpty
    else { return nil }
    var handle: [UInt8] = []
    var digits = fields[2].makeIterator()
    while let high = digits.next(), let low = digits.next() {
      guard let high = hexValue(high), let low = hexValue(low) else { return nil }
      handle.append(high << 4 | low)
    }
    var path: [UInt8] = []
    var bytes = fields[3].makeIterator()
    while let byte = bytes.next() {
      guard byte == UInt8(ascii: "%") else {
        path.append(byte)
        continue
      }
      guard let high = bytes.next().flatMap(hexValue), let low = bytes.next().flatMap(hexValue)
      else { return nil }
      path.append(high << 4 | low)
    }
    guard !path.contains(0), path.first != UInt8(ascii: "/") else { return nil }
    return (RawPath(bytes: path), EntryIdentity(kind: kind, inode: inode, handle: handle))
  }

  /// True when the entry at `path` below the mirror open as `mirror` is listed here with
  /// the identity it has now; false when it is not listed, or is gone (or has a symbolic
  /// link on its way).
  ///
  /// - Throws: ``SystemError`` when a listed entry cannot be examined (`EACCES`, `EIO`,
  ///   `ENOMEM`): whether it is squeeze's is not known.
  func lists(_ path: RawPath, in mirror: Int32) throws(SystemError) -> Bool {
    guard let recorded = entries[path] else { return false }
    let location = MirrorPlan.location(ofFolder: path, base: mirror)
    do {
      return try EntryIdentity.of(location) == recorded
    } catch  where [.noSuchFile, .notADirectory, .symbolicLinkLoop, .crossDevice].contains(error) {
      return false
    }
  }

  /// The entries that still are what was recorded: one that is gone (or has a symbolic
  /// link on its way, or another identity) is dropped; one that cannot be examined now
  /// (permissions) is kept.
  func stillThere(in mirror: Int32) -> MirrorManifest {
    var kept = MirrorManifest()
    for (path, recorded) in entries {
      do throws(SystemError) {
        if try EntryIdentity.of(MirrorPlan.location(ofFolder: path, base: mirror)) == recorded {
          kept.entries[path] = recorded
        }
      } catch  where [.noSuchFile, .notADirectory, .symbolicLinkLoop, .crossDevice].contains(error)
      {
        continue
      } catch {
        kept.entries[path] = recorded
      }
    }
    return kept
  }

  /// Writes the manifest into the mirror open as `mirror`: a temporary written, the file
  /// system committed (`syncfs`, which also puts on disk every entry the manifest lists),
  /// the temporary renamed over the old manifest, and the file system committed again. On a
  /// file system whose `syncfs` commits nothing (FUSE:
  /// ``Descriptor/syncFileSystemIsHollow(_:)``) the temporary is fsynced before its rename
  /// and the mirror folder after it instead.
  ///
  /// - Throws: ``ManifestError/cannotWrite(_:_:)`` naming the step that failed (the
  ///   temporary is removed then).
  func write(in mirror: Int32, namer: TemporaryNamer) throws(ManifestError) {
    let temporary: TemporaryEntry
    let raw: Int32
    do {
      (temporary, raw) = try TemporaryEntry.file(
        in: FolderHandle(borrowing: mirror), namer: namer, permissions: 0o600)
    } catch {
      throw .cannotWrite("create a temporary for", error)
    }
    let descriptor = FileDescriptor(owning: raw)
    let hollow = Descriptor.syncFileSystemIsHollow(mirror)
    var step = "write"
    do throws(SystemError) {
      try descriptor.writeAll(encoded())
      step = "sync"
      if hollow { try descriptor.sync() }
      step = "close"
      try descriptor.close()
      step = "sync"
      if !hollow { try Descriptor.syncFileSystem(mirror) }
      step = "rename into place"
      try temporary.rename(to: Self.name, .replace)
      step = "sync the folder of"
      if hollow { try Descriptor.sync(mirror) } else { try Descriptor.syncFileSystem(mirror) }
    } catch {
      try? temporary.remove()
      throw .cannotWrite(step, error)
    }
  }
}
