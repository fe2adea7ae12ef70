import Foundation
import Glibc
import Testing

/// A FUSE file system for tests: `bindfs` mounts a folder at another place, and every call
/// there goes through the kernel's FUSE client to the bindfs process, which refuses what
/// FUSE refuses (`renameat2` flags, `O_TMPFILE`) and ignores `syncfs`, as sshfs and the
/// other libfuse file systems do.
public enum Bindfs {
  /// The bindfs program, when installed.
  public static let program = ["/usr/bin/bindfs", "/usr/local/bin/bindfs"].first {
    FileManager.default.isExecutableFile(atPath: $0)
  }

  /// Why FUSE tests cannot run here, or nil when they can: bindfs missing, no `/dev/fuse`,
  /// or a probe mount that failed (found out once, by mounting and unmounting one).
  public static let unavailability: String? = {
    guard program != nil else {
      return "bindfs is not installed (scripts/install-dependencies installs it)"
    }
    guard access("/dev/fuse", R_OK | W_OK) == 0 else { return "/dev/fuse is missing" }
    let folder = TemporaryFolder("bindfs-probe")
    do {
      try withMount(in: folder) { _ in }
      return nil
    } catch {
      return "mounting bindfs failed here: \(error)"
    }
  }()

  /// True when a bindfs mount can be made here.
  public static var isAvailable: Bool { unavailability == nil }

  /// The reason a FUSE test gives when it is skipped. A constant: the probe behind
  /// ``unavailability`` runs processes, which must wait until the tests run rather than
  /// happen while Swift Testing builds its list of tests (it hangs there).
  public static let requirement: Comment =
    "needs bindfs (scripts/install-dependencies installs it), /dev/fuse and a FUSE mount allowed here"

  /// Why a mount failed.
  public struct MountFailure: Error, CustomStringConvertible {
    /// What went wrong.
    public var description: String
  }

  /// Mounts `folder/back` (made empty) at `folder/fuse` with bindfs, runs `body` with the
  /// mount's path, and unmounts it, whatever `body` does.
  ///
  /// bindfs is run with its output sent to /dev/null and every other descriptor closed: it
  /// leaves a daemon behind that would otherwise hold what
  /// ``Shell/run(_:_:input:environment:currentDirectory:onStart:)`` waits on forever.
  ///
  /// - Throws: ``MountFailure`` when bindfs fails or the mount is not FUSE; what `body`
  ///   throws.
  public static func withMount<R>(in folder: TemporaryFolder, _ body: (String) throws -> R)
    throws -> R
  {
    guard let program else { throw MountFailure(description: "bindfs is not installed") }
    try folder.makeFolder("back")
    try folder.makeFolder("fuse")
    let back = folder.url("back")
    let mount = folder.url("fuse")
    // Every descriptor above 2 is closed before bindfs starts: its daemon outlives the
    // command, and Foundation's Process waits until no process holds the descriptor it
    // passes its child (stdout and stderr go to /dev/null for the same reason).
    let closing =
      "for fd in /proc/$$/fd/*; do n=${fd##*/}; if [ \"$n\" -gt 2 ]; then eval \"exec $n>&-\"; fi; done 2>/dev/null"
    let mounted = try Shell.run(
      "/bin/bash",
      [
        "-c", "\(closing); exec \"$0\" \"$1\" \"$2\" </dev/null >/dev/null 2>&1", program, back,
        mount,
      ])
    guard mounted.status == 0 else {
      throw MountFailure(description: "bindfs exited with status \(mounted.status)")
    }
    defer { unmount(mount) }
    guard fileSystemType(of: mount)?.hasPrefix("fuse") == true else {
      throw MountFailure(description: "'\(mount)' is not a FUSE mount after bindfs")
    }
    return try body(mount)
  }

  /// The file system type `/proc/self/mounts` gives for the mount point `path`, or nil.
  public static func fileSystemType(of path: String) -> String? {
    guard let table = try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8) else {
      return nil
    }
    let real = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
    return table.split(separator: "\n").reversed().compactMap { line -> String? in
      let fields = line.split(separator: " ")
      guard fields.count > 2, fields[1] == real || fields[1] == path else { return nil }
      return String(fields[2])
    }.first
  }

  /// Unmounts `path` (`fusermount -u`, or `umount` when fusermount is missing or fails;
  /// lazily as a last resort, so a test's folder can always be removed).
  static func unmount(_ path: String) {
    for command in [["fusermount", "-u"], ["fusermount3", "-u"], ["umount"], ["umount", "-l"]] {
      let line = command.joined(separator: " ") + " " + Shell.quote(path) + " >/dev/null 2>&1"
      if let result = try? Shell.sh(line), result.status == 0 { return }
    }
  }
}
