import Foundation
import Glibc
import TestSupport
import Testing

@testable import SqueezeCore

/// The CPU allowance read from cgroup layouts laid out in a temporary folder handed to the
/// detector as `/`: v2, v1 (as this machine mounts the cpu controller), both, and a
/// container's view of part of a hierarchy.
@Suite struct CPUAllowanceTests {
  /// A fake `/`: `proc/self/cgroup`, `proc/self/mountinfo`, and cgroup files.
  static func root(cgroup: String, mountinfo: String, files: [String: String]) throws
    -> TemporaryFolder
  {
    let folder = TemporaryFolder("cgroup-root")
    try folder.write("proc/self/cgroup", text: cgroup)
    try folder.write("proc/self/mountinfo", text: mountinfo)
    for (path, text) in files { try folder.write(path, text: text) }
    return folder
  }

  static let v2Mount =
    "30 24 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n"

  @Test(
    arguments: [
      // The process's own cgroup sets 1.5 CPUs: rounded up to 2.
      (
        quotas: ["": "max 100000\n", "batch": "max 100000\n", "batch/job": "150000 100000\n"],
        cpus: 2, quota: 1.5
      ),
      // An ancestor is tighter than the process's own cgroup.
      (
        quotas: ["": "max 100000\n", "batch": "50000 100000\n", "batch/job": "300000 100000\n"],
        cpus: 1, quota: 0.5
      ),
      // No limit anywhere: the affinity mask decides.
      (
        quotas: ["": "max 100000\n", "batch": "max 100000\n", "batch/job": "max 100000\n"], cpus: 4,
        quota: nil
      ),
      // A quota above the mask: the mask decides, the quota is still reported.
      (quotas: ["batch/job": "800000 100000\n"], cpus: 4, quota: 8.0),
      // A tiny quota still gives one worker.
      (quotas: ["batch/job": "1000 100000\n"], cpus: 1, quota: 0.01),
    ] as [(quotas: [String: String], cpus: Int, quota: Double?)])
  func cgroupV2CpuMaxOfTheCgroupAndEveryAncestor(
    quotas: [String: String], cpus: Int, quota: Double?
  ) throws {
    var files: [String: String] = [:]
    for (folder, text) in quotas {
      files["sys/fs/cgroup/" + (folder.isEmpty ? "" : folder + "/") + "cpu.max"] = text
    }
    let root = try Self.root(cgroup: "0::/batch/job\n", mountinfo: Self.v2Mount, files: files)
    let allowance = CPUAllowance.detect(root: root.path, affinityCPUs: 4)
    #expect(allowance.count == cpus)
    #expect(allowance.affinityCPUs == 4)
    #expect(allowance.quota?.cpus == quota)
  }

  @Test func theTightestQuotaNamesItsCgroup() throws {
    let root = try Self.root(
      cgroup: "0::/batch/job\n", mountinfo: Self.v2Mount,
      files: [
        "sys/fs/cgroup/batch/cpu.max": "50000 100000\n",
        "sys/fs/cgroup/batch/job/cpu.max": "200000 100000\n",
      ])
    let allowance = CPUAllowance.detect(root: root.path, affinityCPUs: 2)
    #expect(allowance.quota == CPUAllowance.Quota(cpus: 0.5, cgroup: "/sys/fs/cgroup/batch"))
  }

  @Test func cgroupV1CfsQuotaOverPeriodWithCombinedControllers() throws {
    let root = try Self.root(
      cgroup: "4:memory:/batch\n3:cpu,cpuacct:/batch/job\n1:name=systemd:/\n0::/\n",
      mountinfo: """
        31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
        32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
        35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
        41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw

        """,
      files: [
        "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us": "-1\n",
        "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us": "100000\n",
        "sys/fs/cgroup/cpu,cpuacct/batch/job/cpu.cfs_quota_us": "250000\n",
        "sys/fs/cgroup/cpu,cpuacct/batch/job/cpu.cfs_period_us": "100000\n",
        // The memory hierarchy has no say over CPU time, whatever it holds.
        "sys/fs/cgroup/memory/batch/cpu.cfs_quota_us": "1000\n",
        "sys/fs/cgroup/memory/batch/cpu.cfs_period_us": "100000\n",
      ])
    let allowance = CPUAllowance.detect(root: root.path, affinityCPUs: 8)
    #expect(allowance.quota?.cpus == 2.5)
    #expect(allowance.count == 3)
  }

  @Test func aContainerSeesItsPartOfTheHierarchyFromTheMountsRoot() throws {
    // The mount shows the hierarchy from /docker/abc down, at /sys/fs/cgroup/cpu; the
    // process is in /docker/abc/worker.
    let root = try Self.root(
      cgroup: "2:cpu:/docker/abc/worker\n",
      mountinfo:
        "700 690 0:29 /docker/abc /sys/fs/cgroup/cpu ro,nosuid - cgroup cgroup rw,cpu\n",
      files: [
        "sys/fs/cgroup/cpu/cpu.cfs_quota_us": "100000\n",
        "sys/fs/cgroup/cpu/cpu.cfs_period_us": "100000\n",
        "sys/fs/cgroup/cpu/worker/cpu.cfs_quota_us": "-1\n",
        "sys/fs/cgroup/cpu/worker/cpu.cfs_period_us": "100000\n",
      ])
    let allowance = CPUAllowance.detect(root: root.path, affinityCPUs: 16)
    #expect(allowance.count == 1)
    #expect(allowance.quota?.cgroup == "/sys/fs/cgroup/cpu")
  }

  @Test func mountPointsWithEscapedSpacesAndMissingFilesAreHandled() throws {
    let root = try Self.root(
      cgroup: "0::/a b\n",
      mountinfo: "30 24 0:26 / /sys/fs/my\\040cgroup rw - cgroup2 cgroup2 rw\n",
      files: ["sys/fs/my cgroup/a b/cpu.max": "200000 100000\n"])
    #expect(CPUAllowance.detect(root: root.path, affinityCPUs: 4).count == 2)
    let empty = TemporaryFolder("no-cgroup")
    #expect(
      CPUAllowance.detect(root: empty.path, affinityCPUs: 3)
        == CPUAllowance(affinityCPUs: 3, quota: nil))
  }

  /// What the kernel writes is decimal integers; whatever else a cgroup file holds is no
  /// quota, and a quota of more CPUs than an Int holds leaves the mask to decide: never a
  /// trap converting it.
  @Test(
    arguments: [
      (cpuMax: "9223372036854775807 1\n", quota: 9_223_372_036_854_775_807.0),
      (cpuMax: "99999999999999999999 100000\n", quota: nil),
      (cpuMax: "1e300 1\n", quota: nil),
      (cpuMax: "inf 100000\n", quota: nil),
      (cpuMax: "nan 100000\n", quota: nil),
      (cpuMax: "0x10 1\n", quota: nil),
      (cpuMax: "-5 100000\n", quota: nil),
      (cpuMax: "100000 0\n", quota: nil),
      (cpuMax: "+100000 100000\n", quota: nil),
      (cpuMax: "١٠٠٠٠٠ 100000\n", quota: nil),
    ] as [(cpuMax: String, quota: Double?)])
  func cpuMaxBeyondWhatTheKernelWritesIsNoQuotaOrTheMask(cpuMax: String, quota: Double?) throws {
    let root = try Self.root(
      cgroup: "0::/job\n", mountinfo: Self.v2Mount,
      files: ["sys/fs/cgroup/job/cpu.max": cpuMax])
    let allowance = CPUAllowance.detect(root: root.path, affinityCPUs: 4)
    #expect(allowance.quota?.cpus == quota)
    #expect(allowance.count == 4)
  }

  @Test func cfsQuotaBeyondAnInt64IsNoQuota() throws {
    let root = try Self.root(
      cgroup: "3:cpu:/job\n",
      mountinfo: "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n",
      files: [
        "sys/fs/cgroup/cpu/job/cpu.cfs_quota_us": "18446744073709551615\n",
        "sys/fs/cgroup/cpu/job/cpu.cfs_period_us": "1\n",
      ])
    #expect(CPUAllowance.detect(root: root.path, affinityCPUs: 2).quota == nil)
  }

  @Test(arguments: [Double.infinity, 1e300, 0x1p63, Double.nan, 0])
  func aQuotaOfAnySizeGivesAWidthBetweenOneAndTheMask(cpus: Double) {
    let allowance = CPUAllowance(
      affinityCPUs: 6, quota: CPUAllowance.Quota(cpus: cpus, cgroup: "/x"))
    #expect((1...6).contains(allowance.count))
  }

  @Test func theAffinityMaskIsWhatNprocCounts() throws {
    let nproc = try Shell.run("/usr/bin/nproc", [])
    #expect(CPUAllowance.affinityCPUs() == Int(nproc.stdoutText.filter(\.isNumber)))
  }

  @Test func theWidthIsResolvedOnceFromJobsOrTheAllowance() {
    let allowance = CPUAllowance(affinityCPUs: 3, quota: nil)
    #expect(RunSettings(options: Options(), cpus: allowance).jobs == 3)
    var options = Options()
    options.jobs = 7
    #expect(RunSettings(options: options, cpus: allowance).jobs == 7)
  }

  @Test func mountTableFindsTheMountPointOfADevice() {
    let table = MountTable(
      parsing: """
        22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw
        45 22 0:47 / /mnt/ro ro,relatime - tmpfs tmpfs ro
        bad line

        """)
    #expect(table.mounts.count == 2)
    #expect(table.mountPoint(of: 8 << 8 | 1) == "/")
    #expect(table.mountPoint(of: 47) == "/mnt/ro")
    #expect(table.mountPoint(of: 99) == nil)
  }
}
