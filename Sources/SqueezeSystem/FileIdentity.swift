/// A file's identity on this machine: the device and inode numbers (`st_dev`, `st_ino`).
package struct FileIdentity: Hashable, Sendable {
  /// The device holding the file (`st_dev`).
  package var device: UInt64
  /// The inode number on that device (`st_ino`).
  package var inode: UInt64

  /// The identity of inode `inode` on device `device`.
  package init(device: UInt64, inode: UInt64) {
    self.device = device
    self.inode = inode
  }

  /// The identity of the file `status` describes.
  package init(_ status: FileStatus) {
    self.init(device: status.device, inode: status.inode)
  }
}
