import CSystem
import Glibc

/// An open folder that squeeze makes temporaries in: an `O_PATH` descriptor that keeps
/// naming the same folder wherever it is moved or renamed while the run works.
///
/// A temporary is made, renamed into place and removed relative to this descriptor
/// (`openat`, `renameat2`, `unlinkat`), never by a path from the run's base again, so a
/// folder moved away mid-run (and a symbolic link put in its place) still has its
/// temporaries removed, and nothing is ever renamed through the link.
package final class FolderHandle: Sendable {
  /// The folder's descriptor (`O_PATH | O_DIRECTORY`), or a base folder the run keeps open.
  package let descriptor: Int32
  /// True when this handle opened ``descriptor`` and closes it when released.
  private let owned: Bool

  /// Uses `descriptor`, which the caller keeps open for longer than this handle lives (a
  /// base folder of the run): it is not closed.
  package init(borrowing descriptor: Int32) {
    self.descriptor = descriptor
    owned = false
  }

  private init(owning descriptor: Int32) {
    self.descriptor = descriptor
    owned = true
  }

  deinit {
    if owned { close(descriptor) }
  }

  /// Opens the folder holding `location` (its ``RelativeLocation/directory`` below its
  /// base), following links on the way only as its policy allows (by default none:
  /// `RESOLVE_NO_SYMLINKS`). The base itself is borrowed, not opened again.
  ///
  /// - Throws: ``SystemError`` from `openat2(2)`: `ENOENT` when the folder is missing,
  ///   `ELOOP` for a link on the way, `ENOTDIR`.
  package static func folder(of location: RelativeLocation) throws(SystemError) -> FolderHandle {
    if location.directory.isEmpty { return FolderHandle(borrowing: location.base) }
    let opened = try FileDescriptor.open(
      location.directory, in: location.base, flags: [.pathOnly, .directory],
      symlinks: location.symlinks.forFolders)
    return FolderHandle(owning: opened.release())
  }

  /// The entry `name` of this folder as a location (for the `*at` helpers of
  /// ``RelativeLocation``); valid while this handle lives.
  package func location(of name: RawPath) -> RelativeLocation {
    RelativeLocation(base: descriptor, directory: "", name: name)
  }
}

/// The folders a run's outputs are written in, each opened once while it is in use
/// (``FolderHandle``), so an output's temporary costs no more system calls than one made
/// by path: files go folder by folder, and the outputs of one folder share its handle.
///
/// A handle stays open while a temporary made in it lives (the publisher's queue bounds how
/// many wait: the publisher's capacity), and the last ``keptOpen`` handles opened stay open a
/// little longer, for the next file of the same folder. A handle neither holds is closed
/// when the cache next opens a folder, or at ``closeAll()``. The outputs of a folder moved
/// mid-run follow the folder the run opened: the one whose outputs it inspected before the
/// work started.
///
/// The cache holds its handles strongly and tells an unused one by its reference count
/// (`isKnownUniquelyReferenced` under the cache's lock, exact because no handle is handed
/// out except under that lock), not by weak references: a weak reference moves an object's
/// counts to a side table, after which every retain and release of it (about seven of each
/// a file) takes the runtime's slow path.
package final class FolderHandleCache: Sendable {
  private struct Key: Hashable {
    var base: Int32
    var directory: RawPath
    var symlinks: SymlinkPolicy

    /// Hashes the path's length and its last 8 bytes, not every byte: a new folder's key is
    /// hashed several times (looked up, entered, removed, moved by another's removal), and
    /// the few folders in use at once rarely share both. Equal keys still compare every byte.
    func hash(into hasher: inout Hasher) {
      hasher.combine(base)
      hasher.combine(symlinks)
      let bytes = directory.bytes
      hasher.combine(bytes.count)
      var tail: UInt64 = 0
      for byte in bytes.suffix(8) { tail = tail << 8 | UInt64(byte) }
      hasher.combine(tail)
    }
  }
  private struct State {
    /// The handles open, by folder. A handle held by nothing else (no temporary, not in
    /// ``recent``, not ``last``) is closed when the next folder is opened.
    var entries: [Key: FolderHandle] = [:]
    /// The last handles opened, kept open for a while, oldest first.
    var recent: [FolderHandle] = []
    /// The folder asked for last and its handle: files come folder by folder, so most asks
    /// are answered by comparing the folder's path (the same array, as a rule), not hashing
    /// it byte by byte.
    var last: (key: Key, handle: FolderHandle)? = nil

    /// Takes out of ``entries`` every handle that only the cache holds, to be closed by the
    /// caller once the lock is released.
    mutating func takeUnused() -> [FolderHandle] {
      var unused: [Key] = []
      var index = entries.startIndex
      while index != entries.endIndex {
        // Exact: only the lock's holder can hand out a new reference to a handle, and a
        // reference released elsewhere meanwhile only makes a handle look used until the
        // next look.
        if isKnownUniquelyReferenced(&entries.values[index]) {
          unused.append(entries.keys[index])
        }
        entries.formIndex(after: &index)
      }
      return unused.compactMap { entries.removeValue(forKey: $0) }
    }
  }
  private let state = Lock(State())

  /// How many recently opened folders stay open without a temporary in them.
  package static let keptOpen = 4

  package init() {}

  /// Lets go of every handle, once the run's temporaries are all renamed or removed: each
  /// closes now, or when the last temporary still made in it goes. Handles that nothing
  /// uses are otherwise closed only when a later folder is opened, so without this the last
  /// folders' handles would stay open until the process ends. A later ask opens the folder
  /// again.
  package func closeAll() {
    var released = State()
    state.withLock { swap(&$0, &released) }
    // `released` ends here, after the lock: the handles only it held close now.
  }

  /// How many handles the cache holds open now, used or not (for the tests).
  package var openCount: Int { state.withLock { $0.entries.count } }

  /// The folder holding `location`, opened as ``FolderHandle/folder(of:)`` opens it, or the
  /// handle already open for it.
  ///
  /// - Throws: ``SystemError`` from opening it.
  package func folder(of location: RelativeLocation) throws(SystemError) -> FolderHandle {
    if location.directory.isEmpty { return FolderHandle(borrowing: location.base) }
    let key = Key(base: location.base, directory: location.directory, symlinks: location.symlinks)
    let found = state.withLock { state -> FolderHandle? in
      if let last = state.last, last.key == key { return last.handle }
      guard let open = state.entries[key] else { return nil }
      state.last = (key, open)
      return open
    }
    if let found { return found }
    let opened = try FolderHandle.folder(of: location)
    // Handles no longer used are closed after the lock, never inside it.
    var unused: [FolderHandle] = []
    let handle = state.withLock { state -> FolderHandle in
      if let raced = state.entries[key] { return raced }
      state.entries[key] = opened
      state.last = (key, opened)
      state.recent.append(opened)
      if state.recent.count > Self.keptOpen { state.recent.removeFirst() }
      unused = state.takeUnused()
      return opened
    }
    unused.removeAll()
    return handle
  }
}

/// The temporaries of a run that exist now (or are being made): each one's folder and name.
///
/// Every temporary squeeze makes (an output being written, a link or folder about to replace
/// an entry, the archive marker, the mirror's manifest) is entered here before it is made
/// and leaves once it has been renamed into place or removed. A second stop signal ends the
/// run at once, without the partial summary, but first calls ``removeAll()``: whatever the
/// run was doing, none of its temporaries outlives it.
package final class LiveTemporaries: Sendable {
  private struct State {
    /// The temporaries, by the number ``enter(_:in:)`` gave them.
    var entries: [UInt64: (folder: FolderHandle, name: RawPath)] = [:]
    /// Temporaries entered whose making (`openat`, `symlinkat`, `mkdirat`, `linkat`) has not
    /// returned yet.
    var beingMade = 0
    /// Set by ``removeAll()``: nothing new may be made.
    var closed = false
    /// The next number to give.
    var next: UInt64 = 0
  }
  private let state = Lock(State())

  /// How long ``removeAll()`` waits for temporaries being made to exist, in seconds: each
  /// is one system call, so only a hung file system makes it wait this long.
  package static let makingWaitSeconds = 2.0

  package init() {}

  /// How many temporaries exist now (or are being made).
  package var count: Int { state.withLock { $0.entries.count } }

  /// Enters the temporary `name` in `folder`, before it is made.
  ///
  /// - Returns: its number, for `made(_:)` and ``forget(_:)``.
  /// - Throws: ``SystemError`` `ECANCELED` once ``removeAll()`` has run: the run is ending.
  package func enter(_ name: RawPath, in folder: FolderHandle) throws(SystemError) -> UInt64 {
    let number = state.withLock { state -> UInt64? in
      guard !state.closed else { return nil }
      state.next += 1
      state.entries[state.next] = (folder, name)
      state.beingMade += 1
      return state.next
    }
    guard let number else { throw SystemError(code: ECANCELED) }
    return number
  }

  /// Says the making of temporary `number` returned; when it failed, the temporary is
  /// forgotten.
  package func made(_ number: UInt64, succeeded: Bool) {
    state.withLock { state in
      state.beingMade -= 1
      if !succeeded { state.entries[number] = nil }
    }
  }

  /// Forgets temporary `number`: it has been renamed into place or removed.
  package func forget(_ number: UInt64) {
    _ = state.withLock { $0.entries.removeValue(forKey: number) }
  }

  /// Removes every temporary there is, relative to the folder it was made in, and lets no
  /// new one be made. Waits up to ``makingWaitSeconds`` for temporaries being made at that
  /// moment, so none appears after the removal.
  ///
  /// - Returns: how many were removed.
  @discardableResult
  package func removeAll() -> Int {
    state.withLock { $0.closed = true }
    let deadline = MonotonicClock.now() + Self.makingWaitSeconds
    var entries: [(folder: FolderHandle, name: RawPath)] = []
    while true {
      let (busy, snapshot) = state.withLock { state in
        (state.beingMade > 0, Array(state.entries.values))
      }
      entries = snapshot
      if !busy || MonotonicClock.now() > deadline { break }
      usleep(1000)
    }
    var removed = 0
    for entry in entries where TemporaryEntry.unlink(entry.name, in: entry.folder.descriptor) {
      removed += 1
    }
    state.withLock { $0.entries = [:] }
    return removed
  }
}

/// A file, symbolic link or folder squeeze made under a temporary name (``TemporaryNamer``),
/// with the open folder it was made in (``FolderHandle``).
///
/// Everything done to it afterwards (writing, renaming into place, removing) goes through
/// that folder's descriptor, which reaches it wherever the folder has been moved: a
/// temporary is removed with `unlinkat(folder, name)`, never by a path that may by then lead
/// elsewhere or through a symbolic link. It stays entered in the run's ``LiveTemporaries``
/// until it is renamed into place or removed, so a second stop signal removes it too.
///
/// An output file may instead be made without a name (``anonymousFile(in:permissions:)``,
/// `O_TMPFILE`): it is then not entered among the live temporaries (it has nothing to
/// remove), renaming it links it under its final name, and removing it closes it.
package struct TemporaryEntry: Sendable {
  /// The folder it was made in.
  package let folder: FolderHandle
  /// Its temporary name in ``folder``; empty for an unnamed file.
  package let name: RawPath
  /// Its number in ``temporaries``.
  private let number: UInt64
  /// The run's live temporaries.
  private let temporaries: LiveTemporaries?
  /// The open file when it was made without a name, else nil.
  private let anonymous: AnonymousFile?

  private init(
    folder: FolderHandle, name: RawPath, number: UInt64, temporaries: LiveTemporaries?,
    anonymous: AnonymousFile? = nil
  ) {
    self.folder = folder
    self.name = name
    self.number = number
    self.temporaries = temporaries
    self.anonymous = anonymous
  }

  /// Whether it was made without a name (`O_TMPFILE`).
  package var isUnnamed: Bool { anonymous != nil }

  /// The temporary as a location relative to its folder's descriptor.
  package var location: RelativeLocation { folder.location(of: name) }

  /// The entry `other` of the temporary's folder (where it is renamed to).
  package func sibling(named other: RawPath) -> RelativeLocation { folder.location(of: other) }

  /// Enters a new temporary name in `folder`, runs `make` with the folder's descriptor and
  /// the name, and says whether it succeeded.
  private static func make(
    in folder: FolderHandle, namer: TemporaryNamer,
    _ make: (Int32, UnsafePointer<CChar>) -> Int32
  ) throws(SystemError) -> (TemporaryEntry, Int32) {
    let name = namer.next()
    let number = try namer.live.enter(name, in: folder)
    var result: Int32 = -1
    do throws(SystemError) {
      result = try name.withCString { (cName) throws(SystemError) in
        try retryingOnInterrupt { make(folder.descriptor, cName) }
      }
    } catch {
      namer.live.made(number, succeeded: false)
      throw error
    }
    namer.live.made(number, succeeded: true)
    return (
      TemporaryEntry(folder: folder, name: name, number: number, temporaries: namer.live), result
    )
  }

  /// Creates a new temporary file in `folder`, exclusively (`O_CREAT | O_EXCL`), open for
  /// writing.
  ///
  /// - Parameters:
  ///   - folder: the folder to make it in.
  ///   - namer: names it, and records it among the run's live temporaries.
  ///   - permissions: the mode to create it with (before the umask).
  /// - Returns: the temporary and its open descriptor, which the caller owns and closes.
  /// - Throws: ``SystemError`` from `openat(2)`; `ECANCELED` when the run is ending.
  package static func file(
    in folder: FolderHandle, namer: TemporaryNamer, permissions: mode_t
  ) throws(SystemError) -> (entry: TemporaryEntry, descriptor: Int32) {
    try make(in: folder, namer: namer) { folder, name in
      openat(
        folder, name, O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC,
        permissions)
    }
  }

  /// Creates an unnamed file in `folder` (``AnonymousFile``), open for reading and writing.
  ///
  /// - Parameters:
  ///   - folder: the folder to make it in (and later link it in).
  ///   - permissions: the mode to create it with (before the umask).
  /// - Returns: the temporary and its descriptor, which the temporary owns: it is closed by
  ///   ``rename(to:_:)`` or ``remove()``, never by the caller. Nil when the folder's file
  ///   system or the kernel cannot make or link such a file: make a named one instead.
  /// - Throws: ``SystemError`` from `openat(2)`.
  package static func anonymousFile(
    in folder: FolderHandle, permissions: mode_t
  ) throws(SystemError) -> (entry: TemporaryEntry, descriptor: Int32)? {
    guard let file = try AnonymousFile.make(in: folder.descriptor, permissions: permissions)
    else { return nil }
    return (
      TemporaryEntry(
        folder: folder, name: RawPath(""), number: 0, temporaries: nil, anonymous: file),
      file.descriptor
    )
  }

  /// Creates a temporary symbolic link to `target` in `folder` (the target stored as
  /// given, never resolved).
  ///
  /// - Throws: ``SystemError`` from `symlinkat(2)`; `ECANCELED` when the run is ending.
  package static func symbolicLink(
    to target: RawPath, in folder: FolderHandle, namer: TemporaryNamer
  ) throws(SystemError) -> TemporaryEntry {
    try target.withCString { (cTarget) throws(SystemError) in
      try make(in: folder, namer: namer) { folder, name in symlinkat(cTarget, folder, name) }.0
    }
  }

  /// Creates a temporary folder in `folder`, with `permissions` (before the umask).
  ///
  /// - Throws: ``SystemError`` from `mkdirat(2)`; `ECANCELED` when the run is ending.
  package static func directory(
    in folder: FolderHandle, namer: TemporaryNamer, permissions: mode_t
  ) throws(SystemError) -> TemporaryEntry {
    try make(in: folder, namer: namer) { folder, name in mkdirat(folder, name, permissions) }.0
  }

  /// Makes a temporary name in `folder` for the file at `existing` (`linkat`, a link at
  /// `existing` not followed).
  ///
  /// - Throws: ``SystemError`` from opening `existing`'s folder or from `linkat(2)`;
  ///   `ECANCELED` when the run is ending.
  package static func hardLink(
    of existing: RelativeLocation, in folder: FolderHandle, namer: TemporaryNamer
  ) throws(SystemError) -> TemporaryEntry {
    try existing.withFolder { (fromFolder, fromName) throws(SystemError) in
      try fromName.withCString { (cFrom) throws(SystemError) in
        try make(in: folder, namer: namer) { folder, name in
          linkat(fromFolder, cFrom, folder, name, 0)
        }.0
      }
    }
  }

  /// Opens the temporary (a file), not following a link.
  ///
  /// - Throws: ``SystemError`` from `openat(2)`.
  package func open(flags: OpenFlags) throws(SystemError) -> FileDescriptor {
    if let anonymous { return try anonymous.reopen(flags: flags.rawValue) }
    let descriptor = try name.withCString { (cName) throws(SystemError) in
      try retryingOnInterrupt {
        openat(folder.descriptor, cName, flags.rawValue | O_NOFOLLOW | O_CLOEXEC)
      }
    }
    return FileDescriptor(owning: descriptor)
  }

  /// Makes the temporary file's bytes and metadata durable (`fsync(2)`): through its own
  /// descriptor when it is unnamed, else by opening it (not following a link).
  ///
  /// - Throws: ``SystemError`` from `openat(2)` or `fsync(2)`.
  package func sync() throws(SystemError) {
    if let anonymous {
      _ = try retryingOnInterrupt { fsync(anonymous.descriptor) }
      return
    }
    try open(flags: .readOnly).sync()
  }

  /// Makes the entries of the folder the temporary was made in durable (`fsync(2)` of the
  /// folder, opened read-only through the folder's descriptor): after a rename, on file
  /// systems whose `syncfs` commits nothing (``Descriptor/syncFileSystemIsHollow(_:)``).
  ///
  /// - Throws: ``SystemError`` from `openat(2)` or `fsync(2)`.
  package func syncFolder() throws(SystemError) {
    let opened = try FileDescriptor.open(
      RawPath("."), in: folder.descriptor, flags: .folder, symlinks: .never)
    try opened.sync()
  }

  /// Renames the temporary to `finalName` in the same folder (`renameat2` on the folder's
  /// descriptor). After `.replace` and `.noReplace` it is no longer a temporary; after
  /// `.exchange` its name holds the entry that was at `finalName`, still to be removed.
  ///
  /// An unnamed file is linked under `finalName` instead (`linkat(2)`), which never
  /// replaces: only `.noReplace` is allowed for it.
  ///
  /// - Throws: ``SystemError`` from `renameat2(2)` or `linkat(2)` (`EEXIST` with
  ///   `.noReplace`); `EINVAL` for an unnamed file with another mode.
  package func rename(to finalName: RawPath, _ mode: RelativeLocation.RenameMode)
    throws(SystemError)
  {
    // Reached through the optional in place: binding it (`if let`) copied the optional
    // through its value witnesses, and destroyed the copy, for every output published.
    if anonymous != nil {
      guard mode == .noReplace else { throw SystemError(code: EINVAL) }
      try anonymous?.link(as: finalName, in: folder.descriptor)
      return
    }
    try location.rename(to: sibling(named: finalName), mode)
    if mode != .exchange { temporaries?.forget(number) }
  }

  /// Removes the temporary (a file or link, or an empty folder), relative to the folder it
  /// was made in. One already gone counts as removed.
  ///
  /// - Throws: ``SystemError`` from `unlinkat(2)` (`ENOTEMPTY` for a folder with entries).
  package func remove() throws(SystemError) {
    if let anonymous {
      anonymous.close()
      return
    }
    do throws(SystemError) {
      do throws(SystemError) {
        try location.removeEntry()
      } catch  where error.code == EISDIR {
        try location.removeEntry(folder: true)
      }
    } catch  where error.code == ENOENT {
      // Gone already: what removing it was for.
    }
    temporaries?.forget(number)
  }

  /// Removes the entry `name` of the open folder `folder`: a file or link, or else an empty
  /// folder.
  ///
  /// - Returns: true when it was removed.
  package static func unlink(_ name: RawPath, in folder: Int32) -> Bool {
    name.withCString { cName in
      if unlinkat(folder, cName, 0) == 0 { return true }
      guard errno == EISDIR else { return false }
      return unlinkat(folder, cName, AT_REMOVEDIR) == 0
    }
  }
}
