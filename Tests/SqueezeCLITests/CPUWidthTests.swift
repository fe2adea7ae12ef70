import Foundation
import Glibc
import TestSupport
import Testing

/// The default width is the CPUs the process may use, measured for real: an affinity mask
/// set with `taskset`, and a cgroup v1 CPU quota on a cgroup created for the test (this
/// machine mounts the cpu controller as v1; the v2 layout is covered by
/// `CPUAllowanceTests` with a fake root).
@Suite(.tags(.system), .systemTier) struct CPUWidthTests {
  /// The cgroup v1 cpu hierarchy, when one is mounted and writable.
  static let v1Hierarchy: String? = {
    let table = (try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)) ?? ""
    for line in table.split(separator: "\n") {
      let fields = line.split(separator: " ")
      guard let dash = fields.firstIndex(of: "-"), dash + 3 < fields.count,
        fields[dash + 1] == "cgroup", fields[dash + 3].split(separator: ",").contains("cpu")
      else { continue }
      let path = String(fields[4])
      return access(path, W_OK) == 0 ? path : nil
    }
    return nil
  }()

  /// The `--json` summary of `squeeze --json <arguments> file`, run through `launcher`.
  static func summary(_ launcher: [String], _ arguments: [String] = []) throws -> [String: Any] {
    let folder = TemporaryFolder("width")
    try folder.write("in/a.txt", TestData.text(300_000))
    let result = try Shell.run(
      launcher[0],
      Array(launcher.dropFirst()) + [SqueezeBinary.path, "--json"] + arguments
        + [folder.url("in")])
    try #require(result.status == 0, "\(result.stderrText)")
    let object = try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any]
    return try #require(object)
  }

  @Test func tasksetNarrowsTheDefaultWidthAndJsonReportsIt() throws {
    let narrowed = try Self.summary(["/usr/bin/taskset", "-c", "0"])
    #expect(narrowed["jobs"] as? Int == 1)
    #expect(narrowed["cpus"] as? Int == 1)
    #expect(narrowed["affinityCPUs"] as? Int == 1)
    // -j still wins over the allowance; -p is the same option.
    let forced = try Self.summary(["/usr/bin/taskset", "-c", "0"], ["-p", "3"])
    #expect(forced["jobs"] as? Int == 3)
    #expect(forced["cpus"] as? Int == 1)
  }

  @Test func theTaskLogReportsTheWidthAndTheCPUs() throws {
    let folder = TemporaryFolder("width-log")
    try folder.write("in/a.txt", TestData.text(10_000))
    let result = try Shell.run(
      "/usr/bin/taskset",
      ["-c", "0", SqueezeBinary.path, "--task-log", folder.url("log.jsonl"), folder.url("in")])
    try #require(result.status == 0, "\(result.stderrText)")
    let first = try #require(
      String(decoding: try folder.read("log.jsonl"), as: UTF8.self).split(separator: "\n").first)
    #expect(first.contains("\"event\":\"start\""))
    #expect(first.contains("\"jobs\":1,"))
    #expect(first.contains("\"cpus\":1,"))
  }

  /// Runs `body` with a new cgroup under the v1 cpu hierarchy (and a child in it), removed
  /// afterwards.
  static func withCgroup(_ body: (_ parent: String, _ child: String) throws -> Void) throws {
    let hierarchy = try #require(v1Hierarchy)
    let parent = "\(hierarchy)/squeeze-test-\(getpid())"
    let child = parent + "/worker"
    try #require(mkdir(parent, 0o755) == 0 || errno == EEXIST, "mkdir \(parent): errno \(errno)")
    defer {
      rmdir(child)
      rmdir(parent)
    }
    try #require(mkdir(child, 0o755) == 0 || errno == EEXIST)
    try body(parent, child)
  }

  /// Runs squeeze inside cgroup `cgroup` (the shell moves itself in, then execs).
  static func summaryInside(_ cgroup: String) throws -> [String: Any] {
    try summary([
      "/bin/sh", "-c", "echo $$ > \(Shell.quote(cgroup + "/cgroup.procs")) && exec \"$@\"", "sh",
    ])
  }

  @Test(.enabled(if: v1Hierarchy != nil, "needs the cgroup v1 cpu controller, writable"))
  func aRealV1QuotaOnAnAncestorLimitsTheWidth() throws {
    try Self.withCgroup { parent, child in
      // One CPU for the parent; the child, where squeeze runs, sets no quota of its own.
      try "100000\n".write(
        toFile: parent + "/cpu.cfs_period_us", atomically: false, encoding: .utf8)
      try "100000\n".write(toFile: parent + "/cpu.cfs_quota_us", atomically: false, encoding: .utf8)
      let limited = try Self.summaryInside(child)
      #expect(limited["jobs"] as? Int == 1)
      #expect(limited["cpus"] as? Int == 1)
      #expect((limited["cgroupQuotaCPUs"] as? NSNumber)?.doubleValue == 1.0)
      // 1.5 CPUs: two workers, rounded up.
      try "150000\n".write(toFile: parent + "/cpu.cfs_quota_us", atomically: false, encoding: .utf8)
      let fraction = try Self.summaryInside(child)
      #expect(fraction["cgroupQuotaCPUs"] as? NSNumber == 1.5)
      #expect(fraction["cpus"] as? Int == min(2, CPUWidthTests.onlineCPUs))
    }
  }

  /// The CPUs of this test process's affinity mask.
  static var onlineCPUs: Int {
    Int((try? Shell.run("/usr/bin/nproc", []).stdoutText.filter(\.isNumber)) ?? "1") ?? 1
  }
}
