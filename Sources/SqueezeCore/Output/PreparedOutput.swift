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
  /// output of the same source; nil when any such file is a conflict.
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
  /// The source's name (FNAME).
  var sourceName: RawPath
  /// The source's status when it was read.
  var source: FileStatus
  /// The run writes no FNAME and no MTIME (`-n`), so a nameless output can be current.
  var nameless = false

  /// True when the file now at the output path is an up-to-date output of the source.
  func isUpToDate() -> Bool {
    (try? ExistingOutput.inspect(
      target, sourceName: sourceName, source: source, nameless: nameless)) == .upToDate
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
