import CSystem
import Glibc

/// Reads a folder's entries with `getdents64(2)`, straight from the open folder (no `DIR`,
/// no duplicated descriptor).
package enum DirectoryReader {
  /// The `d_type` of a regular file (`DT_REG`).
  package static let regularFile = UInt8(DT_REG)

  /// Every entry but `.` and `..`: the raw name and `d_type` (`DT_UNKNOWN` when the file
  /// system does not say), in the order `getdents64(2)` gives them.
  ///
  /// - Parameter folder: an open folder descriptor, read from its current position (a fresh
  ///   descriptor starts at the beginning).
  /// - Throws: ``SystemError`` from `getdents64(2)` (see ``listing(of:)``).
  package static func entries(
    of folder: Int32
  ) throws(SystemError) -> [(name: RawPath, type: UInt8)] {
    let listing = try listing(of: folder)
    return listing.entries.map { (listing.name(of: $0), $0.type) }
  }

  /// Every entry but `.` and `..`, in the order `getdents64(2)` gives them, with their names
  /// in one buffer (``DirectoryListing``): reading a folder allocates a few arrays, not one
  /// per entry.
  ///
  /// - Parameter folder: an open folder descriptor, read from its current position (a fresh
  ///   descriptor starts at the beginning).
  /// - Throws: ``SystemError`` from `getdents64(2)`; `EIO` for a record that does not fit
  ///   the bytes the kernel returned; `EOVERFLOW` for a folder whose names take more than
  ///   4 GiB.
  package static func listing(of folder: Int32) throws(SystemError) -> DirectoryListing {
    let size = 64 * 1024
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 8)
    defer { buffer.deallocate() }
    var listing = DirectoryListing()
    while true {
      let count = squeeze_getdents64(folder, buffer.baseAddress, UInt(size))
      if count < 0 {
        if errno == EINTR { continue }
        throw SystemError.current
      }
      if count == 0 { break }
      if listing.entries.isEmpty {
        // A record takes at least 24 bytes (19, the name, its NUL, rounded up to 8): a
        // folder read in one call fills the records' array without growing it.
        listing.entries.reserveCapacity(count / 24)
      }
      // The names of one call take less room than its records: they are copied into one
      // array of that size, each with memcpy (appending names one by one to a growing array
      // cost about 100 instructions a name).
      let first = listing.names.count
      var failure: Int32? = nil
      let names = [UInt8](unsafeUninitializedCapacity: count) { names, used in
        used = 0
        var offset = 0
        while offset < count {
          // struct linux_dirent64: d_ino (8), d_off (8), d_reclen (2), d_type (1), d_name.
          let length = Int(buffer.loadUnaligned(fromByteOffset: offset + 16, as: UInt16.self))
          guard length > 19, offset + length <= count else {
            failure = EIO
            return
          }
          let type = buffer[offset + 18]
          // d_name ends at its NUL, within the record (found with memchr, not byte by byte).
          let start = offset + 19
          let room = offset + length - start
          let nul = memchr(buffer.baseAddress! + start, 0, room)
          let nameLength = nul.map { buffer.baseAddress!.distance(to: $0) - start } ?? room
          offset += length
          let dot = UInt8(ascii: ".")
          if buffer[start] == dot
            && (nameLength == 1 || (nameLength == 2 && buffer[start + 1] == dot))
          {
            continue
          }
          guard let at = UInt32(exactly: first + used), UInt32.max - at > UInt32(nameLength)
          else {
            failure = EOVERFLOW
            return
          }
          UnsafeMutableRawPointer(names.baseAddress! + used).copyMemory(
            from: buffer.baseAddress! + start, byteCount: nameLength)
          names[used + nameLength] = 0
          // The key in one load where eight bytes of this call's records follow the name's
          // start (all but a short name in the last record).
          let key =
            start + 8 <= count
            ? DirectoryListing.key(
              loaded: buffer.loadUnaligned(fromByteOffset: start, as: UInt64.self),
              length: nameLength)
            : DirectoryListing.key(
              of: UnsafeRawBufferPointer(rebasing: buffer[start..<(start + nameLength)]))
          listing.entries.append(
            DirectoryListing.Entry(
              key: key, offset: at, length: UInt16(nameLength), type: type))
          used += nameLength + 1
        }
      }
      if let failure { throw SystemError(code: failure) }
      if listing.names.isEmpty {
        listing.names = names
      } else {
        listing.names.append(contentsOf: names)
      }
    }
    return listing
  }
}

/// A folder's entries as ``DirectoryReader/listing(of:)`` read them: every name back to back
/// in one buffer, each followed by a NUL (so a name goes to a system call as it lies), and a
/// record of 16 bytes for each entry.
///
/// A walk reads every folder of a tree this way; one array per name was an allocation and a
/// free for every entry, and ordering the names compared arrays.
package struct DirectoryListing: Sendable {
  /// One entry: where its name lies in ``DirectoryListing/names``, its type, and its first
  /// bytes as a number to order it by.
  package struct Entry: Sendable, Equatable, BitwiseCopyable {
    /// The name's first eight bytes as a big-endian number, zero bytes after a shorter name.
    /// Comparing keys compares names byte-wise as far as those bytes go: a name holds no
    /// NUL, so a shorter name that begins a longer one has the smaller key.
    package var key: UInt64
    /// Where the name starts in ``DirectoryListing/names``, in bytes.
    package var offset: UInt32
    /// The name's length in bytes (1 to 255 on Linux), without its NUL.
    package var length: UInt16
    /// The entry's `d_type` (`DT_REG`, `DT_DIR`, …; `DT_UNKNOWN` when the file system does
    /// not say).
    package var type: UInt8
  }

  /// The names, each followed by a NUL.
  package var names: [UInt8] = []
  /// The entries: in the order read until ``sortByName()``, then by name.
  package var entries: [Entry] = []

  /// An empty listing.
  package init() {}

  /// The ``Entry/key`` of the name `name`: its first eight bytes as a big-endian number,
  /// zero bytes after a shorter name.
  package static func key(of name: UnsafeRawBufferPointer) -> UInt64 {
    var key: UInt64 = 0
    for index in 0..<min(8, name.count) {
      key |= UInt64(name[index]) << (56 - 8 * index)
    }
    return key
  }

  /// The ``Entry/key`` of a name of `length` bytes (at least 1) whose first eight bytes,
  /// or its bytes and whatever follows them, were loaded as `loaded` (in memory order, as
  /// `loadUnaligned` gives them).
  @inline(__always)
  static func key(loaded: UInt64, length: Int) -> UInt64 {
    let key = UInt64(bigEndian: loaded)
    return length >= 8 ? key : key & ~(UInt64.max >> (8 * length))
  }

  /// The name of `entry`.
  package func name(of entry: Entry) -> RawPath {
    let start = Int(entry.offset)
    return RawPath(bytes: names[start..<(start + Int(entry.length))])
  }

  /// Orders the entries by name, byte-wise (as `LC_ALL=C sort`, and as ``RawPath``'s `<`).
  ///
  /// - Complexity: O(n log n) comparisons, most of them decided by the entries' keys
  ///   alone, the rest by `memcmp` of the bytes after the eighth.
  package mutating func sortByName() {
    guard entries.count > 1 else { return }
    names.withUnsafeBufferPointer { names in
      let base = names.baseAddress!
      entries.sort { Self.order(of: $0, $1, in: base) < 0 }
    }
  }

  /// True when a listing sorted by ``sortByName()`` holds `name`.
  ///
  /// - Complexity: O(log n) comparisons (a binary search).
  package func contains(_ name: RawPath) -> Bool {
    guard !entries.isEmpty else { return false }
    return name.bytes.withUnsafeBufferPointer { wanted in
      names.withUnsafeBufferPointer { names in
        var low = 0
        var high = entries.count
        while low < high {
          let middle = (low + high) / 2
          let order = Self.order(of: entries[middle], wanted, in: names.baseAddress!)
          if order == 0 { return true }
          if order < 0 { low = middle + 1 } else { high = middle }
        }
        return false
      }
    }
  }

  /// True when a name in the listing ends in `suffix` and is longer than it (as
  /// ``RawPath/hasSuffix(_:)`` tells of a path).
  package func hasName(endingIn suffix: RawPath) -> Bool {
    let suffix = suffix.bytes
    guard let last = suffix.last else { return entries.contains { $0.length > 0 } }
    return names.withUnsafeBufferPointer { names in
      entries.contains { entry in
        // The last byte first: it rules out nearly every name of a folder.
        let end = Int(entry.offset) + Int(entry.length)
        return names[end - 1] == last && Int(entry.length) > suffix.count
          && UnsafeBufferPointer(rebasing: names[(end - suffix.count)..<end]).elementsEqual(suffix)
      }
    }
  }

  /// Negative, zero or positive as `a`'s name comes before, is, or comes after `b`'s.
  @inline(__always)
  private static func order(of a: Entry, _ b: Entry, in names: UnsafePointer<UInt8>) -> Int {
    if a.key != b.key { return a.key < b.key ? -1 : 1 }
    // Equal keys: both names are the same and shorter than eight bytes, or share their
    // first eight.
    let common = Int(min(a.length, b.length))
    if common > 8 {
      let order = memcmp(
        names + Int(a.offset) + 8, names + Int(b.offset) + 8, common - 8)
      if order != 0 { return Int(order) }
    }
    return Int(a.length) - Int(b.length)
  }

  /// Negative, zero or positive as `entry`'s name comes before, is, or comes after `name`.
  private static func order(
    of entry: Entry, _ name: UnsafeBufferPointer<UInt8>, in names: UnsafePointer<UInt8>
  ) -> Int {
    let common = min(Int(entry.length), name.count)
    if common > 0 {
      let order = memcmp(names + Int(entry.offset), name.baseAddress!, common)
      if order != 0 { return Int(order) }
    }
    return Int(entry.length) - name.count
  }
}
