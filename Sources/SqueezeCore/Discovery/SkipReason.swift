/// Why discovery passed over an entry. Skips are not failures: they are counted in the
/// summary and `--json`, and listed with their reason under `-v`.
enum SkipReason: String, CaseIterable, Sendable, Hashable, Comparable {
  /// The name already ends in a compressed suffix (`.gz`, `.tgz`, `.taz`, `.z`, `-gz`, `-z`,
  /// `_z` or the `-S` suffix), as gzip skips them.
  case alreadyCompressed
  /// A symbolic link, not followed (the default; `--follow-symlinks` follows them).
  case symbolicLink
  /// A character or block device.
  case device
  /// A named pipe (FIFO).
  case fifo
  /// A Unix domain socket.
  case socket
  /// The output folder (`-o`) lying inside the input.
  case outputFolder
  /// The run's own task-state log (`--task-log`) lying inside the input.
  case taskLog
  /// A temporary file of a squeeze run.
  case temporary
  /// Decompressing, testing or listing: the name has no compressed suffix.
  case notCompressed
  /// On another file system than its argument (`--one-file-system`).
  case otherFileSystem
  /// Left out by `--include` / `--exclude`.
  case excluded
  /// Modified more recently than `--older-than` allows.
  case tooRecent
  /// Belongs to another shard (`--shard`).
  case otherShard
  /// A link that leads back into a folder already being walked (`--follow-symlinks`).
  case symlinkLoop
  /// Reached a second time through another link (`--follow-symlinks`).
  case alreadyListed

  /// Human wording, for `-v` and the summary.
  var phrase: String {
    switch self {
    case .alreadyCompressed: "already has a compressed suffix"
    case .symbolicLink: "symbolic link, not followed"
    case .device: "device file"
    case .fifo: "named pipe"
    case .socket: "socket"
    case .outputFolder: "the output folder"
    case .taskLog: "this run's task log (--task-log)"
    case .temporary: "squeeze temporary file"
    case .notCompressed: "no compressed suffix"
    case .otherFileSystem: "on another file system"
    case .excluded: "excluded by --include/--exclude"
    case .tooRecent: "newer than --older-than"
    case .otherShard: "in another shard"
    case .symlinkLoop: "symbolic link loop"
    case .alreadyListed: "already listed through another path"
    }
  }

  static func < (lhs: SkipReason, rhs: SkipReason) -> Bool {
    allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
  }
}
