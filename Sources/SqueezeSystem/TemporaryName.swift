import Glibc
import Synchronization

/// Names for squeeze's temporary files, and the test that tells a live run's temporary from
/// one a killed run left behind.
///
/// A temporary is written in its output's own folder (so the final `rename` stays within one
/// file system) under a name of fixed shape, whatever the source's name:
///
///     .squeeze-<host>-<boot>-<pidns>-<pid>-<start>-<n>.tmp
///
/// `host` is the FNV-1a hash of the host name, `boot` the start of the kernel's boot id,
/// `pidns` the inode of the writer's PID namespace (`/proc/self/ns/pid`), `pid` and `start`
/// the writing process and its start time in clock ticks since boot (`/proc/<pid>/stat`
/// field 22), `n` a counter, all in hexadecimal: at most 90 bytes, so the name never
/// depends on how long the source name is.
///
/// Whether its writer still runs can only be known on the same host, boot and PID namespace
/// (a container sees other PIDs): there, a temporary is stale when no process has that PID
/// and start time. A temporary of an earlier boot of this host is stale (a reboot ended its
/// writer). Any other temporary (another host sharing the folder, another container) is
/// stale only once it has not been written for `abandonedAfter` seconds: a live run writes
/// its temporaries continuously and renames them within seconds of finishing them.
package struct TemporaryNamer: Sendable {
  /// The fixed part: `.squeeze-<host>-<boot>-<pidns>-<pid>-<start>-`.
  package let prefix: String
  /// `prefix` as bytes.
  private let prefixBytes: [UInt8]
  /// The identity of this process, for the staleness test.
  package let identity: ProcessIdentity
  /// The counter for `n`.
  private let counter: Counter
  /// The temporaries made with these names that exist now (see ``LiveTemporaries``).
  package let live: LiveTemporaries

  /// A day: a temporary whose writer cannot be checked is stale once it is this old.
  static let abandonedAfter: Int64 = 86_400

  private final class Counter: Sendable {
    let value = Atomic<UInt64>(0)
  }

  /// The namer for the running process.
  package init() {
    self.init(identity: .current)
  }

  /// The namer of a process with `identity` (tests give others than this process's).
  package init(identity: ProcessIdentity) {
    self.identity = identity
    prefix = ".squeeze-\(identity.tag)-"
    prefixBytes = Array(prefix.utf8)
    counter = Counter()
    live = LiveTemporaries()
  }

  /// The leading bytes every squeeze temporary shares.
  static let commonPrefix = Array(".squeeze-".utf8)
  /// The trailing bytes every squeeze temporary shares.
  static let commonSuffix = Array(".tmp".utf8)

  /// A fresh name, unique within this process.
  package func next() -> RawPath {
    let number = counter.value.wrappingAdd(1, ordering: .relaxed).newValue
    // Built as bytes (one allocation): this runs once per output file.
    let digits = max(1, (UInt64.bitWidth - number.leadingZeroBitCount + 3) / 4)
    var bytes = [UInt8]()
    bytes.reserveCapacity(prefixBytes.count + digits + Self.commonSuffix.count)
    bytes.append(contentsOf: prefixBytes)
    for shift in stride(from: (digits - 1) * 4, through: 0, by: -4) {
      bytes.append(Self.hexDigits[Int((number >> UInt64(shift)) & 0xF)])
    }
    bytes.append(contentsOf: Self.commonSuffix)
    return RawPath(bytes: bytes)
  }

  private static let hexDigits = Array("0123456789abcdef".utf8)

  /// The longest temporary name, in bytes: the prefix, six hexadecimal fields of at most
  /// 8, 8, 16, 8, 16 and 16 digits, five dashes and the suffix.
  static let maximumLength = 90

  /// True when `name` has exactly the shape of a squeeze temporary: `.squeeze-`, six
  /// non-empty fields of lowercase hexadecimal digits joined by `-`, `.tmp`, at most
  /// `maximumLength` bytes. A file of the user's that merely starts with `.squeeze-` and
  /// ends with `.tmp` (`.squeeze-notes.tmp`) is not one: it is compressed like any file and
  /// never removed as a stale temporary.
  package static func isTemporary(_ name: RawPath) -> Bool {
    name.bytes.withUnsafeBufferPointer { isTemporary($0) }
  }

  /// True when the name whose bytes `name` holds has exactly the shape of a squeeze
  /// temporary: the `RawPath` form's test, for a name read where it lies (a folder
  /// listing's).
  package static func isTemporary(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
    // Asked of every entry a walk meets: the first byte and the length rule out nearly
    // every name.
    guard name.first == UInt8(ascii: "."), name.count <= maximumLength,
      name.count > commonPrefix.count + commonSuffix.count,
      name.starts(with: commonPrefix), name.suffix(commonSuffix.count).elementsEqual(commonSuffix)
    else { return false }
    var fields = 1
    var fieldLength = 0
    for byte in name[commonPrefix.count..<(name.count - commonSuffix.count)] {
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"):
        fieldLength += 1
      case UInt8(ascii: "-"):
        guard fieldLength > 0 else { return false }
        fields += 1
        fieldLength = 0
      default:
        return false
      }
    }
    return fields == 6 && fieldLength > 0
  }

  /// What a temporary's name says about the run that wrote it.
  package enum Owner: Equatable, Sendable {
    /// A running process of this host, boot and PID namespace: leave it.
    case live
    /// A process of this host, boot and PID namespace that has ended, or an earlier boot:
    /// safe to remove.
    case stale
    /// Another host or PID namespace: its writer cannot be checked.
    case unknown
  }

  /// Decides from its name whether the run that wrote the temporary `name` is alive.
  package func owner(of name: RawPath) -> Owner {
    guard TemporaryNamer.isTemporary(name) else { return .unknown }
    let text = String(decoding: name.bytes, as: UTF8.self)
    let fields = text.dropFirst(TemporaryNamer.commonPrefix.count).dropLast(4).split(separator: "-")
    guard fields.count == 6, let pid = Int32(fields[3], radix: 16),
      let start = UInt64(fields[4], radix: 16)
    else { return .unknown }
    guard fields[0] == identity.hostHash else { return .unknown }
    if fields[1] != identity.bootID { return .stale }
    guard fields[2] == identity.pidNamespace else { return .unknown }
    if pid == identity.pid && start == identity.startTicks { return .live }
    return ProcessIdentity.startTicks(of: pid) == start ? .live : .stale
  }

  /// Decides whether the temporary `name`, last modified at `modified`, may be removed.
  package func isStale(_ name: RawPath, modified: Timestamp, now: Timestamp = .now) -> Bool {
    switch owner(of: name) {
    case .live: false
    case .stale: true
    case .unknown: now.seconds(since: modified) > TemporaryNamer.abandonedAfter
    }
  }
}

/// Who this process is, as far as temporary names need to know.
package struct ProcessIdentity: Sendable {
  /// FNV-1a hash of the host name, 8 hex digits.
  package var hostHash: String
  /// The first 8 hex digits of `/proc/sys/kernel/random/boot_id`.
  package var bootID: String
  /// The inode of `/proc/self/ns/pid`, in hex.
  package var pidNamespace: String
  /// The process id.
  package var pid: Int32
  /// The process start time in clock ticks since boot.
  var startTicks: UInt64

  /// `<host>-<boot>-<pidns>-<pid>-<start>`.
  package var tag: String {
    "\(hostHash)-\(bootID)-\(pidNamespace)-\(String(pid, radix: 16))-\(String(startTicks, radix: 16))"
  }

  /// This process.
  package static let current: ProcessIdentity = {
    var host = [CChar](repeating: 0, count: 256)
    gethostname(&host, host.count - 1)
    let hostBytes = host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    let hash = UInt32(truncatingIfNeeded: FNV1a.hash64(hostBytes))
    var hostHash = String(hash, radix: 16)
    hostHash = String(repeating: "0", count: 8 - hostHash.count) + hostHash
    let boot =
      readSmallFile("/proc/sys/kernel/random/boot_id")
      .map { String(decoding: $0.prefix(8), as: UTF8.self) } ?? "00000000"
    var namespace = stat()
    let pidNamespace =
      stat("/proc/self/ns/pid", &namespace) == 0 ? String(UInt64(namespace.st_ino), radix: 16) : "0"
    let pid = getpid()
    return ProcessIdentity(
      hostHash: hostHash, bootID: boot, pidNamespace: pidNamespace, pid: pid,
      startTicks: startTicks(of: pid) ?? 0)
  }()

  /// Field 22 of `/proc/<pid>/stat` (start time in ticks), or nil when no such process.
  static func startTicks(of pid: Int32) -> UInt64? {
    guard let bytes = readSmallFile("/proc/\(pid)/stat") else { return nil }
    // The command name (field 2) is in parentheses and may hold spaces: count from the
    // last ')'.
    guard let close = bytes.lastIndex(of: UInt8(ascii: ")")) else { return nil }
    let fields = bytes[(close + 1)...].split(separator: UInt8(ascii: " "))
    // After ')': field 3 is at index 0, so field 22 is at index 19.
    guard fields.count > 19 else { return nil }
    return UInt64(String(decoding: fields[19], as: UTF8.self))
  }
}

/// Reads a small file (at most 4 KiB) such as one under `/proc`; nil when it cannot.
package func readSmallFile(_ path: String) -> [UInt8]? {
  guard
    let descriptor = try? FileDescriptor.open(RawPath(path), flags: .readOnly, symlinks: .always)
  else { return nil }
  var buffer = [UInt8](repeating: 0, count: 4096)
  let count = buffer.withUnsafeMutableBytes { (raw) -> Int in
    (try? descriptor.readFully(into: raw)) ?? 0
  }
  return Array(buffer.prefix(count))
}
