/// A file's identity on this machine: the device and inode numbers (`st_dev`, `st_ino`).
struct FileIdentity: Hashable, Sendable {
  var device: UInt64
  var inode: UInt64

  init(device: UInt64, inode: UInt64) {
    self.device = device
    self.inode = inode
  }

  init(_ status: FileStatus) {
    self.init(device: status.device, inode: status.inode)
  }
}
