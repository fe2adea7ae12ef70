import SqueezeSystem

/// gzip's rules for compressed names: which suffixes mean "compressed" (`.gz`, `.tgz`,
/// `.taz`, `.z`, `-gz`, `-z`, `_z`, and the `-S` suffix) and what a name becomes without
/// one (`x.gz` → `x`, `y.tgz` → `y.tar`), as gzip's `get_suffix` and `make_ofname` apply
/// them. Discovery uses them to tell compressed files from others, planning to name
/// outputs.
package enum GzipNaming {
  /// `name` without its compressed suffix, gzip's rules; nil for an unknown suffix, and for
  /// a name that is only a suffix (`.gz`).
  ///
  /// Suffixes match whatever their ASCII letter case, as gzip's (`x.GZ` becomes `x`,
  /// `y.TGZ` becomes `y.tar`).
  package static func decompressedName(of name: RawPath, suffix: RawPath) -> RawPath? {
    let bytes = name.bytes
    // Called for every file of a restore (several times): the suffix tables are built once.
    // A suffix counts only in a longer name, as in gzip's get_suffix: a file named `.gz`
    // has no name to restore to.
    if !suffix.isEmpty && bytes.count > suffix.count && hasSuffixIgnoringCase(bytes, suffix.bytes) {
      return RawPath(bytes: bytes.dropLast(suffix.count))
    }
    for known in strippedSuffixes
    where bytes.count > known.count && hasSuffixIgnoringCase(bytes, known) {
      return RawPath(bytes: bytes.dropLast(known.count))
    }
    for tar in tarSuffixes where bytes.count > tar.count && hasSuffixIgnoringCase(bytes, tar) {
      return RawPath(bytes: bytes.dropLast(4) + tarExtension)
    }
    return nil
  }

  /// The suffixes a restore strips after the `-S` one, in gzip's order of trying them.
  private static let strippedSuffixes = ["-gz", ".z", "-z", "_z", ".gz"].map { Array($0.utf8) }
  /// The suffixes a restore turns into `.tar`.
  private static let tarSuffixes = [".tgz", ".taz"].map { Array($0.utf8) }
  private static let tarExtension = Array(".tar".utf8)

  /// True when `name` ends in a suffix gzip treats as compressed (`.gz`, `.tgz`, `.taz`,
  /// `.z`, `-gz`, `-z`, `_z`) or in the `-S` suffix, whatever their ASCII letter case.
  package static func hasCompressedSuffix(_ name: RawPath, suffix: RawPath) -> Bool {
    name.bytes.withUnsafeBufferPointer { hasCompressedSuffix($0, suffix: suffix) }
  }

  /// True when the name whose bytes `name` holds ends in a suffix gzip treats as compressed
  /// or in the `-S` suffix, whatever their ASCII letter case: the `RawPath` form's test, for
  /// a name read where it lies (a folder listing's).
  package static func hasCompressedSuffix(
    _ name: UnsafeBufferPointer<UInt8>, suffix: RawPath
  ) -> Bool {
    guard let last = name.last else { return false }
    // Asked of every file a walk meets: the last byte rules out nearly every name before
    // the comparisons (every suffix gzip knows ends in z or Z).
    if let suffixLast = suffix.bytes.last, lowered(last) == lowered(suffixLast),
      hasSuffixIgnoringCase(name, suffix.bytes)
    {
      return true
    }
    guard last | 0x20 == UInt8(ascii: "z") else { return false }
    return compressedSuffixes.contains { hasSuffixIgnoringCase(name, $0) }
  }

  /// The suffixes gzip treats as compressed, as bytes.
  private static let compressedSuffixes = [".gz", ".tgz", ".taz", ".z", "-gz", "-z", "_z"].map {
    Array($0.utf8)
  }

  /// True when `bytes` ends in `suffix`, ASCII letters compared without case (gzip lowers
  /// a name's tail before comparing suffixes); other bytes compare exactly.
  package static func hasSuffixIgnoringCase<Bytes: RandomAccessCollection<UInt8>>(
    _ bytes: Bytes, _ suffix: [UInt8]
  ) -> Bool where Bytes.Index == Int {
    guard bytes.count >= suffix.count else { return false }
    var index = bytes.startIndex + bytes.count - suffix.count
    for byte in suffix {
      if lowered(bytes[index]) != lowered(byte) { return false }
      index += 1
    }
    return true
  }

  /// `byte` with an ASCII capital letter made small.
  private static func lowered(_ byte: UInt8) -> UInt8 {
    byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
  }
}
