import Glibc

/// `squeeze timeline <task-log> [-o <file.svg|file.html|file.json>]`: draws a task-state log
/// as one self-contained picture, an interactive page, or a Chrome trace, and says on stderr
/// what it wrote where (or, with status 1, why it could not).
struct TimelineCommand {
  let options: TimelineOptions

  /// Reads the log, renders it, and writes the result atomically (a temporary beside it,
  /// renamed into place).
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
    if let drawn = try? FileStatus.of(log, in: AT_FDCWD, followingSymlinks: true),
      let existing = try? FileStatus.of(output, in: AT_FDCWD, followingSymlinks: true),
      FileIdentity(drawn) == FileIdentity(existing)
    {
      throw .isTheLog(output)
    }
    let model = TimelineModel(data: data)
    let document: String
    switch format {
    case .svg: document = TimelineRenderer(model: model).svg()
    case .html: document = TimelinePage(model: model).html()
    case .chromeTrace: document = ChromeTrace(model: model).json()
    }
    let text = Array(document.utf8)
    do {
      try writeAtomically(text, to: output)
    } catch {
      throw .cannotWrite(output, error)
    }
    let what: String
    switch format {
    case .svg: what = "timeline"
    case .html: what = "interactive timeline"
    case .chromeTrace: what = "Chrome trace (Perfetto, chrome://tracing)"
    }
    stderr.write(
      "squeeze: wrote \(what) '\(output.displayString)' (\(ByteFormat.format(Int64(text.count))), \(ByteFormat.count(data.tasks.count)) tasks, \(model.threads.count) threads)\n"
    )
  }

  private func readWholeFile(_ path: RawPath) throws(SystemError) -> [UInt8] {
    let descriptor = try FileDescriptor.open(path, flags: O_RDONLY, symlinks: .always)
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

  private func writeAtomically(_ bytes: [UInt8], to path: RawPath) throws(SystemError) {
    let folder = path.parent
    let temporary = folder.appending(TemporaryNamer().next())
    let descriptor = try FileDescriptor.open(
      temporary, flags: O_WRONLY | O_CREAT | O_EXCL, permissions: 0o644, symlinks: .always)
    do throws(SystemError) {
      try descriptor.writeAll(bytes)
      try descriptor.sync()
      try descriptor.close()
      _ = try temporary.withCString { (from) throws(SystemError) in
        try path.withCString { (to) throws(SystemError) in
          try retryingOnInterrupt { rename(from, to) }
        }
      }
    } catch {
      _ = temporary.withCString { unlink($0) }
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
  /// The drawing could not be written.
  case cannotWrite(RawPath, SystemError)

  var description: String {
    switch self {
    case .cannotRead(let path, let error): "cannot read '\(path.displayString)': \(error)"
    case .notATaskLog(let path, let error): "'\(path.displayString)': \(error)"
    case .isTheLog(let path):
      "'\(path.displayString)' is the log being drawn; not replaced (name another -o)"
    case .cannotWrite(let path, let error): "cannot write '\(path.displayString)': \(error)"
    }
  }
}
