import Glibc

/// The mounts this process sees, from `/proc/self/mountinfo` (proc(5), "/proc/pid/mountinfo"):
/// for each, its device, the folder of its file system that is mounted (`root`), where
/// (`mountPoint`), its type and its super-block options.
package struct MountTable: Sendable, Equatable {
  /// One line of `mountinfo`.
  package struct Mount: Sendable, Equatable {
    /// The device's major number (field 3, `major:minor`).
    var major: UInt32
    /// The device's minor number.
    var minor: UInt32
    /// The folder of the file system that is mounted here (field 4; `/` for the whole).
    package var root: String
    /// Where it is mounted (field 5), with `\040`-style octal escapes decoded.
    package var mountPoint: String
    /// The file system type after the `-` separator: `cgroup`, `cgroup2`, `ext4`.
    package var type: String
    /// The super-block options after the source: for a cgroup v1 hierarchy, its
    /// controllers among them (`rw,cpu,cpuacct`).
    var superOptions: [String]
  }

  /// The mounts, in the file's order (later mounts hide earlier ones at the same point).
  package var mounts: [Mount]

  /// Reads `root` + `/proc/self/mountinfo` (`root` is empty for the real one; tests hand a
  /// folder laid out like `/`).
  ///
  /// - Returns: the table, empty when the file cannot be read.
  package static func read(root: String = "") -> MountTable {
    MountTable(parsing: TextFile.read(root + "/proc/self/mountinfo") ?? "")
  }

  /// Parses `mountinfo` text; lines that do not have its shape are left out.
  package init(parsing text: String) {
    mounts = text.split(separator: "\n").compactMap { line in
      let fields = line.split(separator: " ").map(String.init)
      guard let separator = fields.firstIndex(of: "-"), separator >= 6,
        separator + 3 < fields.count
      else { return nil }
      let device = fields[2].split(separator: ":")
      guard device.count == 2, let major = UInt32(device[0]), let minor = UInt32(device[1])
      else { return nil }
      return Mount(
        major: major, minor: minor, root: Self.unescaped(fields[3]),
        mountPoint: Self.unescaped(fields[4]), type: fields[separator + 1],
        superOptions: fields[separator + 3].split(separator: ",").map(String.init))
    }
  }

  /// The mount point of the file system on device `device` (`st_dev`), the last one listed
  /// when it is mounted more than once; nil when none is.
  package func mountPoint(of device: UInt64) -> String? {
    let major = UInt32(truncatingIfNeeded: (device >> 8) & 0xFFF | (device >> 32) & ~0xFFF)
    let minor = UInt32(truncatingIfNeeded: device & 0xFF | (device >> 12) & ~0xFF)
    return mounts.last { $0.major == major && $0.minor == minor }?.mountPoint
  }

  /// `mountinfo`'s escapes decoded: space, tab, newline and backslash are written `\040`,
  /// `\011`, `\012`, `\134`.
  static func unescaped(_ field: String) -> String {
    guard field.contains("\\") else { return field }
    var bytes: [UInt8] = []
    let input = Array(field.utf8)
    var index = 0
    while index < input.count {
      if input[index] == UInt8(ascii: "\\"), index + 3 < input.count,
        let value = UInt8(
          String(decoding: input[(index + 1)...(index + 3)], as: UTF8.self), radix: 8)
      {
        bytes.append(value)
        index += 4
      } else {
        bytes.append(input[index])
        index += 1
      }
    }
    return String(decoding: bytes, as: UTF8.self)
  }
}

/// Small text files of the kernel's (`/proc`, `/sys`), whose size `stat` reports as 0 or
/// 4096 whatever they hold: read to their end.
enum TextFile {
  /// The whole file at `path` as text, or nil when it cannot be opened or read.
  static func read(_ path: String) -> String? {
    let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
      let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
      if count < 0 {
        if errno == EINTR { continue }
        return nil
      }
      if count == 0 { break }
      bytes.append(contentsOf: buffer[..<count])
    }
    return String(decoding: bytes, as: UTF8.self)
  }
}
