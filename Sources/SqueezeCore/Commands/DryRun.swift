import Glibc

/// `--dry-run`: what a run would compress (or decompress), skip and remove, decided as the
/// run would decide it (existing outputs are inspected, read-only), with nothing changed.
/// The plan is a result, so it goes to stdout (a line per step, or `plan` inside `--json`);
/// its one-line summary is a message, on stderr.
struct DryRun {
  let settings: CompressionSettings
  let list: FileList
  let bases: BaseDirectories

  /// What the dry run found.
  struct Counts {
    /// Files that would be written.
    var would = 0
    /// Files whose output is already current.
    var upToDate = 0
    /// Files that would fail.
    var failing = 0
    /// Sources that would be removed (`--rm`).
    var removing = 0
  }

  /// One line of the plan: what would happen to one path.
  struct Step: Sendable, Equatable {
    /// What would be done, as `--json`'s `plan[].action` names it.
    enum Action: String, Sendable {
      /// The file would be compressed to ``Step/output``.
      case compress
      /// The file would be restored to ``Step/output``.
      case decompress
      /// Its output is current: nothing to do.
      case upToDate
      /// It would fail; ``Step/cause`` says why.
      case fail
      /// Its original would be removed (`--rm`).
      case remove
      /// Its original would be kept despite `--rm`; ``Step/cause`` says why.
      case keep
      /// Discovery passes over it; ``Step/reason`` says why.
      case skip
    }
    /// What would be done.
    var action: Action
    /// The source (or skipped entry), as displayed.
    var path: RawPath
    /// The output it would be written to (`compress`, `decompress`).
    var output: RawPath? = nil
    /// Why: the failure, why a source is kept, or the skip reason's phrase.
    var cause: String? = nil
    /// The skip reason (`skip`), as `--json`'s `byReason` keys name it.
    var reason: SkipReason? = nil

    /// The plan's line: `would compress: a → a.gz`.
    var line: String {
      let source = path.displayString
      switch action {
      case .compress, .decompress:
        return "would \(action.rawValue): \(source) → \(output?.displayString ?? "")"
      case .upToDate: return "up to date: \(source)"
      case .fail: return "would fail: \(source): \(cause ?? "")"
      case .remove: return "would remove: \(source)"
      case .keep: return "would keep: \(source) (\(cause ?? ""))"
      case .skip: return "would skip: \(source) (\(cause ?? ""))"
      }
    }

    /// The step as a `--json` object: `{"action","path","output"|"cause"|"reason"}`.
    var json: [String: String] {
      var object = ["action": action.rawValue, "path": path.displayString]
      if let output { object["output"] = output.displayString }
      if let cause, action != .skip { object["cause"] = cause }
      if let reason { object["reason"] = reason.rawValue }
      return object
    }
  }

  /// The plan: one step per file and skip, decided as the run would decide it.
  func plan(skipped: [(path: RawPath, reason: SkipReason)]) -> (steps: [Step], counts: Counts) {
    var counts = Counts()
    var steps: [Step] = []
    let action: Step.Action = settings.operation == .compress ? .compress : .decompress
    let (collisions, duplicates) = settings.plan.collisions(in: list)
    for (index, file) in list.files.enumerated() where !duplicates.contains(index) {
      let source = list.displayPath(of: file)
      guard let name = settings.plan.outputName(for: list.name(of: file)) else {
        counts.failing += 1
        steps.append(Step(action: .fail, path: source, cause: "\(FileFailure.unknownSuffix)"))
        continue
      }
      let display = settings.plan.displayPath(named: name, of: file, in: list)
      if let other = collisions[index] {
        counts.failing += 1
        steps.append(
          Step(
            action: .fail, path: source,
            cause: "\(FileFailure.outputCollision(display, otherSource: other))"))
        continue
      }
      switch existingOutput(name: name, file: file) {
      case .upToDate where !settings.force:
        counts.upToDate += 1
        steps.append(Step(action: .upToDate, path: source))
        continue
      case .foreign where !settings.force:
        counts.failing += 1
        let failure: FileFailure =
          settings.operation == .compress ? .outputExists(display) : .outputAlreadyExists(display)
        steps.append(Step(action: .fail, path: source, cause: "\(failure)"))
        continue
      default:
        break
      }
      counts.would += 1
      steps.append(Step(action: action, path: source, output: display))
      if settings.removesSources {
        if file.linkCount > 1 && !settings.force {
          steps.append(
            Step(
              action: .keep, path: source,
              cause: "\(file.linkCount) hard links; use --force to remove it"))
        } else {
          counts.removing += 1
          steps.append(Step(action: .remove, path: source))
        }
      }
    }
    for (path, reason) in skipped {
      steps.append(Step(action: .skip, path: path, cause: reason.phrase, reason: reason))
    }
    return (steps, counts)
  }

  /// The plan's text: a line per step (what `--dry-run` prints on stdout).
  static func text(_ steps: [Step]) -> String {
    steps.map { $0.line + "\n" }.joined()
  }

  /// The summary line (stderr): `squeeze: dry run: 2 would be compressed, …; nothing was
  /// changed`.
  func summary(_ counts: Counts, skipped: Int) -> String {
    let verb = settings.operation == .compress ? "compress" : "decompress"
    var summary = [
      "\(ByteFormat.count(counts.would)) would be \(verb)ed",
      "\(ByteFormat.count(counts.upToDate)) up to date",
      "\(ByteFormat.count(skipped)) skipped",
    ]
    if settings.removesSources {
      summary.append("\(ByteFormat.count(counts.removing)) would be removed")
    }
    if counts.failing > 0 { summary.append("\(ByteFormat.count(counts.failing)) would fail") }
    return "squeeze: dry run: " + summary.joined(separator: ", ") + "; nothing was changed\n"
  }

  /// What sits at the output path now, inspected read-only.
  private func existingOutput(name: RawPath, file: FileList.File) -> ExistingOutput {
    if case .mirror(let base, _) = settings.plan.destination, base < 0 { return .absent }
    let target = settings.plan.target(named: name, of: file, in: list, bases: bases)
    switch settings.operation {
    case .compress:
      let source = FileStatusSnapshot(file)
      return
        (try? ExistingOutput.inspect(target, sourceName: list.name(of: file), source: source.status))
        ?? .foreign
    case .decompress, .test:
      return (try? target.status()) == nil ? .absent : .foreign
    }
  }
}

/// The status discovery recorded for a file, in the shape ``ExistingOutput`` reads.
private struct FileStatusSnapshot {
  let status: FileStatus

  init(_ file: FileList.File) {
    var raw = stat()
    raw.st_size = Int(file.size)
    raw.st_mtim = file.modificationTime.timespec
    raw.st_dev = UInt(file.device)
    raw.st_ino = UInt(file.inode)
    raw.st_nlink = UInt(file.linkCount)
    status = FileStatus(raw)
  }
}
