import SqueezeGzip
import SqueezeSystem

/// One folder's listing, read without touching the run's list: what ``Discovery`` records
/// from it, in the order it records it.
///
/// Reading a folder needs only its argument's open folder and the walk's options, so several
/// folders can be read at once on different threads (``ParallelListing``) and recorded in walk
/// order afterwards; a serial walk reads and records each folder in turn. What depends on the
/// folders listed before (a file or folder reached a second time, a link loop) is decided when
/// the scan is recorded, in walk order.
struct FolderScan: Sendable {
  /// An entry's name: its place in ``listing`` (``name(_:)`` makes it a path).
  typealias Name = DirectoryListing.Entry

  /// One entry's outcome. Plain values only (a name's place, a status, an index into
  /// ``messages`` or ``linkTargets``), so that storing, copying and freeing the entries of a
  /// folder costs nothing per entry.
  enum Entry: Sendable, BitwiseCopyable {
    /// A regular file to take (unless the recording finds it listed already).
    case file(Name, FileStatus)
    /// A symbolic link to store as a link in a mirror (`-o`), with its target (an index
    /// into ``linkTargets``).
    case link(Name, target: Int, FileStatus)
    /// A subfolder to walk (unless the recording finds it listed already, or a loop).
    case subfolder(Name, FileStatus)
    /// An entry left out, and why.
    case skipped(Name, SkipReason)
    /// An entry that could not be read, and why (an index into ``messages``): a failure.
    case failed(Name, cause: Int)
    /// A word about an entry that is not a failure (a dangling link; a followed link that
    /// leads outside its argument), an index into ``messages``.
    case warned(Name, cause: Int)
  }

  /// What reading a folder needs besides its path: the same for every folder of an argument.
  ///
  /// A class, shared by every folder's reading: as a struct it was copied for each folder,
  /// a retain and a release of each of the options' arrays and sets, about 800 instructions
  /// a folder.
  final class Context: Sendable {
    let options: DiscoveryOptions
    let namer: TemporaryNamer
    /// The argument's open folder, which folder paths are relative to.
    let base: Int32
    /// The argument as given, which the paths shown to the user start with.
    let argument: RawPath
    /// The argument's file system (`--one-file-system`).
    let rootDevice: UInt64
    /// The argument's canonical path (`--follow-symlinks` only), to tell links that lead
    /// outside it.
    let rootRealPath: [UInt8]?

    init(
      options: DiscoveryOptions, namer: TemporaryNamer, base: Int32, argument: RawPath,
      rootDevice: UInt64, rootRealPath: [UInt8]?
    ) {
      self.options = options
      self.namer = namer
      self.base = base
      self.argument = argument
      self.rootDevice = rootDevice
      self.rootRealPath = rootRealPath
    }
  }

  /// Every name in the folder, sorted by name (what the entries' names refer to; and the
  /// outputs already beside the folder's files are looked up in it).
  var listing = DirectoryListing()
  /// The entries, in name order.
  var entries: [Entry] = []
  /// The causes of ``Entry/failed(_:cause:)`` and ``Entry/warned(_:cause:)``.
  var messages: [String] = []
  /// The targets of ``Entry/link(_:target:_:)``.
  var linkTargets: [RawPath] = []
  /// Names with a compressed suffix, in name order: skipped unless they are a listed file's
  /// output (`x.gz` beside `x` is counted once, as `x`'s output).
  var compressedNames: [Name] = []
  /// Why the folder itself could not be opened or read, or nil.
  var failure: String? = nil
  /// The folder has no default ACL (``CreationPermissions``).
  var hasNoDefaultACL = false
  /// Stale temporaries of killed runs in it (``DiscoveryOptions/findsStaleTemporaries``), in
  /// name order: not listed, not skipped, left for the run to remove.
  var staleTemporaries: [Name] = []

  /// The name `name` as a path.
  func name(_ name: Name) -> RawPath { listing.name(of: name) }

  /// Reads the folder `relative` below the argument (`""` for the argument's own folder):
  /// one `getdents64` pass, then one `fstatat` per entry in name order.
  static func read(_ relative: RawPath, context: Context) -> FolderScan {
    let options = context.options
    let folder: FileDescriptor
    do {
      folder = try FileDescriptor.open(
        relative.isEmpty ? "." : relative, in: context.base, flags: .folder,
        symlinks: options.followSymlinks ? .always : .never)
    } catch {
      return FolderScan(failure: "cannot open folder: \(error)")
    }
    var listing: DirectoryListing
    do {
      listing = try DirectoryReader.listing(of: folder.rawValue)
    } catch {
      return FolderScan(failure: "cannot read folder: \(error)")
    }
    listing.sortByName()
    // The scan is built in the reader and returned from it: one made apart and handed in
    // was copied, a retain and a release of each of its arrays.
    var reader = EntryReader(folder: folder.rawValue, relative: relative, context: context)
    reader.scan.hasNoDefaultACL = CreationPermissions.folderHasNoDefaultACL(folder.rawValue)
    reader.scan.entries.reserveCapacity(listing.entries.count)
    let atTop = relative.isEmpty && options.skipsArchiveMarker
    listing.names.withUnsafeBufferPointer { names in
      for entry in listing.entries {
        let name = UnsafeBufferPointer(
          rebasing: names[Int(entry.offset)..<(Int(entry.offset) + Int(entry.length))])
        if atTop
          && (name.elementsEqual(ArchiveMarker.name.bytes)
            || name.elementsEqual(MirrorManifest.name.bytes)
            || name.elementsEqual(SnapshotMarker.name.bytes))
        {
          // Restores ignore the marker of an archive or of an unfinished snapshot, and the
          // mirror's manifest.
          continue
        }
        reader.consider(entry, named: name)
      }
    }
    reader.scan.listing = listing
    return reader.scan
  }
}

/// Decides one entry after another of an open folder, into a ``FolderScan``.
///
/// An entry comes as its name's place in the listing and its bytes where they lie: a path is
/// made of a name only where one is needed (a pattern to match, a link to read, a message).
private struct EntryReader {
  let folder: Int32
  let relative: RawPath
  let context: FolderScan.Context
  var scan = FolderScan()

  var options: DiscoveryOptions { context.options }

  /// Takes, skips or records the entry `entry`, whose name's bytes are `name` (followed by a
  /// NUL).
  mutating func consider(_ entry: FolderScan.Name, named name: UnsafeBufferPointer<UInt8>) {
    // A regular file by its listed type is judged by its name before its stat, and only
    // then (the name decides alone: the stat would not change the answer).
    let judgedByName = entry.type == DirectoryReader.regularFile
    if judgedByName, let reason = suffixSkip(name) {
      skipByName(entry, reason)
      return
    }
    if TemporaryNamer.isTemporary(name) {
      if options.findsStaleTemporaries
        && TemporaryCleaner.isStale(RawPath(bytes: name), in: folder, namer: context.namer)
      {
        scan.staleTemporaries.append(entry)
        return
      }
      scan.entries.append(.skipped(entry, .temporary))
      return
    }
    var status: FileStatus
    do {
      // The listing keeps a NUL after each name: the name goes to the kernel as it lies.
      status = try name.withMemoryRebound(to: CChar.self) { (characters) throws(SystemError) in
        try FileStatus.of(cString: characters.baseAddress!, in: folder)
      }
    } catch  where error == .noSuchFile {
      return  // vanished while listing: nothing to do
    } catch {
      fail(entry, "cannot stat: \(error)")
      return
    }
    if status.kind == .symbolicLink {
      if options.recordsLinks {
        addLink(entry, named: name, status: status)
        return
      }
      guard options.followSymlinks else {
        scan.entries.append(.skipped(entry, .symbolicLink))
        return
      }
      guard
        let target = try? FileStatus.of(RawPath(bytes: name), in: folder, followingSymlinks: true)
      else {
        scan.entries.append(.skipped(entry, .symbolicLink))
        warn(entry, "is a dangling symbolic link; ignored")
        return
      }
      status = target
      reportIfOutside(link: entry, named: name)
    }
    switch status.kind {
    case .regular:
      if !judgedByName, let reason = suffixSkip(name) {
        skipByName(entry, reason)
        return
      }
      addFile(entry, named: name, status: status)
    case .directory:
      addSubfolder(entry, named: name, status: status)
    default:
      scan.entries.append(.skipped(entry, SkipReason(kind: status.kind) ?? .device))
    }
  }

  /// Records that `entry` could not be read, and why.
  private mutating func fail(_ entry: FolderScan.Name, _ cause: String) {
    scan.entries.append(.failed(entry, cause: scan.messages.count))
    scan.messages.append(cause)
  }

  /// Records a word about `entry` that is not a failure.
  private mutating func warn(_ entry: FolderScan.Name, _ cause: String) {
    scan.entries.append(.warned(entry, cause: scan.messages.count))
    scan.messages.append(cause)
  }

  /// Skips a file by its name, or, for a compressed name, leaves it to the end of the folder.
  private mutating func skipByName(_ entry: FolderScan.Name, _ reason: SkipReason) {
    if reason == .alreadyCompressed {
      scan.compressedNames.append(entry)
    } else {
      scan.entries.append(.skipped(entry, reason))
    }
  }

  /// Takes a regular file, unless the selection leaves it out.
  private mutating func addFile(
    _ entry: FolderScan.Name, named name: UnsafeBufferPointer<UInt8>, status: FileStatus
  ) {
    if !options.excludedFiles.isEmpty && options.excludedFiles.contains(FileIdentity(status)) {
      scan.entries.append(.skipped(entry, .taskLog))
      return
    }
    if !options.selection.isEmpty,
      let reason = options.selection.skipReason(
        forFile: relative.appending(RawPath(bytes: name)), modified: status.modificationTime)
    {
      scan.entries.append(.skipped(entry, reason))
      return
    }
    scan.entries.append(.file(entry, status))
  }

  /// Records a symbolic link of a mirror, unless the selection leaves it out (patterns,
  /// `--older-than` on the link's own time, `--shard` on its path).
  private mutating func addLink(
    _ entry: FolderScan.Name, named name: UnsafeBufferPointer<UInt8>, status: FileStatus
  ) {
    let name = RawPath(bytes: name)
    if let reason = options.selection.skipReason(
      forFile: relative.appending(name), modified: status.modificationTime)
    {
      scan.entries.append(.skipped(entry, reason))
      return
    }
    do {
      let target = try RelativeLocation.symbolicLinkTarget(of: name, in: folder)
      scan.entries.append(.link(entry, target: scan.linkTargets.count, status))
      scan.linkTargets.append(target)
    } catch  where error == .noSuchFile {
      return  // vanished while listing
    } catch {
      fail(entry, "cannot read symbolic link: \(error)")
    }
  }

  /// Records a subfolder to walk, unless it is left out.
  private mutating func addSubfolder(
    _ entry: FolderScan.Name, named name: UnsafeBufferPointer<UInt8>, status: FileStatus
  ) {
    if !options.excludedFolders.isEmpty
      && options.excludedFolders.contains(FileIdentity(status))
    {
      scan.entries.append(.skipped(entry, .outputFolder))
      return
    }
    // Only --exclude leaves folders out: no path to build without one.
    if !options.selection.excludes.isEmpty,
      let reason = options.selection.skipReason(
        forFolder: relative.appending(RawPath(bytes: name)))
    {
      scan.entries.append(.skipped(entry, reason))
      return
    }
    if options.oneFileSystem && status.device != context.rootDevice {
      scan.entries.append(.skipped(entry, .otherFileSystem))
      return
    }
    scan.entries.append(.subfolder(entry, status))
  }

  /// Warns when the followed link `entry` leads outside the argument being walked.
  private mutating func reportIfOutside(
    link entry: FolderScan.Name, named name: UnsafeBufferPointer<UInt8>
  ) {
    guard let root = context.rootRealPath,
      let target = context.argument.trimmingTrailingSlashes.appending(relative).appending(
        RawPath(bytes: name)
      ).realPath
    else { return }
    let inside =
      target == root
      || (target.starts(with: root) && target.dropFirst(root.count).first == UInt8(ascii: "/"))
      || root == [UInt8(ascii: "/")]
    if !inside {
      warn(
        entry,
        "is a symbolic link leading outside its argument (to '\(RawPath(bytes: target).displayString)'); followed"
      )
    }
  }

  /// Why a file is skipped by its name, or nil.
  private func suffixSkip(_ name: UnsafeBufferPointer<UInt8>) -> SkipReason? {
    let compressed = GzipNaming.hasCompressedSuffix(name, suffix: options.suffix)
    switch options.wanted {
    case .uncompressed: return compressed ? .alreadyCompressed : nil
    case .compressedByName:
      // A restore needs a name to restore to: `.gz` alone has none, as gzip's get_suffix says.
      return compressed
        && GzipNaming.decompressedName(of: RawPath(bytes: name), suffix: options.suffix) != nil
        ? nil : .notCompressed
    case .compressedOrNamed: return compressed ? nil : .notCompressed
    case .anything: return nil
    }
  }
}
