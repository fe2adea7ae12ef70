import Glibc
import Synchronization

/// Names for squeeze's temporary files, and the test that tells a live run's temporary from
/// one a killed run left behind.
///
/// A temporary is written in its output's own folder (so the final `rename` stays within one
/// file system) under a name of fixed shape, whatever the source's name:
///
///     .squeeze-<host>-<boot>-<pid>-<start>-<n>.tmp
///
/// `host` is the FNV-1a hash of the host name, `boot` the start of the kernel's boot id,
/// `pid` and `start` the writing process and its start time in clock ticks since boot
/// (`/proc/<pid>/stat` field 22), `n` a counter, all in hexadecimal. The name is at most
/// 80 bytes, so it never depends on how long the source name is. A temporary is stale when
/// it comes from this host and either an earlier boot or a process that no longer runs
/// (no `/proc/<pid>` with that start time); temporaries from other hosts are left alone.
struct TemporaryNamer: Sendable {
  /// The fixed part: `.squeeze-<host>-<boot>-<pid>-<start>-`.
  let prefix: String
  /// The identity of this process, for the staleness test.
  let identity: ProcessIdentity
  /// The counter for `n`.
  private let counter: Counter

  private final class Counter: Sendable {
    let value = Atomic<UInt64>(0)
  }

  /// The namer for the running process.
  init() {
    self.init(identity: .current)
  }

  init(identity: ProcessIdentity) {
    self.identity = identity
    prefix = ".squeeze-\(identity.tag)-"
    counter = Counter()
  }

  /// The leading bytes every squeeze temporary shares.
  static let commonPrefix = Array(".squeeze-".utf8)
  /// The trailing bytes every squeeze temporary shares.
  static let commonSuffix = Array(".tmp".utf8)

  /// A fresh name, unique within this process.
  func next() -> RawPath {
    let number = counter.value.wrappingAdd(1, ordering: .relaxed).newValue
    return RawPath(prefix + String(number, radix: 16) + ".tmp")
  }

  /// True when `name` has the shape of a squeeze temporary.
  static func isTemporary(_ name: RawPath) -> Bool {
    name.bytes.starts(with: commonPrefix) && name.hasSuffix(commonSuffix)
  }

  /// What `name` (a squeeze temporary) says about the run that wrote it.
  enum Owner: Equatable, Sendable {
    /// A running process on this host: leave it.
    case live
    /// A process of this host that has ended, or an earlier boot: safe to remove.
    case stale
    /// Another host, or a name squeeze cannot read: leave it.
    case unknown
  }

  /// Decides whether the run that wrote the temporary `name` is still alive.
  func owner(of name: RawPath) -> Owner {
    guard TemporaryNamer.isTemporary(name) else { return .unknown }
    let text = String(decoding: name.bytes, as: UTF8.self)
    let fields = text.dropFirst(TemporaryNamer.commonPrefix.count).dropLast(4).split(separator: "-")
    guard fields.count == 5, let pid = Int32(fields[2], radix: 16),
      let start = UInt64(fields[3], radix: 16)
    else { return .unknown }
    guard fields[0] == identity.hostHash else { return .unknown }
    if fields[1] != identity.bootID { return .stale }
    if pid == identity.pid && start == identity.startTicks { return .live }
    return ProcessIdentity.startTicks(of: pid) == start ? .live : .stale
  }
}

/// Who this process is, as far as temporary names need to know.
struct ProcessIdentity: Sendable {
  /// FNV-1a hash of the host name, 8 hex digits.
  var hostHash: String
  /// The first 8 hex digits of `/proc/sys/kernel/random/boot_id`.
  var bootID: String
  /// The process id.
  var pid: Int32
  /// The process start time in clock ticks since boot.
  var startTicks: UInt64

  /// `<host>-<boot>-<pid>-<start>`.
  var tag: String {
    "\(hostHash)-\(bootID)-\(String(pid, radix: 16))-\(String(startTicks, radix: 16))"
  }

  /// This process.
  static let current: ProcessIdentity = {
    var host = [CChar](repeating: 0, count: 256)
    gethostname(&host, host.count - 1)
    let hostBytes = host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    let hash = UInt32(truncatingIfNeeded: FNV1a.hash64(hostBytes))
    var hostHash = String(hash, radix: 16)
    hostHash = String(repeating: "0", count: 8 - hostHash.count) + hostHash
    let boot =
      readSmallFile("/proc/sys/kernel/random/boot_id")
      .map { String(decoding: $0.prefix(8), as: UTF8.self) } ?? "00000000"
    let pid = getpid()
    return ProcessIdentity(
      hostHash: hostHash, bootID: boot, pid: pid, startTicks: startTicks(of: pid) ?? 0)
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
func readSmallFile(_ path: String) -> [UInt8]? {
  guard
    let descriptor = try? FileDescriptor.open(RawPath(path), flags: O_RDONLY, followSymlinks: true)
  else { return nil }
  var buffer = [UInt8](repeating: 0, count: 4096)
  let count = buffer.withUnsafeMutableBytes { (raw) -> Int in
    (try? descriptor.readFully(into: raw)) ?? 0
  }
  return Array(buffer.prefix(count))
}
