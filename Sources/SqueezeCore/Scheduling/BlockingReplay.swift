import SqueezeSystem

/// `--isolation blocking`: the session's third problem, thread-pool exhaustion, replayed on
/// real code. A file's blocking calls run on the cooperative pool's thread that compresses
/// it, as naive code makes them, instead of where squeeze normally puts them:
///
/// - its source is read from the disk: its cached pages are dropped first
///   (`posix_fadvise(POSIX_FADV_DONTNEED)`), so the reads wait for the device as on a cold
///   cache, the usual case for a backup of files nobody has touched today;
/// - its output is made durable there, one file at a time: `fsync` of the temporary, the
///   rename, and (for `--rm`, and on FUSE) `fsync` of its folder, where the other modes
///   hand the output to the publisher's thread, which commits a whole batch with one
///   `syncfs`.
///
/// Swift's cooperative pool is as wide as the cores and adds no thread when one blocks:
/// while a pool thread waits in the kernel, work that is ready waits
/// `enqueued` for it. The task-state log shows it as running tasks whose threads are blocked.
enum BlockingReplay {
  /// Drops the cached pages of file `index`'s source, so that reading it waits for the disk.
  /// Errors are ignored: the read that follows reports them.
  static func dropCachedPages(of index: Int, context: JobContext) {
    let file = context.list.files[index]
    let location = RelativeLocation(
      base: context.bases.descriptor(context.list.root(of: file).base),
      directory: context.list.relativePath(ofDirectory: file.directory),
      name: context.list.name(of: file), symlinks: context.settings.sourceSymlinks)
    guard let source = try? location.open(flags: .source) else {
      return
    }
    Descriptor.dropCachedPages(source.rawValue)
  }

  /// Publishes `request` on the calling thread: `fsync` of the temporary, the rename, and
  /// with ``Publisher/Request/syncsAfterRename``, or on FUSE, an `fsync` of its folder. The
  /// publisher's last commit (when the run ends) still covers the renames of files without
  /// `--rm` elsewhere.
  ///
  /// - Parameters:
  ///   - request: the whole temporary and its final name.
  ///   - publisher: the run's publisher, for its rename and what it knows of FUSE.
  ///   - discard: set when a signal stopped the run: the temporary is removed, not
  ///     published (``Publisher``); a full disk leaves it clear.
  /// - Returns: what became of it, as ``Publisher/Outcome``; the temporary is removed on
  ///   every path but success.
  static func publish(
    _ request: Publisher.Request, publisher: Publisher, discard: AtomicFlag
  ) -> Publisher.Outcome {
    if discard.isSet {
      try? request.temporary.remove()
      return .cancelled
    }
    do throws(SystemError) {
      try request.temporary.sync()
    } catch {
      try? request.temporary.remove()
      return .failed(step: .sync, error)
    }
    do throws(SystemError) {
      try publisher.rename(request)
    } catch {
      try? request.temporary.remove()
      return .failed(step: error == NoReplaceRename.refused ? .noSafeRename : .rename, error)
    }
    // On FUSE the publisher's last commit (syncfs) would not put the name on disk.
    guard
      request.syncsAfterRename || publisher.syncFileSystemIsHollow(on: request.device)
    else { return .published }
    do throws(SystemError) {
      // The folder the output was renamed in, through the temporary's folder descriptor.
      let folder = try FileDescriptor.open(
        ".", in: request.temporary.folder.descriptor, flags: .folder)
      try folder.sync()
    } catch {
      return .failed(step: .syncFolder, error)
    }
    return .published
  }
}
