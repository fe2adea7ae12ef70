import SqueezeCore
import SqueezeSystem
import SqueezeTaskLog
import SqueezeTimeline

/// `squeeze timeline <task-log> [-o <file.svg|file.html|file.json>]`: draws a task-state log
/// as one self-contained picture, an interactive page, or a Chrome trace, and says on stderr
/// what it wrote where (or, with status 1, why it could not).
struct TimelineCommand {
  let options: TimelineOptions

  /// Reads the log, renders it, and writes the result atomically (a temporary beside it,
  /// renamed into place), as ``OutputCheck`` allows.
  func run() -> ExitStatus {
    let stderr = TextOutput.standardError
    do throws(TimelineError) {
      try draw(stderr: stderr)
      return .success
    } catch {
      stderr.write("squeeze: \(error)\n")
      return .failure
    }
  }

  private func draw(stderr: TextOutput) throws(TimelineError) {
    let log = options.log
    let bytes: [UInt8]
    do {
      bytes = try readWholeFile(log)
    } catch {
      throw .cannotRead(log, error)
    }
    let data: TaskLogData
    do {
      data = try TaskLogData.parse(bytes)
    } catch {
      throw .notATaskLog(log, error)
    }
    let output = options.resolvedOutput
    // The parser refused other extensions (a usage error); the default is .svg.
    let format = options.format ?? .svg
    if let drawn = try? FileStatus.of(
      log, in: Descriptor.currentDirectory, followingSymlinks: true),
      let existing = try? FileStatus.of(
        output, in: Descriptor.currentDirectory, followingSymlinks: true),
      FileIdentity(drawn) == FileIdentity(existing)
    {
      throw .isTheLog(output)
    }
    // Decided before drawing, so a refusal costs nothing; a file that appears at a free path
    // in the meantime is kept (the rename does not replace).
    let check = try OutputCheck.inspect(output, force: options.force)
    let model = TimelineModel(data: data)
    let document: String
    switch format {
    case .svg: document = TimelineRenderer(model: model).svg()
    case .html: document = TimelinePage(model: model).html()
    case .chromeTrace: document = ChromeTrace(model: model).json()
    }
    let text = Array(document.utf8)
    try check.write(text, to: output)
    let what: String
    switch format {
    case .svg: what = "timeline"
    case .html: what = "interactive timeline"
    case .chromeTrace: what = "Chrome trace (Perfetto, chrome://tracing)"
    }
    let tasks = data.tasks.count == 1 ? "1 task" : "\(ByteFormat.count(data.tasks.count)) tasks"
    let threads = model.threads.count == 1 ? "1 thread" : "\(model.threads.count) threads"
    stderr.write(
      "squeeze: wrote \(what) '\(output.displayString)' (\(ByteFormat.format(Int64(text.count))), \(tasks), \(threads))\n"
    )
    if let warning = Self.incompleteLogWarning(data, log: log) { stderr.write(warning + "\n") }
  }

  /// The line that says a log stops before its run's `end` event (the run was killed, or is
  /// still going), so the picture is not taken for a whole run: `squeeze: warning:
  /// 'run.jsonl' stops before the run's end (killed, or still running): drew its first
  /// 1.20 s`, with `, its last line cut off` when the log ends in the middle of a line. Nil
  /// for a log that reached its end.
  static func incompleteLogWarning(_ data: TaskLogData, log: RawPath) -> String? {
    guard data.end == nil else { return nil }
    let cut = data.endsMidLine ? ", its last line cut off" : ""
    return
      "squeeze: warning: '\(log.displayString)' stops before the run's end (killed, or still running): drew its first \(ByteFormat.seconds(data.duration))\(cut)"
  }

  private func readWholeFile(_ path: RawPath) throws(SystemError) -> [UInt8] {
    let descriptor = try FileDescriptor.open(path, flags: .readOnly, symlinks: .always)
    var result: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 20)
    while true {
      var failure: SystemError? = nil
      let count = chunk.withUnsafeMutableBytes { raw -> Int in
        do throws(SystemError) { return try descriptor.read(into: raw) } catch {
          failure = error
          return 0
        }
      }
      if let failure { throw failure }
      if count == 0 { break }
      result.append(contentsOf: chunk[..<count])
    }
    return result
  }
}

/// What sits at `squeeze timeline`'s output, and so how the drawing goes there: the rules of
/// `--task-log` for its log, with "a drawing squeeze made" for "a task log".
///
/// - nothing: a new file (a temporary beside it, renamed into place without replacing
///   anything that appeared meanwhile);
/// - an empty file, a drawing squeeze made (``isDrawing(_:)``), or with `-f` any regular
///   file: replaced the same way (a new file: a reader of the old one keeps it);
/// - a named pipe or character device (also through a link): written as it is;
/// - a symbolic link to anything else: not followed; with `-f` the link is replaced;
/// - a folder, a socket or a block device: never replaced.
enum OutputCheck {
  /// Nothing is there.
  case create
  /// A file or link is there, and may be replaced.
  case replace
  /// A pipe or device is there: the drawing is written into it.
  case writeInto

  /// Decides what to do at `path`.
  ///
  /// - Throws: ``TimelineError`` naming why the drawing cannot go there.
  static func inspect(_ path: RawPath, force: Bool) throws(TimelineError) -> OutputCheck {
    let here: FileStatus
    do {
      here = try FileStatus.of(path, in: Descriptor.currentDirectory, followingSymlinks: false)
    } catch  where error == .noSuchFile {
      return .create
    } catch {
      throw .cannotWrite(path, error)
    }
    var target = here
    if here.kind == .symbolicLink,
      let followed = try? FileStatus.of(
        path, in: Descriptor.currentDirectory, followingSymlinks: true)
    {
      target = followed
    }
    switch (here.kind, target.kind) {
    case (_, .fifo), (_, .characterDevice):
      return .writeInto
    case (.regular, _):
      guard force || here.size == 0 || isDrawing(at: path) else { throw .notADrawing(path) }
      return .replace
    case (.symbolicLink, _):
      guard force else { throw .symbolicLink(path) }
      return .replace
    case (let kind, _):
      throw .inTheWay(path, kind)
    }
  }

  /// The first bytes of each drawing squeeze makes (this version and earlier ones): an SVG,
  /// the page, a Chrome trace. ``TimelineRenderer``, ``TimelinePage`` and ``ChromeTrace``
  /// begin so (a test checks), and the title of the first two then begins with "squeeze
  /// timeline: ".
  static let signatures: [(prefix: [UInt8], title: Bool)] = [
    (
      Array(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
          .utf8), true
    ),
    (Array("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n".utf8), true),
    (Array(#"{"displayTimeUnit":"ms","otherData":{"isolation":"#.utf8), false),
  ]

  /// True when `head` (a file's first bytes, 512 or all) is the start of a drawing squeeze
  /// made.
  static func isDrawing(_ head: [UInt8]) -> Bool {
    let title = Array("<title>squeeze timeline: ".utf8)
    return signatures.contains { signature in
      guard head.starts(with: signature.prefix) else { return false }
      guard signature.title else { return true }
      return head.indices.contains { head[$0...].starts(with: title) }
    }
  }

  /// True when the regular file at `path` begins like a drawing squeeze made.
  private static func isDrawing(at path: RawPath) -> Bool {
    guard let file = try? FileDescriptor.open(path, flags: .readOnly, symlinks: .never) else {
      return false
    }
    var head = [UInt8](repeating: 0, count: 512)
    guard let count = try? file.readFully(into: &head, at: 0) else { return false }
    return isDrawing(Array(head[..<count]))
  }

  /// Writes `bytes` to `path` as decided.
  ///
  /// - Throws: ``TimelineError/cannotWrite(_:_:)``, or ``TimelineError/appeared(_:)`` when
  ///   something appeared at a path that was free.
  func write(_ bytes: [UInt8], to path: RawPath) throws(TimelineError) {
    do throws(SystemError) {
      switch self {
      case .writeInto:
        let descriptor = try FileDescriptor.open(
          path, flags: [.writeOnly, .nonBlocking, .noControllingTerminal], symlinks: .always)
        // Opened without blocking (a pipe no process reads fails at once, ENXIO); written
        // blocking.
        Descriptor.clearStatusFlags(descriptor.rawValue)
        try descriptor.writeAll(bytes)
        try descriptor.close()
      case .create, .replace:
        try Self.writeAtomically(bytes, to: path, replacing: self == .replace)
      }
    } catch  where error == .fileExists && self == .create {
      throw .appeared(path)
    } catch  where error == .noSuchDevice && self == .writeInto {
      throw .noReader(path)
    } catch {
      throw .cannotWrite(path, error)
    }
  }

  /// A temporary beside `path`, written, synced and renamed to it (over what is there only
  /// when `replacing`).
  private static func writeAtomically(_ bytes: [UInt8], to path: RawPath, replacing: Bool)
    throws(SystemError)
  {
    let folder = path.parent
    let temporary = folder.appending(TemporaryNamer().next())
    let descriptor = try FileDescriptor.open(
      temporary, flags: [.writeOnly, .create, .exclusive], permissions: 0o644, symlinks: .never)
    do throws(SystemError) {
      try descriptor.writeAll(bytes)
      try descriptor.sync()
      try descriptor.close()
      try temporary.withCString { (from) throws(SystemError) in
        try path.withCString { (to) throws(SystemError) in
          try Descriptor.rename(
            Descriptor.currentDirectory, from, to: Descriptor.currentDirectory, to,
            replacing: replacing)
        }
      }
    } catch {
      try? temporary.removeFile()
      throw error
    }
  }
}

/// Why `squeeze timeline` drew nothing. Each message names the file and keeps the cause.
enum TimelineError: Error, CustomStringConvertible {
  /// The log could not be read.
  case cannotRead(RawPath, SystemError)
  /// The log is not a task-state log, or holds a line squeeze cannot draw (a number out of
  /// range, a line that is not JSON): the error names the line.
  case notATaskLog(RawPath, TaskLogData.ReadError)
  /// The output is the log itself (through a link, or `-o` naming it).
  case isTheLog(RawPath)
  /// A regular file that is not a drawing squeeze made is at the output, and `-f` was not
  /// given.
  case notADrawing(RawPath)
  /// A symbolic link to something other than a pipe or device is at the output, and `-f`
  /// was not given.
  case symbolicLink(RawPath)
  /// A folder (or socket, or block device) is at the output: never replaced.
  case inTheWay(RawPath, FileKind)
  /// Something appeared at the output, free when the drawing began.
  case appeared(RawPath)
  /// The output is a named pipe that no process is reading.
  case noReader(RawPath)
  /// The drawing could not be written.
  case cannotWrite(RawPath, SystemError)

  var description: String {
    switch self {
    case .cannotRead(let path, let error): "cannot read '\(path.displayString)': \(error)"
    case .notATaskLog(let path, let error): "'\(path.displayString)': \(error)"
    case .isTheLog(let path):
      "'\(path.displayString)' is the log being drawn; not replaced (name another -o)"
    case .notADrawing(let path):
      "'\(path.displayString)' exists and is not a drawing squeeze made; not replaced (use -f to replace it)"
    case .symbolicLink(let path):
      "'\(path.displayString)' is a symbolic link; not followed (use -f to replace the link)"
    case .inTheWay(let path, let kind): "'\(path.displayString)' is \(kind); not replaced"
    case .appeared(let path):
      "'\(path.displayString)' appeared while the timeline was drawn; not replaced (run again, with -f to replace it)"
    case .noReader(let path):
      "'\(path.displayString)' is a named pipe that no process is reading; nothing written"
    case .cannotWrite(let path, let error): "cannot write '\(path.displayString)': \(error)"
    }
  }
}
