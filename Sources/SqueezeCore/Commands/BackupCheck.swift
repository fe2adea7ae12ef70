import SqueezeEngines
import SqueezeGzip
import SqueezeSystem
import Synchronization

/// `--check` with `-o M S/`: compares a mirror with its source without restoring it, and
/// changes nothing in either.
///
/// The run's own plan (``RunPlan``) sorts every entry by the rules a re-run uses: an output
/// up to date (its header names the source, its MTIME and ISIZE match, its own modification
/// time equals the source's to the nanosecond), stale, missing, or something else in its
/// place. A re-run trusts the up-to-date ones; the check does not. It reads each such source
/// once, computes its CRC-32 (``CRC32``, the compression library's function) and length,
/// and compares them with the 8-byte trailer at the end of its output (RFC 1952 section 2.3:
/// CRC32 and ISIZE, the length modulo 2^32), without inflating anything. A source whose bytes
/// changed while its size and modification time were kept (a tool that restores mtimes, a
/// disk that rots) is found this way, where a re-run would leave the stale backup in place.
///
/// squeeze writes one gzip member per file, so the trailer covers the whole file. An output
/// made of several members (concatenated by another tool) has a last trailer that covers
/// only its last member: when the trailer does not match, the output is decoded to its end
/// (every member's CRC-32 and ISIZE checked by the decoder) and the CRC-32 and length of
/// everything it holds are compared with the source's instead. Only then is it reported as
/// differing, or as damaged when it cannot be decoded.
///
/// Sources are read in parallel by `width` tasks, each through one buffer of ``bufferSize``
/// bytes it keeps from file to file: memory is bounded by `width` × ``bufferSize`` whatever
/// the files' sizes.
struct BackupCheck: Sendable {
  /// The run's listing of the source.
  let list: FileList
  /// Naming and destination: where each source's output is.
  let settings: FileSettings
  /// The open folders.
  let bases: BaseDirectories
  /// How many sources are read at once (`--jobs`).
  let width: Int
  /// Set by a stopping signal: no new source is read.
  let stop: AtomicFlag
  /// Inflaters for outputs whose trailer does not match (the engine's).
  let decoders: DecoderPool

  /// Bytes per read of a source: 256 KiB, twice what `cat` reads at once, so the check
  /// reads as fast as a copy of the files would.
  static let bufferSize = 256 * 1024

  /// One way the backup differs from its source.
  struct Finding: Sendable, Equatable {
    /// What differs.
    enum Kind: String, Sendable, CaseIterable {
      /// The output is up to date by the re-run rules (same size and modification time) but
      /// holds other bytes: a re-run would never replace it.
      case differs
      /// The output (or link, or further name of a hard-link group) no longer matches its
      /// source by the re-run rules: the next run replaces it.
      case outOfDate
      /// Nothing is where the source's backup goes.
      case missing
      /// Something that is not squeeze's backup of this source is where it goes.
      case notBackup
      /// The output's trailer does not match and it cannot be decoded.
      case damaged
      /// An entry of the backup whose source is gone (what `--delete` would remove).
      case lost
    }
    /// What differs.
    var kind: Kind
    /// The source, or for ``Kind/lost`` the backup's entry, as displayed.
    var path: RawPath
    /// The backup's entry, when there is one to name.
    var backup: RawPath?
    /// What differs, in words.
    var detail: String

    /// The line printed for it: `S/a.txt: differs: …`.
    var line: String { "\(path.displayString): \(detail)" }
  }

  /// What checking one source against its output came to.
  enum Verdict: Sendable {
    /// Same CRC-32 and length: the backup holds the source's bytes (`bytes` of them).
    case matches(bytes: Int64)
    /// The backup differs.
    case finding(Finding)
    /// The source or output could not be read: the check of this file failed.
    case failure(path: RawPath, cause: String)
    /// A stopping signal came while it was read: not checked, and no failure of the file.
    case interrupted
  }

  /// What the whole check found.
  struct Report: Sendable {
    /// Files whose backup holds their bytes.
    var matching = 0
    /// Bytes the check read: of every source it read, as far as it read it (whether it
    /// matched, differed or failed part way), and of every backup it decoded because its
    /// trailer did not match (each backup's 8-byte trailer is not counted).
    var bytesRead: Int64 = 0
    /// The differences, in the listing's order: files, then links and hard links, folders,
    /// then entries the source lost.
    var findings: [Finding] = []
    /// Files that could not be checked, with the cause.
    var failures: [DiscoveryFailure] = []
    /// Lines for stderr under `-v`: a line per entry that matches.
    var verboseLines: [String] = []
    /// Notes for stderr (why the entries the source lost were not looked for).
    var notes: [String] = []
    /// A stopping signal ended the check before every source was read.
    var interrupted = false

    /// How many findings are of `kind`.
    func count(_ kind: Finding.Kind) -> Int { findings.count { $0.kind == kind } }
  }

  /// Checks every file, link, further name of a hard-link group and folder of `plan`.
  ///
  /// - Parameters:
  ///   - plan: the run's plan over ``list``, made against the mirror (read only).
  ///   - verbose: collect a line per matching entry (`-v`).
  func run(plan: RunPlan, verbose: Bool) async -> Report {
    var report = Report()
    var toRead: [Int] = []
    for (index, disposition) in plan.dispositions.enumerated() {
      let file = list.files[index]
      let source = list.displayPath(of: file)
      switch disposition {
      case .leftOut: continue
      // Only a snapshot plans links, and `--check` refuses `--link-dest`: a snapshot is
      // checked afterwards as the mirror it is.
      case .link: continue
      case .upToDate: toRead.append(index)
      case .fails(let failure):
        report.failures.append(DiscoveryFailure(path: source, cause: "\(failure)"))
      case .work(let existing):
        guard let name = settings.plan.outputName(for: list.name(of: file)) else { continue }
        let backup = settings.plan.displayPath(named: name, of: file, in: list)
        if existing == .stale, let error = readError(index, named: name) {
          report.failures.append(
            DiscoveryFailure(
              path: source, cause: "cannot read '\(backup.displayString)': \(error)"))
          continue
        }
        if let finding = Self.finding(existing, source: source, backup: backup, what: .file) {
          report.findings.append(finding)
        }
      }
    }
    let (verdicts, bytesRead) = await verifyAll(toRead)
    report.bytesRead = bytesRead
    for (position, verdict) in verdicts.enumerated() {
      let source = list.displayPath(of: list.files[toRead[position]])
      switch verdict {
      case nil, .interrupted?: report.interrupted = true
      case .matches?:
        report.matching += 1
        if verbose {
          report.verboseLines.append(
            "\(source.displayString): matches its backup's CRC-32 and size")
        }
      case .finding(let finding)?: report.findings.append(finding)
      case .failure(let path, let cause)?:
        report.failures.append(DiscoveryFailure(path: path, cause: cause))
      }
    }
    if let mirror = plan.mirror { checkEntries(mirror, report: &report, verbose: verbose) }
    return report
  }

  /// Why file `index`'s output (named `name`) cannot be read, or nil when it can.
  ///
  /// The plan judges an output it cannot open or read ``ExistingOutput/stale`` and leaves the
  /// error to the job that replaces it, which reports it. A check has no such job: without
  /// this, an output it cannot read (mode 000 for a user who is not its owner, an I/O error)
  /// would be reported out of date when nothing is known of it. It is inspected again, so
  /// only for outputs judged stale, and the error that inspection meets is the answer.
  private func readError(_ index: Int, named name: RawPath) -> SystemError? {
    let file = list.files[index]
    let target = settings.plan.target(named: name, of: file, in: list, bases: bases)
    do throws(SystemError) {
      _ = try ExistingOutput.inspect(
        target, sourceName: list.name(of: file), source: list.listedStatus(of: file),
        inMirror: settings.inMirror, nameless: !settings.usesHeaderNameAndTime)
      return nil
    } catch {
      return error
    }
  }

  /// What kind of backup an entry is, for messages.
  enum EntryKind {
    case file, link, hardLink
  }

  /// The finding for an entry the plan did not find up to date, or nil when it is.
  static func finding(
    _ existing: ExistingOutput?, source: RawPath, backup: RawPath, what: EntryKind,
    retimeOnly: Bool = false
  ) -> Finding? {
    let quoted = "'\(backup.displayString)'"
    switch existing {
    case .upToDate?, nil: return nil
    case .absent?:
      return Finding(
        kind: .missing, path: source, backup: backup, detail: "missing: no backup at \(quoted)")
    case .stale?:
      let detail =
        switch what {
        case .file:
          "out of date: its backup \(quoted) is of another version (its size, modification time, mode or owner differ from what the source gives); the next run replaces it"
        case .link:
          retimeOnly
            ? "out of date: its backup \(quoted) has another modification time; the next run sets it"
            : "out of date: its backup \(quoted) is not a link to the same target; the next run replaces it"
        case .hardLink:
          "out of date: its backup \(quoted) is not a hard link of its group's backup; the next run links it"
        }
      return Finding(kind: .outOfDate, path: source, backup: backup, detail: detail)
    case .foreign?:
      return Finding(
        kind: .notBackup, path: source, backup: backup,
        detail: "not backed up: \(quoted) is not squeeze's backup of it")
    case .inTheWay(let kind)?:
      return Finding(
        kind: .notBackup, path: source, backup: backup,
        detail: "not backed up: \(kind) is at \(quoted)")
    case .folderInTheWay?:
      return Finding(
        kind: .notBackup, path: source, backup: backup,
        detail: "not backed up: a folder is at \(quoted)")
    }
  }

  /// The links, further names of hard-link groups and folders of the mirror, as the plan
  /// judged them.
  private func checkEntries(_ mirror: MirrorPlan, report: inout Report, verbose: Bool) {
    for planned in mirror.links {
      let link = list.links[planned.link]
      let source = list.displayPath(of: link)
      let backup = settings.plan.mirrorDisplay(
        list.mirrorPath(ofDirectory: link.directory).appending(list.name(of: link)))
      if let finding = Self.finding(
        planned.existing, source: source, backup: backup, what: .link,
        retimeOnly: planned.retimeOnly)
      {
        report.findings.append(finding)
      } else if verbose {
        report.verboseLines.append("\(source.displayString): matches its backup")
      }
    }
    for follower in mirror.followers {
      let file = list.files[follower.file]
      guard let name = settings.plan.outputName(for: list.name(of: file)) else { continue }
      let source = list.displayPath(of: file)
      let backup = settings.plan.displayPath(named: name, of: file, in: list)
      if let finding = Self.finding(
        follower.existing, source: source, backup: backup, what: .hardLink)
      {
        report.findings.append(finding)
      } else if verbose {
        report.verboseLines.append("\(source.displayString): matches its backup")
      }
    }
    guard case .mirror(let base, _) = settings.plan.destination else { return }
    for (index, folder) in mirror.folders.enumerated()
    where folder.parent >= 0 && mirror.isMirrored[index] {
      let source = list.displayPath(ofDirectory: folder.sources[0])
      let backup = settings.plan.mirrorDisplay(folder.path)
      let location = MirrorPlan.location(ofFolder: folder.path, base: bases.descriptor(base))
      do throws(SystemError) {
        let status = try location.entryStatus()
        if status.kind != .directory {
          report.findings.append(
            Finding(
              kind: .notBackup, path: source, backup: backup,
              detail: "not backed up: \(status.kind) is at '\(backup.displayString)'"))
        }
      } catch  where error == .noSuchFile {
        // A folder missing from the backup: its files are reported missing one by one.
        report.findings.append(
          Finding(
            kind: .missing, path: source, backup: backup,
            detail: "missing: no folder at '\(backup.displayString)'"))
      } catch {
        report.failures.append(
          DiscoveryFailure(path: backup, cause: "cannot examine the backup folder: \(error)"))
      }
    }
  }

  /// Checks the files `indices` (their outputs up to date by the re-run rules) with
  /// `width` child tasks, each taking the next file from a shared cursor until none is left
  /// (or a stopping signal came), and each reading through one buffer of ``bufferSize``
  /// bytes it owns: a buffer is allocated once per task, never per file.
  ///
  /// - Returns: one verdict per file, in the order given; nil for files not read because a
  ///   stopping signal came first.
  @concurrent
  func verifyAll(_ indices: [Int]) async -> (verdicts: [Verdict?], bytesRead: Int64) {
    let cursor = Cursor()
    return await withTaskGroup(of: ([(Int, Verdict)], Int64).self) { group in
      for _ in 0..<min(width, indices.count) {
        group.addTask {
          let buffer = UnsafeMutableRawBufferPointer.allocate(
            byteCount: Self.bufferSize, alignment: 64)
          defer { buffer.deallocate() }
          var verdicts: [(Int, Verdict)] = []
          var read: Int64 = 0
          while !stop.isSet {
            let position = cursor.next()
            guard position < indices.count else { break }
            verdicts.append((position, self.verify(indices[position], buffer: buffer, read: &read)))
          }
          return (verdicts, read)
        }
      }
      var verdicts = [Verdict?](repeating: nil, count: indices.count)
      var bytesRead: Int64 = 0
      for await (part, read) in group {
        for (position, verdict) in part { verdicts[position] = verdict }
        bytesRead = bytesRead.addingSaturated(read)
      }
      return (verdicts, bytesRead)
    }
  }

  /// The next position to check, shared by the reading tasks.
  private final class Cursor: Sendable {
    private let position = Atomic<Int>(0)

    /// Takes the next position (0, 1, 2, …; each once).
    func next() -> Int { position.add(1, ordering: .relaxed).oldValue }
  }

  /// Checks file `index` against its output's trailer (and, when that does not match, against
  /// what the output decodes to).
  ///
  /// - Parameters:
  ///   - buffer: where the source is read, ``bufferSize`` bytes.
  ///   - read: increased by the bytes read of the source, and of the output when it is
  ///     decoded (``Report/bytesRead``), whatever the verdict.
  func verify(_ index: Int, buffer: UnsafeMutableRawBufferPointer, read: inout Int64) -> Verdict {
    let file = list.files[index]
    let source = list.displayPath(of: file)
    guard let name = settings.plan.outputName(for: list.name(of: file)) else {
      return .failure(path: source, cause: "\(FileFailure.unknownSuffix)")
    }
    let backup = settings.plan.displayPath(named: name, of: file, in: list)
    let target = settings.plan.target(named: name, of: file, in: list, bases: bases)
    let trailer: GzipTrailer
    do throws(SystemError) {
      let output = try target.open(flags: .source)
      let status = try output.status()
      var tail = [UInt8](repeating: 0, count: 8)
      guard status.size >= 18, try output.readFully(into: &tail, at: status.size - 8) == 8,
        let read = tail.withUnsafeBytes({ GzipTrailer($0) })
      else {
        return .finding(
          Finding(
            kind: .damaged, path: source, backup: backup,
            detail: "damaged backup: '\(backup.displayString)' is too short to be gzip"))
      }
      trailer = read
    } catch {
      return .failure(path: source, cause: "cannot read '\(backup.displayString)': \(error)")
    }
    let sum: (crc: UInt32, bytes: Int64)
    switch readSource(index, buffer: buffer, read: &read) {
    case .success(let read): sum = read
    case .failure(.interrupted): return .interrupted
    case .failure(let failure): return .failure(path: source, cause: "\(failure)")
    }
    if trailer == GzipTrailer(crc: sum.crc, uncompressedSize: sum.bytes) {
      return .matches(bytes: sum.bytes)
    }
    return decodeAndCompare(target, source: source, backup: backup, sum: sum, read: &read)
  }

  /// Reads source file `index` to its end, adding each count read to `read` (also when it
  /// then fails).
  ///
  /// - Returns: its CRC-32 and length, or why it cannot be trusted: it cannot be read, or it
  ///   is not the file the plan judged (its size or modification time changed since it was
  ///   listed, or while it was read).
  private func readSource(
    _ index: Int, buffer: UnsafeMutableRawBufferPointer, read: inout Int64
  ) -> Result<(crc: UInt32, bytes: Int64), FileFailure> {
    let file = list.files[index]
    let listed = list.listedStatus(of: file)
    let location = OutputInspection.sourceLocation(
      of: index, list: list, settings: settings, bases: bases)
    let input: FileDescriptor
    do throws(SystemError) {
      input = try location.open(flags: .source)
    } catch  where error == .noSuchFile {
      return .failure(.vanished)
    } catch {
      return .failure(.cannotOpen(error))
    }
    var crc = CRC32()
    var total: Int64 = 0
    do throws(SystemError) {
      while true {
        if stop.isSet { return .failure(.interrupted) }
        let count = try input.read(into: buffer)
        if count == 0 { break }
        crc.update(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
        total += Int64(count)
        read = read.addingSaturated(Int64(count))
      }
      let after = try input.status()
      guard total == listed.size, after.size == total,
        after.modificationTime == listed.modificationTime
      else {
        return .failure(
          .changedWhileReading(
            "listed with \(listed.size) bytes, read \(total), \(after.size) now"))
      }
    } catch {
      return .failure(.cannotRead(error))
    }
    return .success((crc.value, total))
  }

  /// The verdict on an output whose last trailer does not match the source: it is decoded to
  /// its end, every member, and what it holds compared with the source. The compressed
  /// bytes read are added to `read`.
  private func decodeAndCompare(
    _ target: RelativeLocation, source: RawPath, backup: RawPath,
    sum: (crc: UInt32, bytes: Int64), read: inout Int64
  ) -> Verdict {
    let output: FileDescriptor
    do throws(SystemError) {
      output = try target.open(flags: .source)
    } catch {
      return .failure(path: source, cause: "cannot read '\(backup.displayString)': \(error)")
    }
    // The descriptor stays open (`output` lives to the end of this function); the closure
    // below only reads through its number.
    let descriptor = output.rawValue
    var crc = CRC32()
    var compressed: Int64 = 0
    defer { read = read.addingSaturated(compressed) }
    let decoded: (members: Int, bytes: Int64)
    do throws(FileFailure) {
      decoded = try decoders.withWorkspace { (workspace) throws(FileFailure) in
        let file = try GzipFileReader.decodeFile(
          descriptor, knownSize: nil, workspace: workspace, stop: stop,
          progress: { compressed += Int64($0) },
          restart: { () throws(FileFailure) in crc = CRC32() },
          sink: { bytes in crc.update(bytes) })
        return (file.decoder.members, file.decoder.totalOutput)
      }
    } catch .interrupted {
      return .interrupted
    } catch .badGzip(let fault) {
      return .finding(
        Finding(
          kind: .damaged, path: source, backup: backup,
          detail:
            "damaged backup: its trailer does not match the source and '\(backup.displayString)' cannot be decoded: \(fault)"
        ))
    } catch {
      return .failure(path: source, cause: "cannot read '\(backup.displayString)': \(error)")
    }
    if crc.value == sum.crc && decoded.bytes == sum.bytes { return .matches(bytes: sum.bytes) }
    let hex = { (value: UInt32) in
      String(value, radix: 16).leftPadded(to: 8)
    }
    _ = consume output
    let what =
      decoded.bytes == sum.bytes
      ? "CRC-32 \(hex(sum.crc)), its backup's \(hex(crc.value))"
      : "\(sum.bytes) bytes, its backup \(decoded.bytes)"
    let members = decoded.members == 1 ? "" : " (\(decoded.members) gzip members)"
    return .finding(
      Finding(
        kind: .differs, path: source, backup: backup,
        detail:
          "differs: its backup '\(backup.displayString)'\(members) has the same size and modification time but other bytes (the source: \(what))"
      ))
  }
}

extension String {
  /// The string with zeros before it up to `width` characters (hex digits of a CRC-32).
  fileprivate func leftPadded(to width: Int) -> String {
    String(repeating: "0", count: max(0, width - count)) + self
  }
}
