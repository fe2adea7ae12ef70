/// squeeze's version: what `--version` prints and the task log's `start` event records.
package enum SqueezeVersion {
  /// The version, as `major.minor.patch`.
  package static let current = "0.1.0"
}
