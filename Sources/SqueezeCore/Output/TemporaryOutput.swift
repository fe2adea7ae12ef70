import SqueezeSystem

/// An output being written: a temporary file in the output's folder, created exclusively
/// with mode 0600 or with the output's own final bits (``CreationPermissions``: nobody reads
/// a partial output who could not read the finished one), written, given its metadata,
/// closed, and handed over as a ``Publisher/Request``. Dropped unfinished (any failure), it removes
/// the temporary: no partial output is ever left under any name.
final class TemporaryOutput {
  /// The temporary's location.
  let temporary: RelativeLocation
  /// The final location.
  let target: RelativeLocation
  /// The final path, for messages.
  let display: MessagePath
  /// Whether publishing replaces an existing file (one squeeze may replace).
  let replacesExisting: Bool
  /// The open temporary; -1 once closed.
  private var descriptor: Int32
  /// Bytes written so far.
  private(set) var bytesWritten: Int64 = 0
  private var handedOver = false
  /// The bits the temporary was created with.
  private var createdPermissions: UInt32

  /// Who new files belong to: this process's effective user and group (read once).
  static let owner = (user: ProcessControl.effectiveUserID, group: ProcessControl.effectiveGroupID)

  /// Creates the temporary beside `target`, creating missing folders of a mirror with
  /// `folderPermissions`.
  ///
  /// - Parameter permissions: the bits to create it with: `0600`, or the output's final bits
  ///   when `open(2)` is known to give exactly those (``CreationPermissions``); `finish`
  ///   then needs no `fchmod`.
  /// - Throws: ``FileFailure/cannotCreateOutput(_:_:)``.
  init(
    target: RelativeLocation, display: MessagePath, replacesExisting: Bool, namer: TemporaryNamer,
    folderPermissions: UInt16, permissions: UInt32 = CreationPermissions.ownerOnly
  ) throws(FileFailure) {
    self.target = target
    self.display = display
    self.replacesExisting = replacesExisting
    temporary = target.sibling(named: namer.next())
    createdPermissions = permissions
    let flags: OpenFlags = [.writeOnly, .create, .exclusive, .noControllingTerminal]
    do {
      do throws(SystemError) {
        descriptor = try temporary.open(flags: flags, permissions: permissions).release()
      } catch  where error == .noSuchFile && !temporary.directory.isEmpty {
        try temporary.createDirectories(permissions: UInt32(folderPermissions & 0o777) | 0o700)
        createdPermissions = CreationPermissions.ownerOnly
        descriptor = try temporary.open(flags: flags, permissions: createdPermissions).release()
      }
    } catch {
      throw .cannotCreateOutput(display.path, error)
    }
  }

  deinit {
    if descriptor >= 0 { Descriptor.close(descriptor) }
    if !handedOver { try? temporary.remove() }
  }

  /// Appends `bytes`.
  ///
  /// - Throws: ``FileFailure/cannotWriteOutput(_:_:)`` (a full disk, a file-size limit).
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
  /// bits without setuid and setgid, and its access time and `modificationTime`
  /// (nanoseconds), as gzip does; closes it; and registers its file system with the
  /// publisher. Failures to copy metadata are not fatal (gzip only warns): a wrong time only
  /// makes the next run treat the output as stale.
  ///
  /// - Returns: the request to publish it.
  /// - Throws: ``FileFailure/cannotWriteOutput(_:_:)`` when closing reports a write error.
  func finish(
    metadataFrom status: FileStatus, modificationTime: Timestamp, copiesOwnership: Bool,
    publisher: Publisher, knownDevice: UInt64? = nil
  ) throws(FileFailure) -> Publisher.Request {
    // A new file is ours already: change the owner only when the source's differs.
    if copiesOwnership && (status.userID != Self.owner.user || status.groupID != Self.owner.group) {
      try? Descriptor.setOwner(descriptor, user: status.userID, group: status.groupID)
    }
    let permissions = UInt32(status.permissions & 0o1777)
    if permissions != createdPermissions { try? Descriptor.setPermissions(descriptor, permissions) }
    try? Descriptor.setTimes(descriptor, access: status.accessTime, modification: modificationTime)
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
    do throws(SystemError) {
      // A write that failed on the way may only be reported here.
      try FileDescriptor(owning: closing).close()
    } catch {
      throw .cannotWriteOutput(display.path, error)
    }
    handedOver = true
    return Publisher.Request(
      temporary: temporary, final: target, replacesExisting: replacesExisting, device: device,
      syncsAfterRename: false)
  }
}
