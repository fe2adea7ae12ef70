import Foundation
import Glibc
import TestSupport
import Testing

/// The order of a run's system calls, read from `strace -f -y`, shows every promise of
/// durability kept: each published file's data synced before the rename that publishes it,
/// with `--rm` the output's folder synced before the source is removed, with `--delete` the
/// run's new outputs synced before the first deletion.
@Suite(.tags(.system), .systemTier) struct DurabilityOrderTests {
  /// One system call of the trace: where it started and where it returned (line numbers of
  /// the trace; the same line for a call strace did not split).
  struct Call {
    var name: String
    /// The arguments as strace printed them, descriptors followed by `<path>` (`-y`).
    var arguments: String
    var result: String
    var entry: Int
    var exit: Int
    var succeeded: Bool { !result.hasPrefix("-1") }

    /// The `index`-th argument (0-based), split at top-level commas.
    func argument(_ index: Int) -> String? {
      var parts: [String] = []
      var depth = 0
      var inString = false
      var escaped = false
      var current = ""
      for character in arguments {
        if inString {
          current.append(character)
          if escaped {
            escaped = false
          } else if character == "\\" {
            escaped = true
          } else if character == "\"" {
            inString = false
          }
          continue
        }
        switch character {
        case "\"": inString = true
        case "(", "[", "{", "<": depth += 1
        case ")", "]", "}", ">": depth -= 1
        case "," where depth == 0:
          parts.append(current.trimmingCharacters(in: .whitespaces))
          current = ""
          continue
        default: break
        }
        current.append(character)
      }
      parts.append(current.trimmingCharacters(in: .whitespaces))
      return index < parts.count ? parts[index] : nil
    }

    /// The path `-y` printed after the descriptor argument `index` (`12</a/b>` → `/a/b`;
    /// an unnamed file, `12</a/#123>(deleted)` → `/a/#123`).
    func descriptorPath(_ index: Int) -> String? {
      guard var text = argument(index) else { return nil }
      if text.hasSuffix("(deleted)") { text.removeLast("(deleted)".count) }
      guard let open = text.firstIndex(of: "<"), text.hasSuffix(">") else { return nil }
      return String(text[text.index(after: open)..<text.index(before: text.endIndex)])
    }

    /// The string argument `index`, unquoted.
    func string(_ index: Int) -> String? {
      guard let text = argument(index), text.hasPrefix("\""), text.hasSuffix("\"") else {
        return nil
      }
      return String(text.dropFirst().dropLast())
    }
  }

  /// The calls of a trace written by `strace -f -qq -y -o FILE`, in the order they started.
  static func parse(_ trace: String) -> [Call] {
    var calls: [Call] = []
    var pending: [String: Int] = [:]  // pid → index in `calls` of its unfinished call
    for (number, raw) in trace.split(separator: "\n").enumerated() {
      let line = String(raw)
      guard let space = line.firstIndex(of: " ") else { continue }
      let pid = String(line[..<space])
      let rest = line[line.index(after: space)...].trimmingCharacters(in: .whitespaces)
      if rest.hasPrefix("<... ") {
        // "<... syncfs resumed>) = 0"
        guard let index = pending.removeValue(forKey: pid),
          let equals = rest.range(of: " = ", options: .backwards)
        else { continue }
        let resumed = rest[..<equals.lowerBound]
        if let close = resumed.range(of: "resumed>") {
          // The arguments' tail, then ')' and the padding strace puts before " = ".
          var more = resumed[close.upperBound...].trimmingCharacters(in: .whitespaces)
          if more.hasSuffix(")") { more.removeLast() }
          calls[index].arguments += more
        }
        calls[index].result = String(rest[equals.upperBound...])
        calls[index].exit = number
        continue
      }
      guard let open = rest.firstIndex(of: "("), rest.first?.isLetter == true else { continue }
      let name = String(rest[..<open])
      if rest.hasSuffix("<unfinished ...>") {
        let arguments = rest[rest.index(after: open)...].dropLast("<unfinished ...>".count)
          .trimmingCharacters(in: .whitespaces)
        pending[pid] = calls.count
        calls.append(
          Call(name: name, arguments: arguments, result: "", entry: number, exit: Int.max))
        continue
      }
      guard let equals = rest.range(of: ") = ", options: .backwards) else { continue }
      calls.append(
        Call(
          name: name, arguments: String(rest[rest.index(after: open)..<equals.lowerBound]),
          result: String(rest[equals.upperBound...]), entry: number, exit: number))
    }
    return calls
  }

  static func isTemporary(_ name: String) -> Bool {
    let last = name.split(separator: "/").last.map(String.init) ?? name
    return last.hasPrefix(".squeeze-") && last.hasSuffix(".tmp")
  }

  /// A published file: the rename of a temporary to its final name, or the link of an
  /// unnamed file (`O_TMPFILE`) under it.
  struct Publication {
    var temporary: String
    var final: String
    var rename: Call
  }

  /// What the trace shows was published, synced and removed.
  struct Reading {
    var calls: [Call]
    var publications: [Publication] = []
    /// Successful unlinks of names that are not temporaries: sources removed by `--rm`,
    /// entries pruned by `--delete`.
    var removals: [(path: String, call: Call)] = []
    var syncs: [Call] = []
    /// Whether a `syncfs` commits what was written: not on FUSE, where the kernel returns
    /// success without asking the server, and only an `fsync` of the file or folder counts.
    var syncfsCommits = true

    init(_ calls: [Call], under folder: String, syncfsCommits: Bool = true) {
      self.calls = calls
      self.syncfsCommits = syncfsCommits
      for call in calls where call.succeeded {
        switch call.name {
        case "renameat", "renameat2":
          guard let fromFolder = call.descriptorPath(0), let from = call.string(1),
            let toFolder = call.descriptorPath(2), let to = call.string(3),
            Self.isTemporary(from), !Self.isTemporary(to)
          else { continue }
          publications.append(
            Publication(
              temporary: fromFolder + "/" + from, final: toFolder + "/" + to, rename: call))
        case "linkat" where call.string(1).map(Self.isTemporary) == true:
          // linkat(folder, temporary, folder, name, 0), then the temporary unlinked: where
          // the file system refuses RENAME_NOREPLACE (FUSE).
          guard let fromFolder = call.descriptorPath(0), let from = call.string(1),
            let toFolder = call.descriptorPath(2), let to = call.string(3), !Self.isTemporary(to)
          else { continue }
          publications.append(
            Publication(
              temporary: fromFolder + "/" + from, final: toFolder + "/" + to, rename: call))
        case "linkat":
          // linkat(fd, "", folder, name, AT_EMPTY_PATH): an unnamed output given its name.
          guard call.string(1) == "", let file = call.descriptorPath(0),
            let toFolder = call.descriptorPath(2), let to = call.string(3), !Self.isTemporary(to)
          else { continue }
          publications.append(
            Publication(temporary: file, final: toFolder + "/" + to, rename: call))
        case "unlinkat":
          guard let folderPath = call.descriptorPath(0), let name = call.string(1),
            !Self.isTemporary(name)
          else { continue }
          removals.append((folderPath + "/" + name, call))
        case "fsync", "fdatasync", "syncfs":
          // Every file of the test is on one file system: a syncfs of any descriptor under
          // the test's folder commits them all.
          guard let path = call.descriptorPath(0), path.hasPrefix(folder) else { continue }
          syncs.append(call)
        default: continue
        }
      }
    }

    static func isTemporary(_ name: String) -> Bool { DurabilityOrderTests.isTemporary(name) }

    /// True when a sync of `path` (an fsync or fdatasync of a descriptor of it, or a syncfs)
    /// started after line `after` and returned before line `before`.
    func synced(_ path: String?, after: Int, before: Int) -> Bool {
      syncs.contains { sync in
        guard sync.entry > after && sync.exit < before else { return false }
        return (sync.name == "syncfs" && syncfsCommits) || path == nil
          || sync.descriptorPath(0) == path
      }
    }

    /// The last line before line `before` on which a write to `path` returned, or nil when
    /// none did (an unnamed file's `#inode` path may name a later file once it is freed).
    func lastWrite(to path: String, before: Int) -> Int? {
      calls.filter {
        ["write", "pwrite64", "writev"].contains($0.name) && $0.descriptorPath(0) == path
          && $0.exit < before
      }
      .map(\.exit).max()
    }

    /// Each publication whose data was written and not synced before its rename.
    func unsyncedPublications() -> [String] {
      publications.compactMap { publication in
        guard let written = lastWrite(to: publication.temporary, before: publication.rename.entry)
        else { return nil }
        let synced = syncs.contains { sync in
          sync.entry > written && sync.exit < publication.rename.entry
            && ((sync.name == "syncfs" && syncfsCommits)
              || [publication.temporary, publication.final].contains(sync.descriptorPath(0)))
        }
        return synced
          ? nil
          : "\(publication.final): renamed on line \(publication.rename.entry + 1) with its data, last written on line \(written + 1), not synced"
      }
    }

    /// Each removed source (`--rm`) whose output was not published and its folder synced
    /// before the removal; `outputOf` gives a source's output path.
    func sourcesRemovedEarly(outputOf: (String) -> String) -> [String] {
      removals.compactMap { removal in
        let output = outputOf(removal.path)
        guard let publication = publications.first(where: { $0.final == output }) else {
          return
            "\(removal.path): removed on line \(removal.call.entry + 1), but no rename published '\(output)'"
        }
        let folder = String(output[..<(output.lastIndex(of: "/") ?? output.endIndex)])
        let synced = syncs.contains { sync in
          sync.entry > publication.rename.exit && sync.exit < removal.call.entry
            && ((sync.name == "syncfs" && syncfsCommits) || sync.descriptorPath(0) == folder)
        }
        return synced
          ? nil
          : "\(removal.path): removed on line \(removal.call.entry + 1) before the folder of '\(output)', renamed on line \(publication.rename.entry + 1), was synced"
      }
    }

    /// With `--delete`: each publication not renamed, and synced, before the first deletion.
    func publicationsAfterTheFirstDeletion() -> [String] {
      guard let first = removals.map(\.call.entry).min() else { return [] }
      return publications.compactMap { publication in
        if publication.rename.entry > first {
          return
            "\(publication.final): published on line \(publication.rename.entry + 1), after the first deletion on line \(first + 1)"
        }
        let synced = syncs.contains {
          $0.entry > publication.rename.exit && $0.exit < first
            && ($0.name != "syncfs" || syncfsCommits)
        }
        return synced
          ? nil
          : "\(publication.final): renamed on line \(publication.rename.entry + 1), not synced before the first deletion on line \(first + 1)"
      }
    }
  }

  /// A mode whose trace is checked.
  struct Mode: CustomTestStringConvertible, Sendable {
    var name: String
    var testDescription: String { name }
  }

  static let calls =
    "openat,openat2,open,write,pwrite64,writev,fsync,fdatasync,syncfs,rename,renameat,renameat2,linkat,unlink,unlinkat,close"

  /// Traces `squeeze arguments` run in `folder` and returns the trace's text.
  static func trace(_ arguments: [String], in folder: TemporaryFolder) throws -> String {
    let output = folder.url("trace.txt")
    let result = try Shell.run(
      "/usr/bin/strace",
      ["-f", "-qq", "-y", "-o", output, "-e", "trace=\(calls)", SqueezeBinary.path] + arguments,
      currentDirectory: folder.path)
    #expect(result.status == 0, "\(result.stderrText)")
    let text = try String(contentsOfFile: output, encoding: .utf8)
    unlink(output)
    return text
  }

  static func makeFiles(_ name: String, in folder: TemporaryFolder, count: Int = 6) throws {
    for index in 0..<count {
      try folder.write(
        "\(name)/d\(index % 2)/f\(index).txt",
        TestData.text(3_000 + index * 500, seed: UInt64(index)))
    }
    try folder.write("\(name)/big.bin", TestData.text(600_000, seed: 99))
  }

  @Test(
    .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/strace"), "needs strace"),
    arguments: ["beside", "mirror", "rm", "delete", "restore", "restore-rm"].map(Mode.init))
  func eachPublishedFileIsSyncedBeforeItsRenameAndEachRemovalAfterIt(mode: Mode) throws {
    let folder = TemporaryFolder("durability-\(mode.name)")
    // The folder's real path: strace -y prints resolved paths.
    let base = URL(fileURLWithPath: folder.path).resolvingSymlinksInPath().path
    try Self.makeFiles("src", in: folder)
    var arguments: [String]
    switch mode.name {
    case "beside": arguments = ["-q", "src"]
    case "mirror": arguments = ["-q", "-o", "out", "src/"]
    case "rm": arguments = ["-q", "--rm", "src"]
    case "delete":
      let first = try SqueezeBinary.run(["-q", "-o", "out", "src/"], currentDirectory: folder.path)
      try #require(first.status == 0, "\(first.stderrText)")
      unlink(folder.url("src/d0/f0.txt"))
      unlink(folder.url("src/d1/f1.txt"))
      try folder.write("src/d0/new.txt", TestData.text(4_000, seed: 7))
      arguments = ["-q", "--delete", "-o", "out", "src/"]
    case "restore":
      let first = try SqueezeBinary.run(
        ["-q", "-o", "mirror", "src/"], currentDirectory: folder.path)
      try #require(first.status == 0, "\(first.stderrText)")
      arguments = ["-q", "-d", "-o", "restored", "mirror/"]
    default:
      let first = try SqueezeBinary.run(
        ["-q", "-o", "mirror", "src/"], currentDirectory: folder.path)
      try #require(first.status == 0, "\(first.stderrText)")
      arguments = ["-q", "-d", "--rm", "mirror"]
    }
    let text = try Self.trace(arguments, in: folder)
    let reading = Reading(Self.parse(text), under: base)
    let restoring = mode.name.hasPrefix("restore")
    let expectedPublications = mode.name == "delete" ? 1 : 7
    #expect(
      reading.publications.filter { !$0.final.hasSuffix(".squeeze-manifest") }.count
        >= expectedPublications, "\(reading.publications.map(\.final))")
    #expect(reading.unsyncedPublications() == [])
    switch mode.name {
    case "rm", "restore-rm":
      #expect(reading.removals.count == 7, "\(reading.removals.map(\.path))")
      let removedEarly = reading.sourcesRemovedEarly { source in
        restoring ? String(source.dropLast(3)) : source + ".gz"
      }
      #expect(removedEarly == [])
    case "delete":
      #expect(reading.removals.count >= 2, "\(reading.removals.map(\.path))")
      #expect(reading.publicationsAfterTheFirstDeletion() == [])
    default:
      #expect(reading.removals.isEmpty, "\(reading.removals.map(\.path))")
    }

    // The check is not vacuous: the same trace without its syncs fails it.
    let unsynced = text.split(separator: "\n").filter {
      !($0.contains(" fsync(") || $0.contains(" fdatasync(") || $0.contains(" syncfs(")
        || $0.contains("fsync resumed>") || $0.contains("syncfs resumed>"))
    }.joined(separator: "\n")
    let withoutSyncs = Reading(Self.parse(unsynced), under: base)
    #expect(withoutSyncs.syncs.isEmpty && !reading.syncs.isEmpty)
    #expect(!withoutSyncs.unsyncedPublications().isEmpty)
    if mode.name.hasSuffix("rm") {
      #expect(
        !withoutSyncs.sourcesRemovedEarly { restoring ? String($0.dropLast(3)) : $0 + ".gz" }
          .isEmpty)
    }
    if mode.name == "delete" { #expect(!withoutSyncs.publicationsAfterTheFirstDeletion().isEmpty) }
  }
}
