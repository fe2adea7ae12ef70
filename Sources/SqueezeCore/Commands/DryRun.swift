import Glibc

/// `--dry-run`: what a run would compress (or decompress), skip and remove, decided as the
/// run would decide it (existing outputs are inspected, read-only), with nothing changed.
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

  /// Prints one line per file and skip, then a summary line, to `output`.
  func print(skipped: [(path: RawPath, reason: SkipReason)], to output: TextOutput) -> Counts {
    var counts = Counts()
    var text = ""
    let verb = settings.operation == .compress ? "compress" : "decompress"
    let (collisions, duplicates) = settings.plan.collisions(in: list)
    for (index, file) in list.files.enumerated() where !duplicates.contains(index) {
      let source = list.displayPath(of: file)
      guard let name = settings.plan.outputName(for: list.name(of: file)) else {
        counts.failing += 1
        text += "would fail: \(source.displayString): \(FileFailure.unknownSuffix)\n"
        continue
      }
      let display = settings.plan.displayPath(named: name, of: file, in: list)
      if let other = collisions[index] {
        counts.failing += 1
        text +=
          "would fail: \(source.displayString): \(FileFailure.outputCollision(display, otherSource: other))\n"
        continue
      }
      switch existingOutput(name: name, file: file) {
      case .upToDate where !settings.force:
        counts.upToDate += 1
        text += "up to date: \(source.displayString)\n"
        continue
      case .foreign where !settings.force:
        counts.failing += 1
        let failure: FileFailure =
          settings.operation == .compress ? .outputExists(display) : .outputAlreadyExists(display)
        text += "would fail: \(source.displayString): \(failure)\n"
        continue
      default:
        break
      }
      counts.would += 1
      text += "would \(verb): \(source.displayString) → \(display.displayString)\n"
      if settings.removesSources {
        if file.linkCount > 1 && !settings.force {
          text +=
            "would keep: \(source.displayString) (\(file.linkCount) hard links; use --force to remove it)\n"
        } else {
          counts.removing += 1
          text += "would remove: \(source.displayString)\n"
        }
      }
    }
    for (path, reason) in skipped {
      text += "would skip: \(path.displayString) (\(reason.phrase))\n"
    }
    var summary = [
      "\(ByteFormat.count(counts.would)) would be \(verb)ed",
      "\(ByteFormat.count(counts.upToDate)) up to date",
      "\(ByteFormat.count(skipped.count)) skipped",
    ]
    if settings.removesSources {
      summary.append("\(ByteFormat.count(counts.removing)) would be removed")
    }
    if counts.failing > 0 { summary.append("\(ByteFormat.count(counts.failing)) would fail") }
    text += "squeeze: dry run: " + summary.joined(separator: ", ") + "; nothing was changed\n"
    output.write(text)
    return counts
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
