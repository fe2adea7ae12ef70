import SqueezeSystem

/// An output being written: a temporary file in the output's folder, created exclusively
/// with mode 0600 or with the output's own final bits (``CreationPermissions``: nobody reads
/// a partial output who could not read the finished one), written, given its metadata,
/// closed, and handed over as a ``Publisher/Request``. Dropped unfinished (any failure), it removes
/// the temporary: no partial output is ever left under any name. The temporary is made,
/// renamed and removed through its folder's descriptor (``TemporaryEntry``), so it is removed
/// even when that folder is moved while the output is written.
final class TemporaryOutput {
  /// The temporary, in the output's folder.
  let temporary: TemporaryEntry
  /// The final location.
  let target: RelativeLocation
  /// The final path, for messages.
  let display: MessagePath
  /// Whether publishing replaces an existing file (one squeeze may replace).
  let replacesExisting: Bool
  /// The open temporary; -1 once closed (or, for an unnamed one, handed over).
  private var descriptor: Int32
  /// Whether ``descriptor`` is this object's to close: false for an unnamed temporary, whose
  /// ``TemporaryEntry`` owns its descriptor until it is linked or removed.
  private let ownsDescriptor: Bool
  /// Bytes written so far.
  private(set) var bytesWritten: Int64 = 0
  private var handedOver = false
  /// The bits the temporary was created with.
  private var createdPermissions: UInt32

  /// Who new files belong to: this process's effective user and group (read once).
  static let owner = (user: ProcessControl.effectiveUserID, group: ProcessControl.effectiveGroupID)

  /// Creates the temporary beside `target` (in its folder, opened through `folders`),
  /// creating missing folders of a mirror with `folderPermissions`.
  ///
  /// - Parameter permissions: the bits to create it with: `0600`, or the output's final bits
  ///   when `open(2)` is known to give exactly those (``CreationPermissions``); `finish`
  ///   then needs no `fchmod`.
  ///   - unnamed: make it without a name (`O_TMPFILE`, ``TemporaryEntry/anonymousFile(in:permissions:)``)
  ///     where the file system allows, so it is linked under its final name when published:
  ///     only for an output that replaces nothing and is never opened again by name.
  /// - Throws: ``FileFailure/cannotCreateOutput(_:_:)``.
  init(
    target: RelativeLocation, display: MessagePath, replacesExisting: Bool, namer: TemporaryNamer,
    folders: FolderHandleCache, folderPermissions: UInt16,
    permissions: UInt32 = CreationPermissions.ownerOnly, unnamed: Bool = false
  ) throws(FileFailure) {
    self.target = target
    self.display = display
    self.replacesExisting = replacesExisting
    var created = permissions
    do {
      let folder: FolderHandle
      do throws(SystemError) {
        folder = try folders.folder(of: target)
      } catch  where error == .noSuchFile && !target.directory.isEmpty {
        try target.createDirectories(permissions: UInt32(folderPermissions & 0o777) | 0o700)
        created = CreationPermissions.ownerOnly
        folder = try folders.folder(of: target)
      }
      if unnamed && !replacesExisting,
        let made = try TemporaryEntry.anonymousFile(in: folder, permissions: created)
      {
        (temporary, descriptor) = made
      } else {
        (temporary, descriptor) = try TemporaryEntry.file(
          in: folder, namer: namer, permissions: created)
      }
    } catch {
      throw .cannotCreateOutput(display.path, error)
    }
    createdPermissions = created
    ownsDescriptor = !temporary.isUnnamed
  }

  deinit {
    if descriptor >= 0 && ownsDescriptor { Descriptor.close(descriptor) }
    if !handedOver { try? temporary.remove() }
  }

  /// Empties the temporary, to write it again from the start.
  ///
  /// - Throws: ``FileFailure/cannotWriteOutput(_:_:)``.
  func rewind() throws(FileFailure) {
    do throws(SystemError) {
      try Descriptor.truncate(descriptor, to: 0)
      try Descriptor.seek(descriptor, to: 0)
    } catch {
      throw .cannotWriteOutput(display.path, error)
    }
    bytesWritten = 0
  }

  /// Appends `bytes`.
  ///
  /// - Throws: ``FileFailure/cannotWriteOutput(_:_:)`` (a full disk, a file-size limit).
  func write(_ bytes: UnsafeRawBufferPointer) throws(FileFailure) {
    do throws(SystemError) {
      try writeAll(bytes, to: descriptor)
    } catch {
      throw .cannotWriteOutput(display.path, error)
    }
    bytesWritten += Int64(bytes.count)
  }

  /// Appends `bytes`.
  ///
  /// - Throws: ``FileFailure/cannotWriteOutput(_:_:)``.
  func write(_ bytes: [UInt8]) throws(FileFailure) {
    do throws(SystemError) {
      try writeAll(bytes, to: descriptor)
    } catch {
      throw .cannotWriteOutput(display.path, error)
    }
    bytesWritten += Int64(bytes.count)
  }

  /// Gives the output `status`'s owner and group (when `copiesOwnership`), its permission
  /// bits (``CreationPermissions/kept(_:keepsOwner:)``: set-user-ID and set-group-ID only
  /// with its owner, after `fchown`, which clears them), and its access time and `modificationTime`
  /// (nanoseconds), as gzip does; closes it; and registers its file system with the
  /// publisher.
  ///
  /// Failing to copy metadata fails the file (gzip only warns): an output or a restored
  /// file under its final name with the wrong mode or time would stay wrong, because the
  /// next run's quick check takes a file with the source's size and time as done, and a
  /// restore takes a file whose time is not the `.gz` file's for one that is not squeeze's
  /// and leaves it alone.
  ///
  /// - Parameters:
  ///   - syncsAfterRename: the request's ``Publisher/Request/syncsAfterRename`` (`--rm`).
  ///   - holdsTemporary: the request's ``Publisher/Request/holdsTemporary`` (a folder is in
  ///     the way).
  /// - Returns: the request to publish it.
  /// - Throws: ``FileFailure/cannotSetMetadata(_:_:_:)`` when `fchown(2)`, `fchmod(2)` or
  ///   `futimens(2)` fails; ``FileFailure/cannotWriteOutput(_:_:)`` when closing reports a
  ///   write error.
  func finish(
    metadataFrom status: FileStatus, modificationTime: Timestamp, copiesOwnership: Bool,
    publisher: Publisher, knownDevice: UInt64? = nil, syncsAfterRename: Bool = false,
    holdsTemporary: Bool = false
  ) throws(FileFailure) -> Publisher.Request {
    // A new file is ours already: change the owner only when the source's differs.
    if copiesOwnership && (status.userID != Self.owner.user || status.groupID != Self.owner.group) {
      try setMetadata(.owner) { () throws(SystemError) in
        try Descriptor.setOwner(descriptor, user: status.userID, group: status.groupID)
      }
    }
    let permissions = CreationPermissions.kept(status.permissions, keepsOwner: copiesOwnership)
    if permissions != createdPermissions {
      try setMetadata(.permissions) { () throws(SystemError) in
        try Descriptor.setPermissions(descriptor, permissions)
      }
    }
    try setMetadata(.times) { () throws(SystemError) in
      try Descriptor.setTimes(descriptor, access: status.accessTime, modification: modificationTime)
    }
    let device: UInt64
    if let knownDevice {
      device = knownDevice
    } else {
      do throws(SystemError) {
        device = try Descriptor.status(descriptor).device
      } catch {
        throw .cannotWriteOutput(display.path, error)
      }
    }
    publisher.registerFileSystem(device, using: descriptor)
    let closing = descriptor
    descriptor = -1
    // An unnamed temporary stays open until it is linked: its entry closes it. A write error
    // the kernel keeps for the close is reported by the publisher's sync (`syncfs` returns
    // the file system's write-back errors) before the link.
    if ownsDescriptor {
      do throws(SystemError) {
        // A write that failed on the way may only be reported here.
        try FileDescriptor(owning: closing).close()
      } catch {
        throw .cannotWriteOutput(display.path, error)
      }
    }
    handedOver = true
    return Publisher.Request(
      temporary: temporary, final: target, replacesExisting: replacesExisting, device: device,
      syncsAfterRename: syncsAfterRename, holdsTemporary: holdsTemporary)
  }

  /// Runs `call` (`fchown`, `fchmod` or `futimens` on the temporary, each retried when a
  /// signal interrupts it).
  ///
  /// - Throws: ``FileFailure/cannotSetMetadata(_:_:_:)`` with `what` and the call's error.
  private func setMetadata(
    _ what: FileFailure.Metadata, _ call: () throws(SystemError) -> Void
  ) throws(FileFailure) {
    do throws(SystemError) {
      try call()
    } catch {
      throw .cannotSetMetadata(display.path, what, error)
    }
  }
}
