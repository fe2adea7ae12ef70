import Foundation
import Glibc

/// A fresh folder under the system's temporary folder, removed (with everything in it, even
/// unreadable or read-only parts) when the value is released.
public final class TemporaryFolder: @unchecked Sendable {
  // @unchecked Sendable: `path` is immutable after init; the folder on disk is what tests
  // share, and removal happens once, in deinit.

  /// The folder's absolute path.
  public let path: String

  /// Creates `/tmp/squeeze-test-<label>-XXXXXX` (or under `TMPDIR`), or under `base`.
  public init(_ label: String = "t", base: String? = nil) {
    let root = base ?? ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
    var template = Array("\(root)/squeeze-test-\(label)-XXXXXX".utf8CString)
    let result = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    precondition(result != nil, "mkdtemp failed: \(errno)")
    path = String(
      decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    chmod(path, 0o755)
  }

  deinit {
    // Make everything writable and searchable first, so removal cannot fail on permissions.
    _ = try? Shell.run("/bin/chmod", ["-R", "u+rwx", path])
    _ = try? Shell.run("/bin/rm", ["-rf", path])
  }

  /// `path/relative`.
  public func url(_ relative: String) -> String {
    relative.isEmpty ? path : path + "/" + relative
  }

  /// Writes `contents` to `relative`, creating folders on the way.
  @discardableResult
  public func write(_ relative: String, _ contents: [UInt8]) throws -> String {
    let full = url(relative)
    try FileManager.default.createDirectory(
      atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    try Data(contents).write(to: URL(fileURLWithPath: full))
    return full
  }

  /// Writes UTF-8 `text` to `relative`.
  @discardableResult
  public func write(_ relative: String, text: String) throws -> String {
    try write(relative, Array(text.utf8))
  }

  /// Reads the file at `relative`.
  public func read(_ relative: String) throws -> [UInt8] {
    Array(try Data(contentsOf: URL(fileURLWithPath: url(relative))))
  }

  /// Creates the folder `relative` (and parents).
  public func makeFolder(_ relative: String) throws {
    try FileManager.default.createDirectory(
      atPath: url(relative), withIntermediateDirectories: true)
  }

  /// Every regular file below the folder, as paths relative to it, sorted.
  public func allFiles() -> [String] {
    TemporaryFolder.files(in: path)
  }

  /// The name of a mirror's manifest, at its top: squeeze's record of the links and
  /// folders it made there.
  public static let mirrorManifest = ".squeeze-manifest"

  /// Every regular file below `folder`, as paths relative to it, sorted; a mirror's manifest
  /// (``mirrorManifest``, at the top of a mirror anywhere below) is left out: it is no
  /// output, and the tests that are about it look for it by name.
  public static func files(in folder: String) -> [String] {
    var result: [String] = []
    let enumerator = FileManager.default.enumerator(atPath: folder)
    while let item = enumerator?.nextObject() as? String {
      var status = stat()
      if lstat(folder + "/" + item, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG
        && item.split(separator: "/").last.map(String.init) != mirrorManifest
      {
        result.append(item)
      }
    }
    return result.sorted()
  }

  /// True when the last component of `path` has the shape of a squeeze temporary:
  /// `.squeeze-*.tmp` (a mirror's manifest and an archive's marker also start with
  /// `.squeeze-`, and are not temporaries).
  public static func isSqueezeTemporary(_ path: String) -> Bool {
    let name = path.split(separator: "/").last.map(String.init) ?? path
    return name.hasPrefix(".squeeze-") && name.hasSuffix(".tmp")
  }

  /// Every squeeze temporary (``isSqueezeTemporary(_:)``) below `folder`, as paths relative
  /// to it.
  public static func squeezeTemporaries(under folder: String) -> [String] {
    ((try? FileManager.default.subpathsOfDirectory(atPath: folder)) ?? []).filter(
      isSqueezeTemporary)
  }
}

/// Deterministic test data.
public enum TestData {
  /// `count` pseudo-random bytes from a fixed seed (xorshift64*), the same on every run.
  public static func random(_ count: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> [UInt8] {
    var state = seed
    var bytes = [UInt8](repeating: 0, count: count)
    var index = 0
    while index < count {
      state ^= state >> 12
      state ^= state << 25
      state ^= state >> 27
      var word = state &* 0x2545_F491_4F6C_DD1D
      for _ in 0..<8 where index < count {
        bytes[index] = UInt8(truncatingIfNeeded: word)
        word >>= 8
        index += 1
      }
    }
    return bytes
  }

  /// About `count` bytes of English-like text with repetition, as real logs and prose have.
  public static func text(_ count: Int, seed: UInt64 = 42) -> [UInt8] {
    let words = [
      "the", "compression", "of", "files", "folder", "gzip", "member", "deflate", "stream",
      "block", "window", "zlib", "level", "parallel", "core", "actor", "task", "main", "hang",
      "progress", "output", "input", "bytes", "checksum", "trailer", "header", "name", "time",
      "error", "disk", "sync", "rename", "temporary", "file", "system", "and", "a", "to", "is",
    ]
    let choices = random(count / 3 + 16, seed: seed)
    var output: [UInt8] = []
    output.reserveCapacity(count + 32)
    var index = 0
    var lineLength = 0
    while output.count < count {
      let word = words[Int(choices[index % choices.count]) % words.count]
      index += 1
      output.append(contentsOf: word.utf8)
      lineLength += word.count + 1
      if lineLength > 70 || choices[(index * 7) % choices.count] < 8 {
        output.append(UInt8(ascii: "\n"))
        lineLength = 0
      } else {
        output.append(UInt8(ascii: " "))
      }
    }
    return Array(output.prefix(count))
  }
}
