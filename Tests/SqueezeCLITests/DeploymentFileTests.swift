import Foundation
import Glibc
import TestSupport
import Testing

/// The deployment files in `scripts/deploy/` (the article `Deployment.md`), each run as far
/// as this machine allows: the systemd units through `systemd-analyze verify` with squeeze
/// installed (`scripts/install`) and their ExecStart run, the crontab line as cron runs it,
/// the Slurm batch script and the GNU parallel line, and the Kubernetes Indexed Job's
/// command for every index inside a pod-like sandbox (a CPU cgroup with the manifest's
/// limit, the source mounted read-only). Together the shards of each cover a folder exactly
/// once; which shard a file belongs to is computed here (FNV-1a 64 of its path below the
/// argument), not taken from squeeze.
@Suite(.tags(.system), .systemTier) struct DeploymentFileTests {
  // MARK: The systemd service and timer

  @Test func systemdUnitsPassSystemdAnalyzeVerifyWithAnInstalledSqueeze() throws {
    let serviceText = try Deployment.file("squeeze-backup.service")
    let timerText = try Deployment.file("squeeze-backup.timer")
    let service = Deployment.unitSettings(serviceText)
    let timer = Deployment.unitSettings(timerText)
    #expect(service["Service.Type"] == ["oneshot"])
    let execStart = try #require(service["Service.ExecStart"]?.first)
    #expect(execStart == "/usr/local/bin/squeeze -o /backup/data /data/")
    #expect(service["Service.Nice"].flatMap { $0.first.flatMap { Int($0) } }.map { $0 > 0 } == true)
    #expect(service["Service.IOSchedulingClass"] == ["idle"])
    #expect(service["Service.CPUQuota"]?.first?.hasSuffix("%") == true)
    #expect(service["Service.SuccessExitStatus"] == nil, "only 0 is a success")
    #expect(serviceText.contains("SuccessExitStatus= is deliberately not set"), "documented")
    #expect(timer["Timer.OnCalendar"]?.count == 1)
    #expect(timer["Timer.Persistent"] == ["true"])
    #expect(timer["Install.WantedBy"] == ["timers.target"])

    // systemd-analyze verify runs without systemd as PID 1 but wants ExecStart's binary
    // (and the man page Documentation= names): install into a prefix and point the unit at it.
    let folder = TemporaryFolder("systemd")
    let prefix = folder.url("prefix")
    try Deployment.install(into: prefix)
    let installed = prefix + "/bin/squeeze"
    try #require(FileManager.default.isExecutableFile(atPath: installed))
    try folder.makeFolder("units")
    try folder.write(
      "units/squeeze-backup.service",
      text: serviceText.replacingOccurrences(of: "/usr/local/bin/squeeze", with: installed))
    try folder.write("units/squeeze-backup.timer", text: timerText)
    let verify = {
      try Shell.run(
        "/usr/bin/systemd-analyze",
        [
          "verify", folder.url("units/squeeze-backup.service"),
          folder.url("units/squeeze-backup.timer"),
        ],
        environment: ["PATH": "/usr/bin:/bin", "MANPATH": prefix + "/share/man"])
    }
    let verified = try verify()
    #expect(verified.status == 0, "\(verified.stdoutText)\(verified.stderrText)")
    #expect(
      verified.stdout.isEmpty && verified.stderr.isEmpty, "no warning: \(verified.stderrText)")
    let calendar = try Shell.run(
      "/usr/bin/systemd-analyze", ["calendar", timer["Timer.OnCalendar"]?.first ?? ""])
    #expect(calendar.status == 0, "\(calendar.stderrText)")

    // The verification is real: with ExecStart's binary gone it fails.
    try FileManager.default.moveItem(atPath: installed, toPath: installed + ".away")
    let without = try verify()
    #expect(without.status != 0 && without.stderrText.contains("is not executable"))
    try FileManager.default.moveItem(atPath: installed + ".away", toPath: installed)

    // ExecStart itself (systemd runs it without a shell), on a local /data and /backup/data:
    // silent, status 0, the mirror complete.
    let source = try Deployment.makeSource(in: folder)
    let mirror = folder.url("mnt-backup")
    let arguments = execStart.split(separator: " ").dropFirst().map {
      $0 == "/backup/data" ? mirror : $0 == "/data/" ? source + "/" : String($0)
    }
    let run = try Shell.run(installed, arguments, environment: ["PATH": "/usr/bin:/bin"])
    #expect(run.status == 0 && run.stdout.isEmpty && run.stderr.isEmpty, "\(run.stderrText)")
    try Deployment.expectMirrorCoversOnce(source: source, mirror: mirror)
  }

  // MARK: The crontab line

  @Test func crontabLineRunsAsCronWouldAndItsThreeHostsCoverTheFolderOnce() throws {
    let crontab = try Deployment.file("squeeze-shards.crontab")
    let entries = crontab.split(separator: "\n").map(String.init).filter {
      let line = $0.trimmingCharacters(in: .whitespaces)
      return !line.isEmpty && !line.hasPrefix("#") && !Deployment.isAssignment(line)
    }
    let entry = try #require(entries.count == 1 ? entries[0] : nil, "one entry: \(entries)")
    let fields = entry.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
      .map(String.init)
    try #require(fields.count == 6, "five time fields and a command: \(entry)")
    for (field, range) in zip(fields.prefix(5), [0...59, 0...23, 1...31, 1...12, 0...7]) {
      #expect(Deployment.isCronField(field, range: range), "'\(field)' in \(range)")
    }
    let command = fields[5].trimmingCharacters(in: .whitespaces)
    #expect(!command.contains("%"), "cron turns % into a newline")
    #expect(command.hasPrefix("/usr/local/bin/squeeze "), "cron's PATH lacks /usr/local/bin")
    #expect(command.contains("--shard 1/3 "), "a fixed count")
    #expect(command.hasSuffix(" /data/"), "the source with a trailing slash")

    let folder = TemporaryFolder("cron")
    let binary = try SqueezeBinary.publicCopy(in: folder)
    let source = try Deployment.makeSource(in: folder)
    let mirror = folder.url("mnt-backup")
    var written: [Int: Set<String>] = [:]
    for host in 1...3 {
      let line = Deployment.localize(
        command.replacingOccurrences(of: "--shard 1/3", with: "--shard \(host)/3"),
        ["/usr/local/bin/squeeze": binary, "/backup/data": mirror, "/data/": source + "/"])
      let before = Set(TemporaryFolder.files(in: mirror))
      // As cron runs it: /bin/sh -c, cron's PATH, no terminal.
      let result = try Shell.run(
        "/bin/sh", ["-c", line], environment: ["PATH": "/usr/bin:/bin", "HOME": folder.path])
      #expect(result.status == 0, "host \(host): \(result.stderrText)")
      #expect(result.stdout.isEmpty && result.stderr.isEmpty, "silent: cron mails any output")
      written[host] = Set(TemporaryFolder.files(in: mirror)).subtracting(before)
    }
    try Deployment.expectShards(written, count: 3, source: source)
    try Deployment.expectMirrorCoversOnce(source: source, mirror: mirror)
  }

  // MARK: The Slurm batch script

  @Test func slurmBatchScriptCoversTheFolderOnceAlsoWhenATaskRunsAloneAgain() throws {
    let script = try Deployment.file("squeeze-shards.sbatch")
    let lines = script.split(separator: "\n").map(String.init)
    #expect(lines.first == "#!/bin/bash")
    let directives = lines.filter { $0.hasPrefix("#SBATCH ") }
    #expect(directives.contains { $0.hasPrefix("#SBATCH --cpus-per-task=") })
    #expect(directives.contains { $0.hasPrefix("#SBATCH --time=") }, "a time limit")
    let commands = lines.filter {
      !$0.hasPrefix("#") && !$0.trimmingCharacters(in: .whitespaces).isEmpty
    }
    let command = try #require(commands.count == 1 ? commands[0] : nil, "one command: \(commands)")
    #expect(command.contains("--shard \"$SLURM_ARRAY_TASK_ID/4\""), "a fixed count")
    #expect(!command.contains("SLURM_ARRAY_TASK_COUNT"))
    #expect(command.contains("-j \"${SLURM_CPUS_PER_TASK:-1}\""), "the CPUs Slurm gave the task")
    #expect(command.hasSuffix(" /data/"), "the source with a trailing slash")
    #expect(
      script.contains("sbatch --array=1-4 squeeze-shards.sbatch"), "--array matches the count")

    let folder = TemporaryFolder("sbatch")
    let binary = try SqueezeBinary.publicCopy(in: folder)
    let source = try Deployment.makeSource(in: folder)
    let mirror = folder.url("mnt-backup")
    let local = try folder.write(
      "squeeze-shards.sbatch",
      text: Deployment.localize(script, ["/backup/data": mirror, "/data/": source + "/"]))
    var written: [Int: Set<String>] = [:]
    for task in 1...4 {
      let before = Set(TemporaryFolder.files(in: mirror))
      // As slurmstepd runs a batch script, here for a task resubmitted alone
      // (sbatch --array=K), where SLURM_ARRAY_TASK_COUNT is 1.
      let result = try Shell.run(
        "/bin/bash", [local],
        environment: [
          "PATH": (binary as NSString).deletingLastPathComponent + ":/usr/bin:/bin",
          "HOME": folder.path, "SLURM_ARRAY_TASK_ID": String(task),
          "SLURM_ARRAY_TASK_COUNT": "1", "SLURM_CPUS_PER_TASK": "1",
        ])
      #expect(result.status == 0, "task \(task): \(result.stderrText)")
      written[task] = Set(TemporaryFolder.files(in: mirror)).subtracting(before)
    }
    try Deployment.expectShards(written, count: 4, source: source)
    try Deployment.expectMirrorCoversOnce(source: source, mirror: mirror)
  }

  // MARK: The GNU parallel line

  @Test func gnuParallelLineCoversTheFolderOnce() throws {
    let version = try Shell.run("/usr/bin/env", ["parallel", "--version"])
    try #require(version.stdoutText.hasPrefix("GNU parallel"), "GNU parallel is installed")
    let script = try Deployment.file("squeeze-parallel.sh")
    let lines = script.split(separator: "\n").map(String.init).filter { $0.hasPrefix("parallel ") }
    let line = try #require(lines.count == 1 ? lines[0] : nil, "one parallel line: \(lines)")
    #expect(line == "parallel squeeze --shard {}/4 -o /backup/data /data/ ::: 1 2 3 4")

    let folder = TemporaryFolder("parallel")
    let binary = try SqueezeBinary.publicCopy(in: folder)
    let source = try Deployment.makeSource(in: folder)
    let mirror = folder.url("mnt-backup")
    let run = {
      try Shell.run(
        "/bin/sh",
        ["-c", Deployment.localize(line, ["/backup/data": mirror, "/data/": source + "/"])],
        environment: [
          "PATH": (binary as NSString).deletingLastPathComponent + ":/usr/bin:/bin",
          "HOME": folder.path,
        ])
    }
    let result = try run()
    #expect(
      result.status == 0, "parallel exits with the number of failed shards: \(result.stderrText)")
    try Deployment.expectMirrorCoversOnce(source: source, mirror: mirror)
    // A second run finds every output up to date and changes nothing.
    let before = try Deployment.modificationTimes(in: mirror)
    let again = try run()
    #expect(again.status == 0, "\(again.stderrText)")
    #expect(try Deployment.modificationTimes(in: mirror) == before, "up-to-date outputs kept")
  }

  /// What the parallel line (and every deployment that shares a mirror) relies on: shards
  /// running at the same time create the same mirror folders without tripping over each
  /// other (a folder another run made a moment ago is used, not an error).
  @Test func shardsRunningAtOnceIntoOneMirrorShareItsFolders() throws {
    let folder = TemporaryFolder("shards-at-once")
    for a in 0..<20 {
      for b in 0..<15 {
        try folder.write("in/a\(a)/b\(b)/f.txt", Array("\(a) \(b)".utf8))
      }
    }
    let source = folder.url("in")
    let sources = Set(TemporaryFolder.files(in: source).map { $0 + ".gz" })
    // A race: several rounds of eight shards started together.
    for round in 1...6 {
      let mirror = folder.url("mirror\(round)")
      let script =
        (1...8).map {
          "\(Shell.quote(SqueezeBinary.path)) --shard \($0)/8 -o \(Shell.quote(mirror)) "
            + "\(Shell.quote(source))/ & "
        }.joined() + "status=0; for job in $(jobs -p); do wait $job || status=1; done; exit $status"
      let result = try Shell.run("/bin/bash", ["-c", script])
      #expect(result.status == 0, "round \(round): \(result.stderrText)")
      #expect(Set(TemporaryFolder.files(in: mirror)) == sources, "round \(round)")
      if result.status != 0 { break }
    }
  }

  // MARK: The Kubernetes Indexed Job

  @Test(.enabled(if: PodSandbox.isAvailable, "needs root, unshare and a cgroup v1 cpu controller"))
  func kubernetesIndexedJobCoversTheFolderOnceWithTheWidthOfItsCPULimit() throws {
    let job = try Deployment.kubernetesJob()
    #expect(job["apiVersion"] as? String == "batch/v1")
    #expect(job["kind"] as? String == "Job")
    let spec = try #require(job["spec"] as? [String: Any])
    #expect(spec["completionMode"] as? String == "Indexed")
    let completions = try #require(spec["completions"] as? Int)
    #expect((spec["parallelism"] as? Int ?? 1) <= completions)
    let rules = (spec["podFailurePolicy"] as? [String: Any])?["rules"] as? [[String: Any]] ?? []
    #expect(
      rules.contains {
        $0["action"] as? String == "FailJob"
          && (($0["onExitCodes"] as? [String: Any])?["values"] as? [Int]).map {
            $0.contains(64) && $0.contains(74)
          } == true
      }, "a usage error (64) or a full disk (74) fails the Job instead of being retried")
    let pod = try #require((spec["template"] as? [String: Any])?["spec"] as? [String: Any])
    #expect(pod["restartPolicy"] as? String == "Never")
    let containers = try #require(pod["containers"] as? [[String: Any]])
    let container = try #require(containers.count == 1 ? containers[0] : nil)
    #expect(container["command"] as? [String] == ["/bin/sh", "-c"])
    let args = try #require(container["args"] as? [String])
    let line = try #require(args.count == 1 ? args[0] : nil)
    #expect(line.contains("--shard \"$((JOB_COMPLETION_INDEX + 1))/\(completions)\""))
    #expect(line.hasSuffix(" /data/"), "the source with a trailing slash")
    let words = line.split(separator: " ").map(String.init)
    #expect(
      !words.contains { ["-j", "--jobs", "-p", "--processes"].contains($0) },
      "no -j: the width comes from the CPU limit")
    let resources = try #require(container["resources"] as? [String: Any])
    let limits = try #require(resources["limits"] as? [String: Any])
    let cpus = try #require(Deployment.cpus(limits["cpu"]), "limits.cpu: \(limits)")
    #expect(
      Deployment.cpus((resources["requests"] as? [String: Any])?["cpu"]) == cpus,
      "requests.cpu equals limits.cpu")

    let folder = TemporaryFolder("k8s")
    let binary = try SqueezeBinary.publicCopy(in: folder)
    let source = try Deployment.makeSource(in: folder)
    let mirror = folder.url("mnt-backup")
    try folder.makeFolder("mnt-backup")
    var mounts: [String: String] = [:]
    var readOnly: [String] = []
    let volumeMounts = try #require(container["volumeMounts"] as? [[String: Any]])
    for mount in volumeMounts {
      let path = try #require(mount["mountPath"] as? String)
      let mapped: String? = path == "/data" ? source : path == "/backup/data" ? mirror : nil
      let local = try #require(mapped, "an unknown mount \(path)")
      mounts[path] = local
      if mount["readOnly"] as? Bool == true { readOnly.append(local) }
    }
    #expect(readOnly == [source], "the source is mounted read-only, the mirror is not")
    let sandbox = try PodSandbox(cpus: cpus, readOnly: readOnly, in: folder)
    let environment = [
      "PATH": (binary as NSString).deletingLastPathComponent + ":/usr/bin:/bin",
      "HOME": folder.path,
    ]
    let inside = try sandbox.run(
      "cat /proc/self/cgroup; touch \(Shell.quote(source + "/probe")) 2>/dev/null && echo writable",
      environment: environment)
    #expect(inside.stdoutText.contains(":cpu:/" + (sandbox.group as NSString).lastPathComponent))
    #expect(!inside.stdoutText.contains("writable"), "the source is read-only in the pod")
    var written: [Int: Set<String>] = [:]
    for index in 0..<completions {
      let before = Set(TemporaryFolder.files(in: mirror))
      var podEnvironment = environment
      podEnvironment["JOB_COMPLETION_INDEX"] = String(index)
      let result = try sandbox.run(Deployment.localize(line, mounts), environment: podEnvironment)
      #expect(result.status == 0, "index \(index): \(result.stderrText)")
      written[index + 1] = Set(TemporaryFolder.files(in: mirror)).subtracting(before)
    }
    try Deployment.expectShards(written, count: completions, source: source)
    try Deployment.expectMirrorCoversOnce(source: source, mirror: mirror)

    // The width squeeze takes in that pod, with no -j: its CPU limit.
    let probe = try sandbox.run(
      "exec squeeze --json --dry-run -o \(Shell.quote(folder.url("probe"))) \(Shell.quote(source))/",
      environment: environment)
    #expect(probe.status == 0, "\(probe.stderrText)")
    let summary = try JSONSerialization.jsonObject(with: Data(probe.stdout)) as? [String: Any]
    #expect(
      summary?["jobs"] as? Int == min(cpus, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))),
      "the default width is the pod's CPU limit (\(cpus)): \(probe.stdoutText)")
  }
}

/// Reading the deployment files and checking what their command lines did.
enum Deployment {
  /// `scripts/deploy/` in this checkout.
  static let folder = repository.appendingPathComponent("scripts/deploy")

  /// The checkout's root folder.
  static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()

  /// Installs the squeeze under test into `prefix` with `scripts/install`, as a unit file's
  /// ExecStart needs it (`systemd-analyze verify` wants the binary and the man page).
  ///
  /// - Throws: when the script cannot run or ends with a status other than 0.
  static func install(into prefix: String) throws {
    let install = try Shell.run(
      "/bin/bash",
      [
        repository.appendingPathComponent("scripts/install").path, "--binary", SqueezeBinary.path,
        prefix,
      ])
    try #require(install.status == 0, "scripts/install: \(install.stderrText)")
  }

  /// A systemd unit file's settings as "Section.Key" → values in order (a key may repeat);
  /// comments and blank lines left out.
  static func unitSettings(_ text: String) -> [String: [String]] {
    var settings: [String: [String]] = [:]
    var section = ""
    for raw in text.split(separator: "\n") {
      let line = raw.trimmingCharacters(in: .whitespaces)
      if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
      if line.hasPrefix("[") && line.hasSuffix("]") {
        section = String(line.dropFirst().dropLast())
      } else if let equals = line.firstIndex(of: "=") {
        let key = line[..<equals].trimmingCharacters(in: .whitespaces)
        let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        settings["\(section).\(key)", default: []].append(value)
      }
    }
    return settings
  }

  /// The text of `scripts/deploy/<name>`.
  static func file(_ name: String) throws -> String {
    try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
  }

  /// The Kubernetes manifest, parsed by PyYAML (Debian's python3-yaml) into JSON.
  static func kubernetesJob() throws -> [String: Any] {
    let text = try file("squeeze-indexed-job.yaml")
    let result = try Shell.run(
      "/usr/bin/python3",
      ["-c", "import json, sys, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)"],
      input: Array(text.utf8))
    try #require(result.status == 0, "PyYAML parses the manifest: \(result.stderrText)")
    return try #require(
      try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any])
  }

  /// The whole CPUs a Kubernetes CPU quantity ("1", "2.5", "500m") allows, rounded up, as
  /// the cgroup quota it becomes does; nil when it is not a CPU quantity.
  static func cpus(_ quantity: Any?) -> Int? {
    let text = quantity.map { "\($0)" } ?? ""
    let millicores: Double?
    if text.hasSuffix("m") {
      millicores = Double(text.dropLast())
    } else {
      millicores = Double(text).map { $0 * 1000 }
    }
    guard let millicores, millicores > 0 else { return nil }
    return Int((millicores / 1000).rounded(.up))
  }

  /// True for a crontab environment line (`NAME=value`).
  static func isAssignment(_ line: String) -> Bool {
    guard let equals = line.firstIndex(of: "=") else { return false }
    return !line[..<equals].contains(" ")
  }

  /// True when `field` is a crontab time field (`*`, numbers, ranges, lists, steps) within
  /// `range`.
  static func isCronField(_ field: String, range: ClosedRange<Int>) -> Bool {
    field.split(separator: ",", omittingEmptySubsequences: false).allSatisfy { item in
      let parts = item.split(separator: "/", omittingEmptySubsequences: false)
      guard parts.count <= 2 else { return false }
      if parts.count == 2, Int(parts[1]).map({ $0 > 0 }) != true { return false }
      if parts[0] == "*" { return true }
      let bounds = parts[0].split(separator: "-", omittingEmptySubsequences: false).map {
        Int($0)
      }
      guard (1...2).contains(bounds.count), bounds.allSatisfy({ $0.map(range.contains) == true })
      else { return false }
      return bounds.count == 1 || bounds[0]! <= bounds[1]!
    }
  }

  /// `line` with each of `paths`' keys (paths inside a container or host) replaced by the
  /// local folder it stands for, longest first so `/backup/data` is not read as `/data`.
  static func localize(_ line: String, _ paths: [String: String]) -> String {
    var result = line
    for (from, to) in paths.sorted(by: { $0.key.count > $1.key.count }) {
      result = result.replacingOccurrences(of: from, with: Shell.quote(to))
    }
    return result
  }

  /// A source folder of 90 small files in nested folders (names with spaces and non-ASCII
  /// letters) and one file of 2.5 MB, several chunks with either engine; returns its path.
  static func makeSource(in folder: TemporaryFolder) throws -> String {
    for index in 0..<90 {
      let name = ["f\(index).txt", "report \(index).log", "données-\(index).csv"][index % 3]
      try folder.write(
        "mnt-data/d\(index % 7)/e\(index % 3)/\(name)",
        TestData.text(200 + index * 37, seed: UInt64(index)))
    }
    try folder.write("mnt-data/big.bin", TestData.text(2_500_000, seed: 99))
    return folder.url("mnt-data")
  }

  /// The shard (1...count) of `relativePath`: FNV-1a 64 (offset basis 0xcbf29ce484222325,
  /// prime 0x100000001b3) over its UTF-8 bytes, modulo count, plus one, computed
  /// here independently of SqueezeCore.
  static func shard(of relativePath: String, count: Int) -> Int {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in relativePath.utf8 {
      hash ^= UInt64(byte)
      hash = hash &* 0x0000_0100_0000_01b3
    }
    return Int(hash % UInt64(count)) + 1
  }

  /// Expects `written[k]` (the outputs shard k's run added to the mirror) to be exactly the
  /// `.gz` of the source files of shard k.
  static func expectShards(_ written: [Int: Set<String>], count: Int, source: String) throws {
    let files = TemporaryFolder.files(in: source)
    for k in 1...count {
      let expected = Set(files.filter { shard(of: $0, count: count) == k }.map { $0 + ".gz" })
      #expect(written[k] == expected, "shard \(k)/\(count) wrote exactly its files")
      #expect(!expected.isEmpty, "shard \(k) has files")
    }
  }

  /// Expects `mirror` to hold exactly one `.gz` for each file of `source` and nothing else
  /// (no temporary), each restoring to its source's bytes with the system's gzip.
  static func expectMirrorCoversOnce(source: String, mirror: String) throws {
    let files = TemporaryFolder.files(in: source)
    #expect(Set(TemporaryFolder.files(in: mirror)) == Set(files.map { $0 + ".gz" }))
    for file in files {
      let restored = try SystemGzip.decompress(mirror + "/" + file + ".gz")
      #expect(restored == Array(try Data(contentsOf: URL(fileURLWithPath: source + "/" + file))))
    }
  }

  /// Each file's modification time (seconds and nanoseconds) below `folder`.
  static func modificationTimes(in folder: String) throws -> [String: [Int]] {
    var times: [String: [Int]] = [:]
    for file in TemporaryFolder.files(in: folder) {
      var status = stat()
      try #require(lstat(folder + "/" + file, &status) == 0)
      times[file] = [status.st_mtim.tv_sec, status.st_mtim.tv_nsec]
    }
    return times
  }
}

/// Runs a shell command line the way a pod's container runs it, as far as one machine can:
/// in a cgroup v1 cpu controller group whose quota is the pod's CPU limit (what the kubelet
/// writes: `limits.cpu` × `cpu.cfs_period_us` in `cpu.cfs_quota_us`), in a mount namespace
/// of its own (`unshare -m`) with the read-only volumes bound read-only over themselves.
/// The group is removed when the value is released.
final class PodSandbox {
  /// The cgroup v1 cpu controller's mount point on this machine.
  static let controller = "/sys/fs/cgroup/cpu"

  /// True when run as root with `unshare` and a writable cgroup v1 cpu controller.
  static var isAvailable: Bool {
    geteuid() == 0 && access("/usr/bin/unshare", X_OK) == 0
      && access(controller + "/cpu.cfs_quota_us", F_OK) == 0 && access(controller, W_OK) == 0
  }

  /// The group's folder.
  let group: String
  /// The script that enters the group and the namespace, then runs its argument.
  let script: String

  /// Creates a group allowing `cpus` CPUs and the script that binds `readOnly` read-only.
  init(cpus: Int, readOnly: [String], in folder: TemporaryFolder) throws {
    group = "\(Self.controller)/squeeze-test-pod-\(getpid())"
    rmdir(group)
    try #require(mkdir(group, 0o755) == 0, "mkdir \(group): errno \(errno)")
    let period = try String(contentsOfFile: group + "/cpu.cfs_period_us", encoding: .utf8)
      .trimmingCharacters(in: .whitespacesAndNewlines)
    let quota = try #require(Int(period)) * cpus
    try "\(quota)\n".write(toFile: group + "/cpu.cfs_quota_us", atomically: false, encoding: .utf8)
    let binds = readOnly.map {
      "mount --bind \(Shell.quote($0)) \(Shell.quote($0)) && "
        + "mount -o remount,bind,ro \(Shell.quote($0)) \(Shell.quote($0)) && "
    }.joined()
    script = try folder.write(
      "pod.sh",
      text: """
        echo $$ > \(Shell.quote(group + "/cgroup.procs")) || exit 125
        exec unshare -m /bin/sh -c '\(binds.replacingOccurrences(of: "'", with: "'\\''"))exec /bin/sh -c "$1"' pod "$1"

        """)
  }

  deinit {
    rmdir(group)
  }

  /// Runs `line` with `/bin/sh -c` inside the group and namespace.
  func run(_ line: String, environment: [String: String]) throws -> Shell.Result {
    try Shell.run("/bin/sh", [script, line], environment: environment)
  }
}
