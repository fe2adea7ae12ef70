import Foundation
import Glibc
import Testing

/// The two tiers of the test suite, as `scripts/test` runs them.
///
/// The unit tier needs only the Swift toolchain, the three C libraries (zlib, libdeflate,
/// ISA-L) and what every Debian system has (`/bin/sh`, coreutils, `gzip`); it is what
/// `scripts/test --unit` runs. The system tier is everything else: tests that need programs
/// beyond those (strace, python3, node, mandoc, the shells, pigz, gcc...), root, the
/// machine's mounts or cgroups, or many seconds of CPU. `scripts/test` runs both tiers.
///
/// A system test carries two traits: a tag (``Testing/Tag/system`` or ``Testing/Tag/slow``),
/// which says why it is not a unit test, and ``Testing/Trait/systemTier``, which skips it,
/// visibly and with the reason, when only the unit tier runs. Swift Testing cannot select
/// tests by tag from the command line, so the skip is a condition read from the
/// environment.
public enum TestTier {
  /// The environment variable `scripts/test --unit` sets to `unit`.
  public static let variable = "SQUEEZE_TEST_TIER"

  /// True when only the unit tier runs (``variable`` is `unit`).
  public static let isUnitOnly = ProcessInfo.processInfo.environment[variable] == "unit"
}

extension Tag {
  /// Needs something beyond the toolchain, the three C libraries and Debian's essential
  /// programs: another program (strace, python3, node, mandoc, bash-completion, zsh, fish,
  /// pigz, gcc, systemd-analyze, GNU parallel, chromium, taskset), root, mounts or cgroups.
  @Tag public static var system: Self

  /// Takes many seconds of CPU (large trees, big files, many rounds of kills): run by
  /// `scripts/test`, left out of `scripts/test --unit`, which must stay under a minute.
  @Tag public static var slow: Self
}

extension Trait where Self == ConditionTrait {
  /// Skips the test or suite when only the unit tier runs (`scripts/test --unit`); put it
  /// beside `.tags(.system)` or `.tags(.slow)`.
  public static var systemTier: Self {
    .enabled(
      if: !TestTier.isUnitOnly,
      "system tier: scripts/test runs it, scripts/test --unit leaves it out")
  }
}

/// What this machine lets the tests do, for `.enabled(if:)` conditions: a test that cannot
/// run here is skipped with its reason, never passed by returning early.
public enum TestMachine {
  /// True when the tests run as root (needed to give files away, mount, or use cgroups).
  public static let isRoot = geteuid() == 0

  /// True when the tests can make a mount namespace of their own (`unshare -m`, as root), in
  /// which a tmpfs or a read-only bind mount is private to the command run inside.
  public static let canMountPrivately =
    isRoot && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare")

  /// True when the tests can mount a small tmpfs of their own (root, and a `mount(8)` the
  /// kernel allows here: a container without `CAP_SYS_ADMIN` refuses it). Found out once by
  /// mounting and unmounting one.
  public static let canMountTmpfs: Bool = {
    guard isRoot, FileManager.default.isExecutableFile(atPath: "/bin/mount") else { return false }
    let folder = TemporaryFolder("mount-probe")
    guard
      let mounted = try? Shell.run(
        "/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", folder.path]),
      mounted.status == 0
    else { return false }
    _ = try? Shell.run("/bin/umount", [folder.path])
    return true
  }()
}
