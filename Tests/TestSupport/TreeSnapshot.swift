import Foundation
import Glibc

/// Every entry below a folder as `lstat` sees it, by raw name: what a round trip must give
/// back (kind, permission bits, modification time to the nanosecond, owner and group, link
/// target, contents, hard-link groups), and what a re-run must not touch (inode, ctime).
public struct TreeSnapshot: Sendable {
  /// One entry.
  public struct Entry: Sendable, Equatable, CustomStringConvertible {
    /// `file`, `folder`, `link` or `other`.
    public var kind: String
    /// `st_mode & 0o7777` (0 for links, whose bits mean nothing on Linux).
    public var permissions: UInt32
    /// Modification time in nanoseconds since the epoch.
    public var modified: Int
    /// Owner id.
    public var owner: UInt32
    /// Group id.
    public var group: UInt32
    /// A link's target bytes.
    public var target: [UInt8]?
    /// A file's bytes.
    public var contents: [UInt8]?
    /// For a file with several names in the tree: the first of them (in byte order).
    public var firstName: [UInt8]?

    /// One line for a failing test's message.
    public var description: String {
      let target = self.target.map { " -> \(String(decoding: $0, as: UTF8.self))" } ?? ""
      let group = firstName.map { " linked with \(String(decoding: $0, as: UTF8.self))" } ?? ""
      return
        "\(kind) \(String(permissions, radix: 8)) mtime \(modified) \(owner):\(group)\(target) \(contents?.count ?? 0) bytes\(group)"
    }
  }

  /// What a re-run must leave alone.
  public struct Identity: Sendable, Equatable {
    /// `st_ino`.
    public var inode: UInt
    /// `st_ctime` in nanoseconds since the epoch.
    public var changed: Int
    /// `st_mtime` in nanoseconds since the epoch.
    public var modified: Int
  }

  /// The entries, by path relative to the root (raw bytes); the root itself is `.`.
  public let entries: [[UInt8]: Entry]
  /// Inode and times of every entry, by path.
  public let identities: [[UInt8]: Identity]

  /// Walks `root` (not following links).
  public init(_ root: String) {
    var entries: [[UInt8]: Entry] = [:]
    var identities: [[UInt8]: Identity] = [:]
    var inodes: [UInt: [[UInt8]]] = [:]
    var pending: [[UInt8]] = [[]]
    let rootBytes = Array(root.utf8)
    while let relative = pending.popLast() {
      let path = relative.isEmpty ? rootBytes : rootBytes + [UInt8(ascii: "/")] + relative
      var status = stat()
      guard Self.lstat(path, &status) else { continue }
      let key = relative.isEmpty ? [UInt8(ascii: ".")] : relative
      let type = status.st_mode & S_IFMT
      var entry = Entry(
        kind: type == S_IFREG
          ? "file" : type == S_IFDIR ? "folder" : type == S_IFLNK ? "link" : "other",
        permissions: type == S_IFLNK ? 0 : UInt32(status.st_mode & 0o7777),
        modified: status.st_mtim.tv_sec * 1_000_000_000 + status.st_mtim.tv_nsec,
        owner: status.st_uid, group: status.st_gid)
      if type == S_IFLNK { entry.target = Self.readLink(path) }
      if type == S_IFREG {
        entry.contents = Self.read(path)
        if status.st_nlink > 1 { inodes[UInt(status.st_ino), default: []].append(key) }
      }
      entries[key] = entry
      identities[key] = Identity(
        inode: UInt(status.st_ino),
        changed: status.st_ctim.tv_sec * 1_000_000_000 + status.st_ctim.tv_nsec,
        modified: entry.modified)
      if type == S_IFDIR {
        for name in Self.names(path) {
          pending.append(relative.isEmpty ? name : relative + [UInt8(ascii: "/")] + name)
        }
      }
    }
    for names in inodes.values where names.count > 1 {
      let first = names.min { $0.lexicographicallyPrecedes($1) }!
      for name in names { entries[name]?.firstName = first }
    }
    self.entries = entries
    self.identities = identities
  }

  /// What differs from `other`, one line per entry (empty when the trees are equal), leaving
  /// out entries of the kinds in `ignoring` (and the root itself unless `comparingRoot`).
  public func differences(
    from other: TreeSnapshot, ignoringKinds ignoring: Set<String> = [],
    comparingRoot: Bool = true
  ) -> [String] {
    var lines: [String] = []
    let keys = Set(entries.keys).union(other.entries.keys).sorted {
      $0.lexicographicallyPrecedes($1)
    }
    for key in keys {
      if !comparingRoot && key == [UInt8(ascii: ".")] { continue }
      let mine = entries[key]
      let theirs = other.entries[key]
      if let kind = mine?.kind ?? theirs?.kind, ignoring.contains(kind) { continue }
      if mine != theirs {
        lines.append(
          "\(String(decoding: key, as: UTF8.self)): \(mine.map(\.description) ?? "missing") | \(theirs.map(\.description) ?? "missing")"
        )
      }
    }
    return lines
  }

  private static func lstat(_ path: [UInt8], _ status: inout stat) -> Bool {
    (path + [0]).withUnsafeBufferPointer {
      $0.withMemoryRebound(to: CChar.self) { Glibc.lstat($0.baseAddress!, &status) == 0 }
    }
  }

  private static func readLink(_ path: [UInt8]) -> [UInt8] {
    var buffer = [CChar](repeating: 0, count: 4096)
    let count = (path + [0]).withUnsafeBufferPointer {
      $0.withMemoryRebound(to: CChar.self) { readlink($0.baseAddress!, &buffer, 4096) }
    }
    return buffer.prefix(max(0, count)).map { UInt8(bitPattern: $0) }
  }

  private static func read(_ path: [UInt8]) -> [UInt8] {
    let descriptor = (path + [0]).withUnsafeBufferPointer {
      $0.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_RDONLY | O_NONBLOCK) }
    }
    guard descriptor >= 0 else { return [] }
    defer { close(descriptor) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
      let count = Glibc.read(descriptor, &chunk, chunk.count)
      if count <= 0 { break }
      bytes += chunk[..<count]
    }
    return bytes
  }

  private static func names(_ path: [UInt8]) -> [[UInt8]] {
    let stream = (path + [0]).withUnsafeBufferPointer {
      $0.withMemoryRebound(to: CChar.self) { opendir($0.baseAddress!) }
    }
    guard let stream else { return [] }
    defer { closedir(stream) }
    var names: [[UInt8]] = []
    while let entry = readdir(stream) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
      if name != [46] && name != [46, 46] { names.append(name) }
    }
    return names
  }
}
