import Foundation
import SqueezeEngines
import SqueezeGzip
import SqueezeSystem
import SqueezeTaskLog

/// `--json`: one JSON object on stdout at the end of a run (its schema: the user's guide,
/// `UsersGuide.md` in `SqueezeCore.docc`, "The --json summary"), encoded by
/// ``encode(to:)``: one place says every key and value.
struct JSONSummary {
  /// The version of the objects squeeze prints with `--json` (`"schema"` in each; an object
  /// without one is version 1, from before `ratio` meant compressed ÷ uncompressed in every
  /// mode). Independent of the task log's own schema.
  static let schema = 2

  let mode: RunMode
  let results: RunResults
  let discovery: DiscoveryResult
  let jobs: Int
  /// The CPUs this process may use (`cpus`, `affinityCPUs`, `cgroupQuotaCPUs`).
  let cpus: CPUAllowance
  let level: CompressionLevel
  /// `--engine`.
  let engine: Engine
  /// The chunk size used, in bytes (`--block-size`, or the engine's default).
  let blockSize: Int
  let isolation: Isolation
  let wallSeconds: Double
  let cpuSeconds: Double
  let hangs: HangReport
  let dryRun: Bool
  /// `--dry-run --json`: the plan, one object per step (`plan`).
  var plan: [DryRun.Step]? = nil
  /// A snapshot run (`--link-dest`): `files` also counts `linked` and `linkFallbacks`.
  var snapshot = false
  /// A run with `--max-delete`: the object also has `deletionsOverLimit`.
  var limitsDeletions = false

  /// The key under `files` counting the files done in this mode.
  var doneKey: String {
    switch mode {
    case .compress: "compressed"
    case .decompress: "decompressed"
    case .test: "tested"
    case .list: "listed"
    }
  }

  /// Deprecated (`ratio` in the object, kept for readers of schema 2; ``savedPercent`` is
  /// the figure the word means in gzip's `-l` and in squeeze's own table).
  ///
  /// Compressed bytes ÷ uncompressed bytes of the files done, whichever way the run went
  /// (`bytesOut / bytesIn` compressing, `bytesIn / bytesOut` restoring or testing), or nil
  /// when nothing uncompressed was there to measure.
  var ratio: Double? {
    let (compressed, uncompressed) =
      mode == .compress ? (results.bytesOut, results.bytesIn) : (results.bytesIn, results.bytesOut)
    return uncompressed > 0 ? Double(compressed) / Double(uncompressed) : nil
  }

  /// The share of the uncompressed bytes saved, in percent (`(1 - ratio) × 100`): what the
  /// summary line says as `72.0 % saved`, negative when the outputs are larger; nil when
  /// nothing uncompressed was there to measure. `-l`'s column of the same meaning is
  /// headed "ratio", as in gzip's `-l`, which is why ``ratio`` is deprecated.
  var savedPercent: Double? { ratio.map { (1 - $0) * 100 } }

  /// `value` rounded to `decimals` decimals, as a number JSON prints without float noise
  /// (`0.4005`, `12`: a `Decimal` prints its digits exactly, without trailing zeros).
  ///
  /// - Throws: `EncodingError.invalidValue` for a value that is not finite (JSON has no
  ///   number for it).
  static func rounded(_ value: Double, _ decimals: Int) throws -> Decimal {
    guard value.isFinite, let decimal = Decimal(string: ByteFormat.fixed(value, decimals)) else {
      throw EncodingError.invalidValue(
        value, EncodingError.Context(codingPath: [], debugDescription: "not a finite number"))
    }
    return decimal
  }

  /// The object, as one line of JSON with sorted keys (Swift's `JSONEncoder`, keys sorted by
  /// their code points; `/` escaped as `\/`).
  ///
  /// - Throws: ``EncodingFailure`` when a value has no JSON form (a time that is not a
  ///   finite number): the caller reports it rather than printing something else.
  func encoded() throws(EncodingFailure) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    do {
      return String(decoding: try encoder.encode(self), as: UTF8.self) + "\n"
    } catch {
      throw EncodingFailure(cause: "\(error)")
    }
  }

  /// Why the summary could not be encoded.
  struct EncodingFailure: Error, CustomStringConvertible {
    /// What the encoder said.
    var cause: String

    var description: String { "cannot encode the --json summary: \(cause)" }
  }
}

extension JSONSummary: Encodable {
  private enum Key: String, CodingKey {
    case mode, dryRun, interrupted, diskFull, files, bytesIn, bytesOut, schema, ratio, savedPercent
    case wallSeconds
    case cpuSeconds, jobs, cpus, affinityCPUs, cgroupQuotaCPUs, level, engine, blockSize
    case isolation, deletionsSkipped, deletionsOverLimit, hangs, microhangs, worstLagMs, plan
  }

  /// The object's keys and values: the schema ``schema`` names, as README.md describes it.
  func encode(to encoder: any Encoder) throws {
    var object = encoder.container(keyedBy: Key.self)
    try object.encode(mode.rawValue, forKey: .mode)
    try object.encode(dryRun, forKey: .dryRun)
    try object.encode(results.interrupted, forKey: .interrupted)
    if let fullDisk = results.fullDisk {
      try object.encode(
        DiskFull(
          fileSystem: fullDisk.fileSystem, cause: fullDisk.error.description,
          first: (fullDisk.file ?? fullDisk.output).displayString,
          notDone: results.notDone(selected: discovery.files.files.count)),
        forKey: .diskFull)
    } else {
      try object.encodeNil(forKey: .diskFull)
    }
    try object.encode(Files(summary: self), forKey: .files)
    try object.encode(results.bytesIn, forKey: .bytesIn)
    try object.encode(results.bytesOut, forKey: .bytesOut)
    try object.encode(Self.schema, forKey: .schema)
    if let ratio {
      try object.encode(try Self.rounded(ratio, 4), forKey: .ratio)
    } else {
      try object.encodeNil(forKey: .ratio)
    }
    if let savedPercent {
      try object.encode(try Self.rounded(savedPercent, 2), forKey: .savedPercent)
    } else {
      try object.encodeNil(forKey: .savedPercent)
    }
    try object.encode(try Self.rounded(wallSeconds, 3), forKey: .wallSeconds)
    try object.encode(try Self.rounded(cpuSeconds, 3), forKey: .cpuSeconds)
    try object.encode(jobs, forKey: .jobs)
    try object.encode(cpus.count, forKey: .cpus)
    try object.encode(cpus.affinityCPUs, forKey: .affinityCPUs)
    if let quota = cpus.quota {
      try object.encode(try Self.rounded(quota.cpus, 3), forKey: .cgroupQuotaCPUs)
    } else {
      try object.encodeNil(forKey: .cgroupQuotaCPUs)
    }
    try object.encode(Int(level.value), forKey: .level)
    try object.encode(engine.rawValue, forKey: .engine)
    try object.encode(blockSize, forKey: .blockSize)
    try object.encode(isolation.rawValue, forKey: .isolation)
    try object.encode(results.deletionsSkipped, forKey: .deletionsSkipped)
    if limitsDeletions {
      try object.encode(results.deletionsOverLimit, forKey: .deletionsOverLimit)
    }
    try object.encode(hangs.hangs, forKey: .hangs)
    try object.encode(hangs.microhangs, forKey: .microhangs)
    try object.encode(try Self.rounded(hangs.worstLag * 1000, 3), forKey: .worstLagMs)
    if let plan { try object.encode(plan, forKey: .plan) }
  }

  /// `diskFull`: the full file system that stopped the run (``FullDisk``).
  private struct DiskFull: Encodable {
    /// Its mount point (or the output's folder when the mount table cannot say).
    var fileSystem: String
    /// `No space left on device (errno 28)` or `Disk quota exceeded (errno 122)`.
    var cause: String
    /// The first file whose output failed for it.
    var first: String
    /// Files not done (``RunResults/notDone(selected:)``).
    var notDone: Int
  }

  /// `files`: what became of the files, by outcome.
  private struct Files: Encodable {
    let summary: JSONSummary

    /// A key named at run time: the count of files done is `compressed`, `decompressed`,
    /// `tested` or `listed`.
    struct Key: CodingKey {
      var stringValue: String
      var intValue: Int? { nil }
      init(_ name: String) { stringValue = name }
      init?(stringValue: String) { self.stringValue = stringValue }
      init?(intValue: Int) { nil }
    }

    /// One failure: `{"path","cause"}`.
    struct Failure: Encodable {
      var path: String
      var cause: String
    }

    func encode(to encoder: any Encoder) throws {
      let (mode, results, discovery) = (summary.mode, summary.results, summary.discovery)
      var object = encoder.container(keyedBy: Key.self)
      try object.encode(discovery.files.files.count, forKey: Key("selected"))
      try object.encode(results.done, forKey: Key(summary.doneKey))
      try object.encode(results.upToDate, forKey: Key("upToDate"))
      // The summary line's count: files a stopped run did not do (0 for a run not stopped).
      try object.encode(
        results.interrupted
          ? results.notDone(selected: discovery.files.files.count) : 0,
        forKey: Key("notDone"))
      var skipped = object.nestedContainer(keyedBy: Key.self, forKey: Key("skipped"))
      try skipped.encode(discovery.skippedCount, forKey: Key("total"))
      var byReason: [String: Int] = [:]
      for (reason, count) in discovery.skipCounts { byReason[reason.rawValue] = count }
      try skipped.encode(byReason, forKey: Key("byReason"))
      let failed =
        discovery.failures.map { Failure(path: $0.path.displayString, cause: $0.cause) }
        + results.failures.map {
          Failure(path: $0.path.displayString, cause: $0.failure.description)
        }
        + results.entryFailures.map { Failure(path: $0.path.displayString, cause: $0.cause) }
      var failures = object.nestedContainer(keyedBy: Key.self, forKey: Key("failed"))
      try failures.encode(failed.count, forKey: Key("count"))
      try failures.encode(failed, forKey: Key("list"))
      if mode == .compress {
        try object.encode(results.grown, forKey: Key("grown"))
        try object.encode(results.stored.count, forKey: Key("stored"))
      }
      if mode == .compress || mode == .decompress {
        try object.encode(results.removed, forKey: Key("removed"))
        try object.encode(results.keptHardLinked, forKey: Key("keptHardLinked"))
        try object.encode(results.keptChanged, forKey: Key("keptChanged"))
        try object.encode(results.hardLinked, forKey: Key("hardLinked"))
        var links = object.nestedContainer(keyedBy: Key.self, forKey: Key("symbolicLinks"))
        try links.encode(results.linksWritten, forKey: Key("written"))
        try links.encode(results.linksUpToDate, forKey: Key("upToDate"))
        var folders = object.nestedContainer(keyedBy: Key.self, forKey: Key("folders"))
        try folders.encode(results.foldersMade, forKey: Key("made"))
        try folders.encode(results.foldersUpdated, forKey: Key("updated"))
        try folders.encode(results.foldersUpToDate, forKey: Key("upToDate"))
      }
      if mode == .compress {
        try object.encode(results.deleted, forKey: Key("deleted"))
        try object.encode(results.keptForeign, forKey: Key("keptForeign"))
      }
      if summary.snapshot {
        try object.encode(results.linked, forKey: Key("linked"))
        try object.encode(results.linkFallbacks, forKey: Key("linkFallbacks"))
      }
    }
  }
}
