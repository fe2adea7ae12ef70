import Glibc

/// `squeeze -l`: a table like `gzip -l` (compressed size, uncompressed size, ratio, name)
/// with a totals row, or the same as JSON with `--json`.
///
/// As in gzip, the uncompressed size is the last member's ISIZE (the size modulo 2^32), read
/// from the trailer without decompressing, and the ratio leaves out the header and trailer
/// bytes: `(uncompressed - (compressed - header - 8)) / uncompressed`. Unlike gzip, the
/// totals row subtracts every file's header, not only the last one's.
struct ListCommand {
  let options: Options

  /// One listed file.
  struct Entry: Equatable {
    /// The `.gz` file as displayed.
    var path: RawPath
    /// The name it decompresses to (suffix removed, or with `-N` the name in the header).
    var name: RawPath
    /// The file's size in bytes.
    var compressed: Int64
    /// The last member's ISIZE.
    var uncompressed: Int64
    /// Header and trailer bytes of the first member.
    var overhead: Int64
  }

  /// Lists the files and returns the exit status.
  @MainActor
  func run() async -> ExitStatus {
    let stderr = TextOutput.standardError
    var entries: [Entry] = []
    var failed = false
    if options.readsStandardInput {
      do throws(FileFailure) {
        entries.append(try Self.entry(reading: 0, path: "(standard input)", name: "stdout"))
      } catch {
        stderr.write("squeeze: (standard input): \(error)\n")
        failed = true
      }
    } else {
      let bases = BaseDirectories()
      var discoveryOptions = DiscoveryOptions()
      discoveryOptions.wanted = .compressedOrNamed
      discoveryOptions.suffix = options.suffix
      discoveryOptions.followSymlinks = options.followSymlinks
      discoveryOptions.oneFileSystem = options.oneFileSystem
      discoveryOptions.selection = RunCommand.selection(from: options)
      discoveryOptions.removesStaleTemporaries = false
      let found = await RunCommand.discover(
        options.paths, options: discoveryOptions, bases: bases, namer: TemporaryNamer())
      for failure in found.failures {
        stderr.write("squeeze: \(failure)\n")
        failed = true
      }
      let list = found.files
      for index in list.files.indices {
        let file = list.files[index]
        let path = list.displayPath(of: file)
        let stripped =
          OutputPlan.decompressedName(of: list.name(of: file), suffix: options.suffix)
          ?? list.name(of: file)
        do throws(FileFailure) {
          let source = try SourceFile.open(index: index, list: list, bases: bases)
          defer { close(source.descriptor) }
          var entry = try Self.entry(
            reading: source.descriptor, path: path, name: stripped, size: source.status.size)
          if options.headerNameAndTime == true, let stored = try? Self.storedName(source.descriptor)
          {
            entry.name = stored
          }
          entries.append(entry)
        } catch {
          stderr.write("squeeze: \(path.displayString): \(error)\n")
          failed = true
        }
      }
    }
    TextOutput.standardOutput.write(options.json ? Self.json(entries) : Self.table(entries))
    return failed ? .failure : .success
  }

  /// Reads the header and trailer of a regular file (`size` given), or the whole stream.
  static func entry(reading descriptor: Int32, path: RawPath, name: RawPath, size: Int64? = nil)
    throws(FileFailure) -> Entry
  {
    var head = [UInt8](repeating: 0, count: 64 * 1024)
    var tail = [UInt8](repeating: 0, count: 8)
    var total: Int64 = 0
    var headCount = 0
    if let size {
      headCount = head.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
      guard headCount >= 0 else { throw .cannotRead(SystemError.current) }
      if size >= 8 {
        let count = tail.withUnsafeMutableBytes {
          pread(descriptor, $0.baseAddress, 8, off_t(size - 8))
        }
        guard count == 8 else { throw .cannotRead(SystemError.current) }
      }
      total = size
    } else {
      // A stream: keep the beginning and the last 8 bytes.
      var window: [UInt8] = []
      var chunk = [UInt8](repeating: 0, count: 128 * 1024)
      while true {
        let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count < 0 {
          if errno == EINTR { continue }
          throw .cannotRead(SystemError.current)
        }
        if count == 0 { break }
        if headCount < head.count {
          let take = min(count, head.count - headCount)
          head.replaceSubrange(headCount..<(headCount + take), with: chunk[..<take])
          headCount += take
        }
        window = Array((window + chunk[..<count]).suffix(8))
        total += Int64(count)
      }
      if window.count == 8 { tail = window }
    }
    guard total > 0 else { throw .badGzip(.empty) }
    let parsed = head.withUnsafeBytes {
      GzipHeader.parse(UnsafeRawBufferPointer(rebasing: $0[..<headCount]))
    }
    let headerLength: Int
    switch parsed {
    case .header(_, let length): headerLength = length
    case .needMoreData: throw .badGzip(.truncated(offset: Int64(headCount)))
    case .invalid(let error): throw .badGzip(error)
    }
    guard total >= Int64(headerLength) + 8 else { throw .badGzip(.truncated(offset: total)) }
    let trailer = tail.withUnsafeBytes { GzipTrailer($0)! }
    return Entry(
      path: path, name: name, compressed: total, uncompressed: Int64(trailer.size),
      overhead: Int64(headerLength) + 8)
  }

  /// The name stored in the first header, if any and safe to use.
  static func storedName(_ descriptor: Int32) throws -> RawPath? {
    var head = [UInt8](repeating: 0, count: 64 * 1024)
    let count = head.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
    guard count > 0,
      case .header(let header, _) = head.withUnsafeBytes({
        GzipHeader.parse(UnsafeRawBufferPointer(rebasing: $0[..<count]))
      }), let name = header.name.map({ RawPath(bytes: $0) }), DecompressionJob.isSafeName(name)
    else { return nil }
    return name
  }

  /// gzip's ratio: the share of the uncompressed size saved, header and trailer left out.
  static func ratio(compressed: Int64, uncompressed: Int64, overhead: Int64) -> Double {
    guard uncompressed > 0 else { return 0 }
    return Double(uncompressed - (compressed - overhead)) / Double(uncompressed) * 100
  }

  /// The table: gzip -l's columns, then `(totals)` when there is more than one file.
  static func table(_ entries: [Entry]) -> String {
    func pad(_ text: String, _ width: Int) -> String {
      String(repeating: " ", count: max(0, width - text.count)) + text
    }
    var text = pad("compressed", 19) + " " + pad("uncompressed", 19) + "  ratio uncompressed_name\n"
    func row(_ compressed: Int64, _ uncompressed: Int64, _ overhead: Int64, _ name: String)
      -> String
    {
      let ratio = ByteFormat.fixed(
        Self.ratio(compressed: compressed, uncompressed: uncompressed, overhead: overhead), 1)
      return pad(String(compressed), 19) + " " + pad(String(uncompressed), 19) + " " + pad(ratio, 5)
        + "% " + name + "\n"
    }
    for entry in entries {
      text += row(entry.compressed, entry.uncompressed, entry.overhead, entry.name.displayString)
    }
    if entries.count > 1 {
      text += row(
        entries.reduce(0) { $0 + $1.compressed }, entries.reduce(0) { $0 + $1.uncompressed },
        entries.reduce(0) { $0 + $1.overhead }, "(totals)")
    }
    return text
  }

  /// The same as JSON: `{"files":[...],"totals":{...}}`.
  static func json(_ entries: [Entry]) -> String {
    func object(_ compressed: Int64, _ uncompressed: Int64, _ overhead: Int64) -> JSONLine {
      var line = JSONLine()
      line.field("compressed", compressed)
      line.field("uncompressed", uncompressed)
      line.field(
        "ratio", ratio(compressed: compressed, uncompressed: uncompressed, overhead: overhead),
        decimals: 1)
      return line
    }
    var parts: [String] = []
    for entry in entries {
      var line = object(entry.compressed, entry.uncompressed, entry.overhead)
      line.field("path", entry.path.displayString)
      line.field("name", entry.name.displayString)
      parts.append(String(decoding: line.line.dropLast(), as: UTF8.self))
    }
    let totals = object(
      entries.reduce(0) { $0 + $1.compressed }, entries.reduce(0) { $0 + $1.uncompressed },
      entries.reduce(0) { $0 + $1.overhead })
    return "{\"files\":[" + parts.joined(separator: ",") + "],\"totals\":"
      + String(decoding: totals.line.dropLast(), as: UTF8.self) + "}\n"
  }
}
