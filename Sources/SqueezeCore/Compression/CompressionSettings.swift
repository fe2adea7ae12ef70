import Glibc

/// The choices that are the same for every file of a compression run.
struct CompressionSettings: Sendable {
  /// zlib level (`-1`…`-9`, `--level`).
  var level: CompressionLevel = .default
  /// Where outputs go and their suffix (`-o`, `-S`).
  var plan: OutputPlan
  /// Replace outputs squeeze would otherwise leave alone (`-f`).
  var force = false
  /// Store the source's name and modification time in the gzip header (the default; `-n`
  /// turns it off).
  var storesNameAndTime = true
  /// Give outputs the source's owner and group (only possible as root, as gzip does).
  var copiesOwnership = geteuid() == 0

  init(plan: OutputPlan) {
    self.plan = plan
  }
}
