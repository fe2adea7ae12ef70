import SqueezeSystem

/// The lines a file's outcome prints on stderr: with `-v` one per file (`a: 1.00 MB →
/// 300 kB, 70.0 % saved`, `b: up to date`, `c: OK`, `d: removed`), and whatever `-v` or not
/// a failure (`squeeze: e: …`), an original kept by `--rm` (unless `-q`), or one line for all
/// the failures on a read-only file system. A file system with no room left stops the run,
/// which says so in one line of its own (``FullDisk``): its files' failures print nothing.
///
/// The scheduler records outcomes and passes on those ``mayPrint(_:verbosity:)`` accepts;
/// the ``ProgressReporter`` turns them into lines here, on the main actor, above the bar.
struct FileMessages {
  /// The run's listing, for the files' paths.
  let list: FileList
  /// What the run does to each file.
  let operation: Operation
  /// How much is printed.
  let verbosity: Verbosity
  /// Which files a mirror copies into stored members (``FileSettings/stores(_:)``), whose
  /// `-v` line says so rather than "grew"; nil when none is.
  let storing: FileSettings?
  /// Where outputs go, to name a linked output (`--link-dest`); nil when not known.
  var plan: OutputPlan? = nil
  /// The earlier snapshots (`--link-dest`) as displayed, in the order given.
  var linkDestinations: [RawPath] = []
  /// Read-only file systems reported so far.
  private var readOnly = ReadOnlyFileSystems()

  /// The messages of a run over `list`; `storing` says which files a mirror stores.
  init(list: FileList, operation: Operation, verbosity: Verbosity, storing: FileSettings? = nil) {
    self.list = list
    self.operation = operation
    self.verbosity = verbosity
    self.storing = storing.flatMap { $0.wrapsCompressedNames ? $0 : nil }
  }

  /// True when `outcome` can print a line at `verbosity`: the scheduler passes on only
  /// these, so a quiet run of many files posts nothing per file.
  static func mayPrint(_ outcome: FileOutcome, verbosity: Verbosity) -> Bool {
    switch outcome {
    case .failed(.interrupted): false
    // The run stops and says so once (FullDisk), not once per file.
    case .failed(let failure) where failure.outOfSpaceOutput != nil: false
    case .failed: true
    case _ where verbosity == .verbose: true
    case .done(_, _, _, .failed?, _): true
    case .done(_, _, _, .keptHardLinked?, _), .done(_, _, _, .keptChanged?, _):
      verbosity != .quiet
    default: false
    }
  }

  /// The lines of file `index`'s `outcome`, in order.
  mutating func lines(for outcome: FileOutcome, file index: Int) -> [String] {
    let verbose = verbosity == .verbose
    let path = list.displayPath(of: list.files[index])
    var lines: [String] = []
    switch outcome {
    case .done(let bytesIn, let bytesOut, let output, let removal, _):
      if verbose {
        lines.append(
          operation == .compress
            ? RunSummary.compressedLine(
              path, bytesIn: bytesIn, bytesOut: bytesOut,
              stored: storing?.stores(list.name(of: list.files[index])) ?? false)
            : "\(path.displayString): \(ByteFormat.format(bytesIn)) → \(ByteFormat.format(bytesOut)) → \(output.path.displayString)"
        )
      }
      switch removal {
      case nil, .alreadyGone:
        break
      case .removed:
        if verbose { lines.append("\(path.displayString): removed") }
      case .keptHardLinked(let links):
        if verbosity != .quiet {
          lines.append(
            "squeeze: \(path.displayString): has \(links) hard links; kept (use --force to remove it)"
          )
        }
      case .keptChanged:
        if verbosity != .quiet {
          lines.append("squeeze: \(path.displayString): changed after it was read; kept")
        }
      case .failed(let error):
        lines += failureLines(.cannotRemove(error), file: index, path: path)
      }
    case .upToDate, .alreadyCurrent:
      if verbose { lines.append("\(path.displayString): up to date") }
    case .linked(let source):
      if verbose, let link = linkDescription(of: index, from: source) {
        lines.append("\(path.displayString): linked \(link)")
      }
    case .linkFellBack(let error):
      if verbose {
        let cause = error.map { ": \($0)" } ?? ": it changed since it was planned"
        lines.append("\(path.displayString): cannot link its earlier output\(cause); compressed")
      }
    case .verified:
      if verbose { lines.append("\(path.displayString): OK") }
    case .failed(.interrupted):
      // Not a failure of the file: the run is stopping.
      break
    case .failed(let failure):
      lines += failureLines(failure, file: index, path: path)
    }
    return lines
  }

  /// `from 'DIR/x.gz' → 'NEW/x.gz'` for a file linked from an earlier snapshot.
  private func linkDescription(of index: Int, from source: LinkSource) -> String? {
    guard source.destination < linkDestinations.count,
      let name = plan?.outputName(for: list.name(of: list.files[index]))
    else { return nil }
    let relative = list.mirrorPath(ofDirectory: list.files[index].directory).appending(name)
    let earlier = linkDestinations[source.destination].appending(relative)
    let new = plan?.mirrorDisplay(relative) ?? relative
    return "from \(earlier.displayString) → \(new.displayString)"
  }

  /// A file's failure, or one line for all the failures on a read-only file system.
  private mutating func failureLines(
    _ failure: FileFailure, file index: Int, path: RawPath
  ) -> [String] {
    switch readOnly.report(failure, path: path, sourceDevice: list.files[index].device) {
    case .notReadOnly: ["squeeze: \(path.displayString): \(failure)"]
    case .first(let message): [message]
    case .alreadyReported: []
    }
  }
}
