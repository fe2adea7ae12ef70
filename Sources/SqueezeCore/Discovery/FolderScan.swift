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
  /// One entry's outcome.
  enum Entry: Sendable {
    /// A regular file to take (unless the recording finds it listed already).
    case file(RawPath, FileStatus)
    /// A symbolic link to store as a link in a mirror (`-o`), with its target.
    case link(RawPath, target: RawPath, FileStatus)
    /// A subfolder to walk (unless the recording finds it listed already, or a loop).
    case subfolder(RawPath, FileStatus)
    /// An entry left out, and why.
    case skipped(RawPath, SkipReason)
    /// An entry that could not be read, and why: a failure.
    case failed(RawPath, String)
    /// A word about an entry that is not a failure (a dangling link; a followed link that
    /// leads outside its argument).
    case warned(RawPath, String)
  }

  /// What reading a folder needs besides its path: the same for every folder of an argument.
  struct Context: Sendable {
    let options: DiscoveryOptions
    let namer: TemporaryNamer
    /// The argument's open folder, which folder paths are relative to.
    let base: Int32
    /// The argument's file system (`--one-file-system`).
    let rootDevice: UInt64
    /// The argument's canonical path (`--follow-symlinks` only), to tell links that lead
    /// outside it.
    let rootRealPath: [UInt8]?
  }

  /// The entries, in name order.
  var entries: [Entry] = []
  /// Names with a compressed suffix, in name order: skipped unless they are a listed file's
  /// output (`x.gz` beside `x` is counted once, as `x`'s output).
  var compressedNames: [RawPath] = []
  /// Every name in the folder (for the outputs already beside their files).
  var names: [RawPath] = []
  /// Why the folder itself could not be opened or read, or nil.
  var failure: String? = nil
  /// The folder has no default ACL (``CreationPermissions``).
  var hasNoDefaultACL = false
  /// Stale temporaries of killed runs in it (``DiscoveryOptions/findsStaleTemporaries``), in
  /// name order: not listed, not skipped, left for the run to remove.
  var staleTemporaries: [RawPath] = []

  /// Reads the folder `relative` below the argument (`""` for the argument's own folder),
  /// shown to the user as `display`: one `getdents64` pass, then one `fstatat` per entry in
  /// name order.
  static func read(_ relative: RawPath, display: RawPath, context: Context) -> FolderScan {
    var scan = FolderScan()
    let options = context.options
    let folder: FileDescriptor
    let listed: [(name: RawPath, type: UInt8)]
    do {
      folder = try FileDescriptor.open(
        relative.isEmpty ? "." : relative, in: context.base, flags: .folder,
        symlinks: options.followSymlinks ? .always : .never)
    } catch {
      scan.failure = "cannot open folder: \(error)"
      return scan
    }
    do {
      listed = try DirectoryReader.entries(of: folder.rawValue)
    } catch {
      scan.failure = "cannot read folder: \(error)"
      return scan
    }
    scan.hasNoDefaultACL = CreationPermissions.folderHasNoDefaultACL(folder.rawValue)
    scan.names = listed.map(\.name)
    scan.entries.reserveCapacity(listed.count)
    var reader = EntryReader(
      folder: folder.rawValue, relative: relative, display: display, context: context,
      scan: scan)
    for entry in listed.sorted(by: { $0.name < $1.name }) {
      if relative.isEmpty && options.skipsArchiveMarker
        && (entry.name == ArchiveMarker.name || entry.name == MirrorManifest.name
          || entry.name == SnapshotMarker.name)
      {
        // Restores ignore the marker of an archive or of an unfinished snapshot, and the
        // mirror's manifest.
        continue
      }
      reader.consider(entry)
    }
    return reader.scan
  }
}

/// Decides one entry after another of an open folder, into a ``FolderScan``.
private struct EntryReader {
  let folder: Int32
  let relative: RawPath
  let display: RawPath
  let context: FolderScan.Context
  var scan: FolderScan

  var options: DiscoveryOptions { context.options }

  /// Takes, skips or records one entry.
  mutating func consider(_ entry: (name: RawPath, type: UInt8)) {
    let name = entry.name
    // A regular file by its listed type is judged by its name before its stat, and only
    // then (the name decides alone: the stat would not change the answer).
    let judgedByName = entry.type == DirectoryReader.regularFile
    if judgedByName, let reason = suffixSkip(name) {
      skipByName(name, reason)
      return
    }
    if TemporaryNamer.isTemporary(name) {
      if options.findsStaleTemporaries
        && TemporaryCleaner.isStale(name, in: folder, namer: context.namer)
      {
        scan.staleTemporaries.append(name)
        return
      }
      scan.entries.append(.skipped(name, .temporary))
      return
    }
    var status: FileStatus
    do {
      status = try FileStatus.of(name, in: folder)
    } catch  where error == .noSuchFile {
      return  // vanished while listing: nothing to do
    } catch {
      scan.entries.append(.failed(name, "cannot stat: \(error)"))
      return
    }
    if status.kind == .symbolicLink {
      if options.recordsLinks {
        addLink(name, status: status)
        return
      }
      guard options.followSymlinks else {
        scan.entries.append(.skipped(name, .symbolicLink))
        return
      }
      guard let target = try? FileStatus.of(name, in: folder, followingSymlinks: true) else {
        scan.entries.append(.skipped(name, .symbolicLink))
        scan.entries.append(.warned(name, "is a dangling symbolic link; ignored"))
        return
      }
      status = target
      reportIfOutside(link: name)
    }
    switch status.kind {
    case .regular:
      if !judgedByName, let reason = suffixSkip(name) {
        skipByName(name, reason)
        return
      }
      addFile(name, status: status)
    case .directory:
      addSubfolder(name, status: status)
    default:
      scan.entries.append(.skipped(name, SkipReason(kind: status.kind) ?? .device))
    }
  }

  /// Skips a file by its name, or, for a compressed name, leaves it to the end of the folder.
  private mutating func skipByName(_ name: RawPath, _ reason: SkipReason) {
    if reason == .alreadyCompressed {
      scan.compressedNames.append(name)
    } else {
      scan.entries.append(.skipped(name, reason))
    }
  }

  /// Takes a regular file, unless the selection leaves it out.
  private mutating func addFile(_ name: RawPath, status: FileStatus) {
    if !options.excludedFiles.isEmpty && options.excludedFiles.contains(FileIdentity(status)) {
      scan.entries.append(.skipped(name, .taskLog))
      return
    }
    if !options.selection.isEmpty,
      let reason = options.selection.skipReason(
        forFile: relative.appending(name), modified: status.modificationTime)
    {
      scan.entries.append(.skipped(name, reason))
      return
    }
    scan.entries.append(.file(name, status))
  }

  /// Records a symbolic link of a mirror, unless the selection leaves it out (patterns,
  /// `--older-than` on the link's own time, `--shard` on its path).
  private mutating func addLink(_ name: RawPath, status: FileStatus) {
    if let reason = options.selection.skipReason(
      forFile: relative.appending(name), modified: status.modificationTime)
    {
      scan.entries.append(.skipped(name, reason))
      return
    }
    do {
      let target = try RelativeLocation.symbolicLinkTarget(of: name, in: folder)
      scan.entries.append(.link(name, target: target, status))
    } catch  where error == .noSuchFile {
      return  // vanished while listing
    } catch {
      scan.entries.append(.failed(name, "cannot read symbolic link: \(error)"))
    }
  }

  /// Records a subfolder to walk, unless it is left out.
  private mutating func addSubfolder(_ name: RawPath, status: FileStatus) {
    if options.excludedFolders.contains(FileIdentity(status)) {
      scan.entries.append(.skipped(name, .outputFolder))
      return
    }
    if let reason = options.selection.skipReason(forFolder: relative.appending(name)) {
      scan.entries.append(.skipped(name, reason))
      return
    }
    if options.oneFileSystem && status.device != context.rootDevice {
      scan.entries.append(.skipped(name, .otherFileSystem))
      return
    }
    scan.entries.append(.subfolder(name, status))
  }

  /// Warns when the followed link `name` leads outside the argument being walked.
  private mutating func reportIfOutside(link name: RawPath) {
    guard let root = context.rootRealPath,
      let target = display.appending(name).realPath
    else { return }
    let inside =
      target == root
      || (target.starts(with: root) && target.dropFirst(root.count).first == UInt8(ascii: "/"))
      || root == [UInt8(ascii: "/")]
    if !inside {
      scan.entries.append(
        .warned(
          name,
          "is a symbolic link leading outside its argument (to '\(RawPath(bytes: target).displayString)'); followed"
        ))
    }
  }

  /// Why a file is skipped by its name, or nil.
  private func suffixSkip(_ name: RawPath) -> SkipReason? {
    let compressed = GzipNaming.hasCompressedSuffix(name, suffix: options.suffix)
    switch options.wanted {
    case .uncompressed: return compressed ? .alreadyCompressed : nil
    case .compressedByName:
      // A restore needs a name to restore to: `.gz` alone has none, as gzip's get_suffix says.
      return compressed && GzipNaming.decompressedName(of: name, suffix: options.suffix) != nil
        ? nil : .notCompressed
    case .compressedOrNamed: return compressed ? nil : .notCompressed
    case .anything: return nil
    }
  }
}
