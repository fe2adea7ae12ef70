import SqueezeSystem

/// A finished temporary, ready to publish, and what to do once it is published.
///
/// A class: a file's output passes from its compression through the publisher's
/// completion to its outcome, and a reference moves with one retain where a struct of some
/// fifteen paths and handles was retained and released field by field at every step.
final class PreparedOutput: Sendable {
  /// What to hand the publisher.
  let request: Publisher.Request
  /// Source bytes read.
  let bytesIn: Int64
  /// Output bytes written.
  let bytesOut: Int64
  /// The output path, for messages.
  let outputDisplay: MessagePath
  /// The source to remove once the output is durable (`--rm`), or nil.
  let removal: Removal?
  /// How to judge a file that appeared at the output path while this one was being written
  /// (another run on the same folder): compression checks whether it is an up-to-date
  /// output of the same source, a restore whether it is the file a restore re-run would
  /// keep; nil when any such file is a conflict.
  let recheck: Recheck?
  /// Set when a folder is in the way: the output stays under its temporary name, durable,
  /// until the folder can give way (and `removal` waits for that).
  let held: HeldReplacement?

  init(
    request: Publisher.Request, bytesIn: Int64, bytesOut: Int64, outputDisplay: MessagePath,
    removal: Removal?, recheck: Recheck? = nil, held: HeldReplacement? = nil
  ) {
    self.request = request
    self.bytesIn = bytesIn
    self.bytesOut = bytesOut
    self.outputDisplay = outputDisplay
    self.removal = removal
    self.recheck = recheck
    self.held = held
  }
}

/// What decides whether an output that appeared meanwhile is as good as this one.
struct Recheck: Sendable {
  /// The output path.
  var target: RelativeLocation
  /// What the file there must be.
  var expected: Expected

  /// What an output that appeared must be to count as this run's.
  enum Expected: Sendable {
    /// Compressing: an up-to-date output of `source`, named `sourceName` (FNAME); with
    /// `nameless` (`-n`, no FNAME and no MTIME written) a nameless output can be current.
    case output(sourceName: RawPath, source: FileStatus, nameless: Bool)
    /// Restoring: the file a restore re-run would keep (``ExistingOutput/inspectRestore``),
    /// judged against the `.gz` file's `status` with the modification time this run gives
    /// the restored file, and `owner` when restored files take the `.gz` file's (as root).
    case restored(status: FileStatus, owner: Owner?)
  }

  /// An owner and group.
  struct Owner: Sendable {
    var user: UInt32
    var group: UInt32
  }

  /// True when the file now at the output path is as good as this run's output.
  func isUpToDate() -> Bool {
    switch expected {
    case .output(let sourceName, let source, let nameless):
      return
        (try? ExistingOutput.inspect(
          target, sourceName: sourceName, source: source, nameless: nameless)) == .upToDate
    case .restored(let status, let owner):
      return
        (try? ExistingOutput.inspectRestore(
          target, source: status, isize: { UInt32(truncatingIfNeeded: status.size) },
          inMirror: false, owner: owner.map { ($0.user, $0.group) })) == .upToDate
    }
  }
}

/// A source to remove after its output is published and its folder synced (`--rm`): only
/// while it is still the file that was read.
struct Removal: Sendable {
  /// Where the source is.
  var source: RelativeLocation
  /// Its status when it was read: it is removed only if it still has this identity, size
  /// and modification time.
  var status: FileStatus
}
