import SqueezeGzip
import SqueezeSystem
import SqueezeTaskLog

/// `squeeze -l`: a table like gzip's `-l` (compressed size, uncompressed size, ratio, name)
/// with a totals row, with `-v` gzip's `-lv` columns before them (method, CRC-32, date and
/// time), or the same as JSON with `--json`.
///
/// Each file is decoded to the end, so the uncompressed size is exact (multi-member files,
/// files over 4 GiB) and a damaged file is an error, not a made-up row; gzip 1.12 reads only
/// the last trailer (a file of two members shows the second one's size).
/// The ratio leaves out header and trailer bytes:
/// `(uncompressed - (compressed - headers - trailers)) / uncompressed`. The name column is
/// the path the file would decompress to (with `-N`, the name stored in its header).
package struct ListCommand {
  /// The run's configuration, resolved once.
  let configuration: RunConfiguration

  /// The list command of a run configured as `configuration`.
  package init(configuration: RunConfiguration) {
    self.configuration = configuration
  }

  /// One listed file.
  struct Entry: Equatable {
    /// The `.gz` file as displayed.
    var path: RawPath
    /// The path it decompresses to.
    var name: RawPath
    /// The file's size in bytes.
    var compressed: Int64
    /// The uncompressed size in bytes, over all members.
    var uncompressed: Int64
    /// Header and trailer bytes of all members.
    var overhead: Int64
    /// The CRC-32 in the last member's trailer.
    var crc: UInt32 = 0
    /// The date column's time, in seconds since the epoch: the file's modification time, or
    /// with `-N` its header's MTIME when that is set (as gzip's `-lv`).
    var modificationTime: Int64 = 0
  }

  /// Lists the files and returns the exit status.
  @MainActor
  package func run() async -> ExitStatus {
    let stderr = TextOutput.standardError
    let decoders = DecoderPool(engine: configuration.engine)
    var entries: [Entry] = []
    var failed = false
    if configuration.readsStandardInput {
      do throws(FileFailure) {
        let decoded = try Self.entry(
          decoding: 0, path: "(standard input)", name: "stdout", decoders: decoders)
        entries.append(Self.dated(decoded, descriptor: 0))
      } catch {
        stderr.write("squeeze: (standard input): \(error)\n")
        failed = true
      }
    } else {
      let bases = BaseDirectories()
      let found = await RunCommand.discover(
        configuration.paths, options: configuration.selection, bases: bases,
        namer: TemporaryNamer())
      for failure in found.failures {
        stderr.write("squeeze: \(failure)\n")
        failed = true
      }
      if configuration.verbosity > .quiet {
        for warning in found.warnings { stderr.write("squeeze: \(warning)\n") }
      }
      let list = found.files
      for index in list.files.indices {
        let file = list.files[index]
        let path = list.displayPath(of: file)
        let name =
          GzipNaming.decompressedName(
            of: list.name(of: file), suffix: configuration.selection.suffix)
          ?? list.name(of: file)
        do throws(FileFailure) {
          let source = try SourceFile.open(
            index: index, list: list, bases: bases,
            symlinks: configuration.files.sourceSymlinks)
          defer { Descriptor.close(source.descriptor) }
          var entry = try Self.entry(
            decoding: source.descriptor, path: path, name: Self.sibling(of: path, named: name),
            decoders: decoders)
          if configuration.files.usesHeaderNameAndTime, let header = entry.header,
            let stored = try DecompressionJob.storedName(in: header)
          {
            entry.entry.name = Self.sibling(of: path, named: stored)
          }
          entries.append(
            Self.dated(
              entry, descriptor: source.descriptor,
              headerTime: configuration.files.usesHeaderNameAndTime))
        } catch {
          stderr.write("squeeze: \(path.displayString): \(error)\n")
          failed = true
        }
      }
    }
    let text =
      configuration.json
      ? Self.json(entries)
      : Self.table(
        entries, rowsOnly: configuration.verbosity <= .quiet,
        verbose: configuration.verbosity >= .verbose)
    switch TextOutput.standardOutput.writeResults(text, what: "the list") {
    case .outOfSpace: return .outOfSpace
    case .failed: return .failure
    case .written: return failed ? .failure : .success
    }
  }

  /// Decodes a whole gzip stream and measures it.
  ///
  /// - Returns: the measures, and the first member's header (its stored name is shown with
  ///   `-N`).
  /// - Throws: ``FileFailure`` for a damaged or unreadable file.
  static func entry(
    decoding descriptor: Int32, path: RawPath, name: RawPath, decoders: DecoderPool
  ) throws(FileFailure) -> (entry: Entry, header: GzipHeader?) {
    let decoder = try decoders.withWorkspace { (workspace) throws(FileFailure) in
      try GzipFileReader.decode(
        descriptor, workspace: workspace, stop: nil, progress: { _ in }, restart: {}
      ) { _ in }
    }
    return (
      Entry(
        path: path, name: name, compressed: decoder.offset, uncompressed: decoder.totalOutput,
        overhead: decoder.overheadBytes, crc: decoder.lastCRC ?? 0),
      decoder.firstHeader
    )
  }

  /// `decoded`'s entry with the date column's time, as gzip's `-lv` chooses it: the header's
  /// MTIME with `-N` (`headerTime`) when it is not 0, otherwise the modification time of
  /// the file open at `descriptor` (`fstat(2)`; for standard input, whatever it is).
  static func dated(
    _ decoded: (entry: Entry, header: GzipHeader?), descriptor: Int32, headerTime: Bool = false
  ) -> Entry {
    var entry = decoded.entry
    if headerTime, let stored = decoded.header?.modificationTime, stored != 0 {
      entry.modificationTime = Int64(stored)
    } else if let status = try? Descriptor.status(descriptor) {
      entry.modificationTime = status.modificationTime.seconds
    }
    return entry
  }

  /// `name` in the folder of `path` as displayed (`dir/a.gz` → `dir/a`, `a.gz` → `a`).
  static func sibling(of path: RawPath, named name: RawPath) -> RawPath {
    path.bytes.contains(UInt8(ascii: "/")) ? path.parent.appending(name) : name
  }

  /// gzip's ratio: the share of the uncompressed size saved, in percent, header and trailer
  /// left out (gzip's manual, `--list`): the table's "ratio" column and the JSON's
  /// `savedPercent`.
  static func ratio(compressed: Int64, uncompressed: Int64, overhead: Int64) -> Double {
    guard uncompressed > 0 else { return 0 }
    return Double(uncompressed - (compressed - overhead)) / Double(uncompressed) * 100
  }

  /// The table: gzip -l's columns, then `(totals)` when there is more than one file (nothing
  /// at all when there is none, as gzip prints its heading with the first row); with
  /// `rowsOnly` (`-q`), one row per file and neither the heading nor the totals, as
  /// `gzip -lq` prints it. With `verbose` (`-v`), each row starts with gzip -lv's columns
  /// (`defla af083b2d Dec  2 14:34 `: the method, always deflate, the last trailer's CRC-32
  /// in hex, and ``Entry/modificationTime`` in local time), the heading with their names and
  /// the totals row with as many spaces, as gzip 1.12 prints them.
  static func table(_ entries: [Entry], rowsOnly: Bool = false, verbose: Bool = false) -> String {
    func pad(_ text: String, _ width: Int) -> String {
      String(repeating: " ", count: max(0, width - text.count)) + text
    }
    var text = ""
    // No rows, no heading: gzip prints its heading with the first row.
    if !rowsOnly && !entries.isEmpty {
      if verbose { text += "method  crc     date  time  " }
      text += pad("compressed", 19) + " " + pad("uncompressed", 19) + "  ratio uncompressed_name\n"
    }
    func row(_ compressed: Int64, _ uncompressed: Int64, _ overhead: Int64, _ name: String)
      -> String
    {
      let ratio = ByteFormat.fixed(
        Self.ratio(compressed: compressed, uncompressed: uncompressed, overhead: overhead), 1)
      return pad(String(compressed), 19) + " " + pad(String(uncompressed), 19) + " " + pad(ratio, 5)
        + "% " + name + "\n"
    }
    for entry in entries {
      if verbose { text += Self.verboseColumns(entry) }
      text += row(entry.compressed, entry.uncompressed, entry.overhead, entry.name.displayString)
    }
    if entries.count > 1 && !rowsOnly {
      if verbose { text += String(repeating: " ", count: 28) }
      text += row(
        entries.reduce(0) { $0 + $1.compressed }, entries.reduce(0) { $0 + $1.uncompressed },
        entries.reduce(0) { $0 + $1.overhead }, "(totals)")
    }
    return text
  }

  /// gzip -lv's first columns for `entry`, 28 characters: `defla af083b2d Dec  2 14:34 `
  /// (gzip's `"%5s %08lx "` and `"%s%3d %02d:%02d "`), with `??? ?? ??:?? ` for a time the
  /// C library cannot convert.
  static func verboseColumns(_ entry: Entry) -> String {
    func padded(_ value: Int, _ width: Int, with filler: Character) -> String {
      let digits = String(value)
      return String(repeating: filler, count: max(0, width - digits.count)) + digits
    }
    let hex = String(entry.crc, radix: 16)
    var text = "defla " + String(repeating: "0", count: 8 - hex.count) + hex + " "
    if let time = LocalTime(seconds: entry.modificationTime) {
      text += LocalTime.monthAbbreviations[time.month - 1] + padded(time.day, 3, with: " ") + " "
      text += padded(time.hour, 2, with: "0") + ":" + padded(time.minute, 2, with: "0") + " "
    } else {
      text += "??? ?? ??:?? "
    }
    return text
  }

  /// The same as JSON: `{"schema":2,"files":[{"path","name","compressed","uncompressed",
  /// "savedPercent","ratio"}],"totals":{"compressed","uncompressed","savedPercent","ratio"}}`
  /// in that order (what the file is, then its measures, the deprecated one last), where
  /// `savedPercent` is the table's "ratio" column (gzip's: percent saved, header and trailer
  /// left out) to two decimals, and `ratio`, deprecated and kept for readers of schema 2, is
  /// as in every object squeeze prints compressed ÷ uncompressed (the file's bytes over what
  /// it decompresses to). Both are null for a file that decompresses to nothing.
  static func json(_ entries: [Entry]) -> String {
    var json = JSONWriter()
    func members(_ compressed: Int64, _ uncompressed: Int64, _ overhead: Int64) {
      json.field("compressed", compressed)
      json.field("uncompressed", uncompressed)
      if uncompressed > 0 {
        json.field(
          "savedPercent",
          Self.ratio(compressed: compressed, uncompressed: uncompressed, overhead: overhead),
          decimals: 2)
        json.field("ratio", Double(compressed) / Double(uncompressed), decimals: 4)
      } else {
        json.nullField("savedPercent")
        json.nullField("ratio")
      }
    }
    json.beginObject()
    json.field("schema", JSONSummary.schema)
    json.key("files")
    json.beginArray()
    for entry in entries {
      json.beginObject()
      json.field("path", entry.path.displayString)
      json.field("name", entry.name.displayString)
      members(entry.compressed, entry.uncompressed, entry.overhead)
      json.endObject()
    }
    json.endArray()
    json.key("totals")
    json.beginObject()
    members(
      entries.reduce(0) { $0 + $1.compressed }, entries.reduce(0) { $0 + $1.uncompressed },
      entries.reduce(0) { $0 + $1.overhead })
    json.endObject()
    json.endObject()
    json.lineBreak()
    return String(decoding: json.bytes, as: UTF8.self)
  }

}
