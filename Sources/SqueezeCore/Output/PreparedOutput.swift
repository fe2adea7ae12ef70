/// A finished temporary, ready to publish, and what to do once it is published.
struct PreparedOutput: Sendable {
  /// What to hand the publisher.
  var request: Publisher.Request
  /// Source bytes read.
  var bytesIn: Int64
  /// Output bytes written.
  var bytesOut: Int64
  /// The output path, for messages.
  var outputDisplay: MessagePath
  /// The source to remove once the output is durable (`--rm`), or nil.
  var removal: Removal?
  /// How to judge a file that appeared at the output path while this one was being written
  /// (another run on the same folder): compression checks whether it is an up-to-date
  /// output of the same source; nil when any such file is a conflict.
  var recheck: Recheck? = nil
  /// Set when a folder is in the way: the output stays under its temporary name, durable,
  /// until the folder can give way (and `removal` waits for that).
  var held: HeldReplacement? = nil
}

/// What decides whether an output that appeared meanwhile is as good as this one.
struct Recheck: Sendable {
  /// The output path.
  var target: RelativeLocation
  /// The source's name (FNAME).
  var sourceName: RawPath
  /// The source's status when it was read.
  var source: FileStatus

  /// True when the file now at the output path is an up-to-date output of the source.
  func isUpToDate() -> Bool {
    (try? ExistingOutput.inspect(target, sourceName: sourceName, source: source)) == .upToDate
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
