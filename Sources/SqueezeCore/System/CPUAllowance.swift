import CSystem
import Glibc

/// The CPUs this process may use, squeeze's default width (`--jobs`): the fewest of
///
/// - the CPUs in its affinity mask (`sched_getaffinity(2)`: `taskset`, `numactl`, a cpuset
///   cgroup, Kubernetes' static CPU manager), and
/// - the CPU quota of its cgroup and of every ancestor up to the root of the hierarchy
///   (cgroups(7)): v2 `cpu.max` (`$MAX $PERIOD`, or `max`) and v1 `cpu.cfs_quota_us` over
///   `cpu.cfs_period_us` (-1 for none), as containers (`docker --cpus`), systemd's
///   `CPUQuota=` and Kubernetes CPU limits set them. A quota of 1.5 CPUs lets the process run
///   1.5 CPU-seconds a second: two workers use it, one would leave half a CPU idle;
///
/// rounded up, and at least 1. Foundation's `ProcessInfo.activeProcessorCount` on Linux
/// honours neither the mask nor a v1 quota (`taskset -c 0` still gave 2 here).
///
/// Which cgroup a process is in comes from `/proc/self/cgroup` (`0::/path` for v2,
/// `N:cpu,cpuacct:/path` for the v1 hierarchy with the cpu controller), and where each
/// hierarchy is mounted from `/proc/self/mountinfo`; a container sees only the part of the
/// hierarchy it is given (the mount's root), and the walk stops at that mount point.
struct CPUAllowance: Sendable, Equatable {
  /// A cgroup CPU quota: the tightest one found on the way up.
  struct Quota: Sendable, Equatable {
    /// CPU-seconds per second: quota ÷ period (1.5 for `150000 100000`).
    var cpus: Double
    /// The cgroup folder that sets it (`/sys/fs/cgroup/cpu/batch`), as this process sees it.
    var cgroup: String
  }

  /// CPUs in the affinity mask (at least 1).
  var affinityCPUs: Int
  /// The tightest cgroup quota, or nil when no cgroup on the way up limits the CPU time.
  var quota: Quota?

  /// The width: the fewest of the two, rounded up, at least 1.
  var count: Int {
    guard let quota else { return max(1, affinityCPUs) }
    // Compared as a Double first: a quota may be more CPUs than an Int holds.
    guard quota.cpus < Double(affinityCPUs) else { return max(1, affinityCPUs) }
    return max(1, Int(saturating: quota.cpus.rounded(.up)))
  }

  /// What this process may use now.
  static var current: CPUAllowance {
    detect(root: "", affinityCPUs: affinityCPUs())
  }

  /// The allowance with the cgroup files read below `root` (empty for the real `/`; tests
  /// hand a folder laid out like one, with `proc/self/cgroup`, `proc/self/mountinfo` and the
  /// cgroup folders).
  ///
  /// - Parameter affinityCPUs: the CPUs of the affinity mask (``affinityCPUs()`` for this
  ///   process).
  static func detect(root: String, affinityCPUs: Int) -> CPUAllowance {
    let memberships = TextFile.read(root + "/proc/self/cgroup") ?? ""
    let mounts = MountTable.read(root: root)
    var tightest: Quota? = nil
    for directory in cgroupDirectories(memberships: memberships, mounts: mounts, root: root) {
      for folder in ancestors(of: directory.path, upTo: directory.mountPoint) {
        guard let cpus = quota(in: folder, isV2: directory.isV2) else { continue }
        if tightest.map({ cpus < $0.cpus }) ?? true {
          tightest = Quota(cpus: cpus, cgroup: String(folder.dropFirst(root.count)))
        }
      }
    }
    return CPUAllowance(affinityCPUs: max(1, affinityCPUs), quota: tightest)
  }

  /// A hierarchy that can hold a CPU quota: this process's cgroup folder in it, and the
  /// folder it is mounted at (where the walk up stops).
  struct CgroupDirectory: Equatable {
    /// This process's cgroup folder (below the root handed to ``detect(root:affinityCPUs:)``).
    var path: String
    /// The hierarchy's mount point: the last folder whose quota is read.
    var mountPoint: String
    /// True for the unified hierarchy (`cpu.max`), false for v1 (`cpu.cfs_quota_us`).
    var isV2: Bool
  }

  /// This process's cgroup folder in each mounted hierarchy that has the cpu controller (v1)
  /// and in the unified hierarchy (v2).
  static func cgroupDirectories(memberships: String, mounts: MountTable, root: String)
    -> [CgroupDirectory]
  {
    var v2Path: String? = nil
    var v1Path: String? = nil
    for line in memberships.split(separator: "\n") {
      // hierarchy-ID:controller-list:cgroup-path (the path may contain ':').
      let parts = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
      guard parts.count == 3 else { continue }
      if parts[0] == "0" && parts[1].isEmpty {
        v2Path = String(parts[2])
      } else if parts[1].split(separator: ",").contains("cpu") {
        v1Path = String(parts[2])
      }
    }
    var directories: [CgroupDirectory] = []
    for mount in mounts.mounts {
      let path: String?
      let isV2: Bool
      switch mount.type {
      case "cgroup2":
        (path, isV2) = (v2Path, true)
      case "cgroup" where mount.superOptions.contains("cpu"):
        (path, isV2) = (v1Path, false)
      default:
        continue
      }
      guard let path else { continue }
      // The mount shows the hierarchy from `mount.root` down; a path outside it (a cgroup
      // namespace shows paths from its own root) is taken as relative to the mount.
      var relative = path
      if mount.root != "/" && (path == mount.root || path.hasPrefix(mount.root + "/")) {
        relative = String(path.dropFirst(mount.root.count))
      }
      let mountPoint = root + mount.mountPoint
      directories.append(
        CgroupDirectory(
          path: mountPoint + (relative == "/" ? "" : relative), mountPoint: mountPoint, isV2: isV2))
    }
    return directories
  }

  /// `folder` and each parent up to and including `mountPoint`.
  static func ancestors(of folder: String, upTo mountPoint: String) -> [String] {
    var result: [String] = []
    var current = folder
    while current.hasPrefix(mountPoint) {
      result.append(current)
      guard current.count > mountPoint.count, let slash = current.lastIndex(of: "/") else { break }
      current = String(current[..<slash])
    }
    return result
  }

  /// The quota set in one cgroup folder, in CPUs, or nil for none (or no files there).
  static func quota(in folder: String, isV2: Bool) -> Double? {
    if isV2 {
      // cpu.max: "$MAX $PERIOD", MAX being "max" for no limit.
      guard let text = TextFile.read(folder + "/cpu.max") else { return nil }
      let fields = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
      guard fields.count == 2 else { return nil }
      return cpus(quota: fields[0], period: fields[1])
    }
    guard
      let quotaText = TextFile.read(folder + "/cpu.cfs_quota_us"),
      let periodText = TextFile.read(folder + "/cpu.cfs_period_us")
    else { return nil }
    return cpus(
      quota: quotaText.filter { !$0.isWhitespace }, period: periodText.filter { !$0.isWhitespace })
  }

  /// CPUs from a quota and a period in microseconds as the kernel writes them: decimal
  /// integers (cgroups(7)), both positive. Anything else (`max`, `-1`, a number past
  /// `Int64`, `inf`, `1e300`, hexadecimal) is no quota, so the quotient is finite and
  /// positive whatever the files hold.
  static func cpus<S: StringProtocol>(quota: S, period: S) -> Double? {
    func microseconds(_ text: S) -> Int64? {
      guard !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
      return Int64(text)
    }
    guard let quota = microseconds(quota), let period = microseconds(period), quota > 0,
      period > 0
    else { return nil }
    return Double(quota) / Double(period)
  }

  /// The CPUs in this thread's affinity mask (`sched_getaffinity(2)`, as `nproc` counts
  /// them), growing the mask for machines with more than 1,024 CPUs; 1 if the call fails.
  static func affinityCPUs() -> Int {
    var size = 128
    while size <= 1 << 16 {
      var mask = [UInt8](repeating: 0, count: size)
      let written = mask.withUnsafeMutableBytes {
        squeeze_sched_getaffinity($0.baseAddress, UInt($0.count))
      }
      if written > 0 {
        return max(1, mask.prefix(written).reduce(0) { $0 + $1.nonzeroBitCount })
      }
      guard errno == EINVAL else { break }
      size *= 2
    }
    return 1
  }
}
