import SqueezeCore
import SqueezeSystem
import SqueezeTaskLog
import SqueezeTimeline

/// `squeeze timeline <task-log> [-o <file.svg|file.html|file.json>]`: draws a task-state log
/// as one self-contained picture, an interactive page, or a Chrome trace (spec §5), and says
/// on stderr what it wrote where.
struct TimelineCommand {
  let options: TimelineOptions

  /// Reads the log, renders it, and writes the result atomically (a temporary beside it,
  /// renamed into place).
  func run() -> ExitStatus {
    let stderr = TextOutput.standardError
    let log = options.log
    let bytes: [UInt8]
    do {
      bytes = try readWholeFile(log)
    } catch {
      stderr.write("squeeze: \(log.displayString): cannot read: \(error)\n")
      return .failure
    }
    let data: TaskLogData
    do {
      data = try TaskLogData.parse(bytes)
    } catch {
      stderr.write("squeeze: \(log.displayString): not a task-state log: \(error)\n")
      return .failure
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
      stderr.write(
        "squeeze: \(output.displayString): is the log being drawn; not replaced (name another -o)\n"
      )
      return .failure
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
      stderr.write("squeeze: \(output.displayString): cannot write: \(error)\n")
      return .failure
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
    return .success
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

  private func writeAtomically(_ bytes: [UInt8], to path: RawPath) throws(SystemError) {
    let folder = path.parent
    let temporary = folder.appending(TemporaryNamer().next())
    let descriptor = try FileDescriptor.open(
      temporary, flags: [.writeOnly, .create, .exclusive], permissions: 0o644, symlinks: .always)
    do throws(SystemError) {
      try descriptor.writeAll(bytes)
      try descriptor.sync()
      try descriptor.close()
      try temporary.rename(to: path)
    } catch {
      try? temporary.removeFile()
      throw error
    }
  }
}
