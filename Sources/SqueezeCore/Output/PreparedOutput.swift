/// A finished temporary, ready to publish, and what to do once it is published.
struct PreparedOutput: Sendable {
  /// What to hand the publisher.
  var request: Publisher.Request
  /// Source bytes read.
  var bytesIn: Int64
  /// Output bytes written.
  var bytesOut: Int64
  /// The output path, for messages.
  var outputDisplay: RawPath
  /// The source to remove once the output is durable (`--rm`), or nil.
  var removal: Removal?
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
