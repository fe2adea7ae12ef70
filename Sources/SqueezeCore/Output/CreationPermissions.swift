import SqueezeSystem

/// The permission bits to create a temporary output with, so that most outputs need no
/// `fchmod` afterwards.
///
/// An output ends with its source's permission bits (``kept(_:keepsOwner:)``). Creating
/// the temporary with exactly those bits saves one system call a file, and shows nobody more
/// than the finished output will: the partial file has the same bits in the same folder.
/// That holds only when `open(2)` gives the file the bits asked for, which it does when the
/// process umask clears none of them and the folder has no default ACL (with one, the ACL
/// decides instead of the umask; POSIX.1e, acl(5)). Otherwise the temporary is created
/// `0600` (only its owner can read it) and `fchmod` sets the bits once it is written, as
/// gzip does.
enum CreationPermissions {
  /// Bits for a temporary whose final bits are not known or not reachable by `open(2)`.
  static let ownerOnly: UInt32 = 0o600

  /// The permission bits an output, a restored file or a file of a mirror gets from the
  /// file it is made from, whose bits are `bits` (`st_mode & 0o7777`).
  ///
  /// All twelve bits when it also gets that file's owner and group (`keepsOwner`: running
  /// as root), as `rsync -a` and `cp -a` keep them, so that a mirror restores a set-user-ID
  /// program as it was. Otherwise the file belongs to whoever runs squeeze, and set-user-ID
  /// and set-group-ID would lend that user's identity to a program someone else wrote (a
  /// `.gz` file put in a shared folder, restored by another user), so they are dropped, as
  /// the kernel clears them when a file changes owner (chown(2)) and as pigz 2.6 drops them;
  /// the sticky bit is kept. gzip 1.12 refuses such files instead ("is set-user-ID on
  /// execution - ignored", status 2, even with `-f`).
  static func kept(_ bits: UInt32, keepsOwner: Bool) -> UInt32 {
    keepsOwner ? bits & 0o7777 : bits & 0o1777
  }

  /// The bits to pass to `open(2)` for an output that will have `final` bits.
  ///
  /// - Parameters:
  ///   - final: the output's permission bits (`st_mode & 0o7777`).
  ///   - folderHasNoDefaultACL: true only when the output's folder was checked and has no
  ///     default ACL.
  static func forOutput(final: UInt32, folderHasNoDefaultACL: Bool) -> UInt32 {
    guard folderHasNoDefaultACL, let umask = processUmask, final & ~0o777 == 0,
      final & UInt32(umask) == 0
    else { return ownerOnly }
    return UInt32(final)
  }

  /// The bits to pass to `open(2)` for an output of `final` bits written for a file of
  /// `list`'s folder `directory`: the folder's default ACL is known (checked while listing)
  /// only when outputs go beside their sources; in another folder (`-o`) the temporary is
  /// created ``ownerOnly``.
  static func forOutput(
    final: UInt32, directory: Int32, of list: FileList, plan: OutputPlan
  ) -> UInt32 {
    forOutput(
      final: final,
      folderHasNoDefaultACL: plan.destination == .besideSources
        && list.directories[Int(directory)].hasNoDefaultACL)
  }

  /// The process umask, read once from `/proc/self/status` (Linux 4.7+) without changing it
  /// (`umask(2)` can only be read by setting it, which would race with other threads
  /// creating files); nil when it cannot be read.
  static let processUmask: UInt32? = {
    guard let bytes = readSmallFile("/proc/self/status") else { return nil }
    let label = Array("Umask:".utf8)
    for line in bytes.split(separator: UInt8(ascii: "\n")) where line.starts(with: label) {
      let digits = line.dropFirst(label.count).filter { $0 != UInt8(ascii: " ") && $0 != 9 }
      return UInt32(String(decoding: digits, as: UTF8.self), radix: 8)
    }
    return nil
  }()

  /// True when the folder open as `descriptor` has no default ACL (or its file system has
  /// no ACLs); false when it has one or the check fails.
  static func folderHasNoDefaultACL(_ descriptor: Int32) -> Bool {
    do throws(SystemError) {
      // nil: no such attribute, or no ACLs on the file system.
      return try Descriptor.extendedAttributeSize(descriptor, named: "system.posix_acl_default")
        == nil
    } catch {
      return false
    }
  }
}
