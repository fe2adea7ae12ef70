/// The 64-bit FNV-1a hash (Fowler–Noll–Vo, offset basis 0xcbf29ce484222325, prime
/// 0x100000001b3) over raw bytes: stable across processes, machines and versions, unlike
/// Swift's per-process seeded `Hasher`. `--shard` depends on it: a
/// file's shard must be the same wherever and whenever it is computed.
public enum FNV1a {
  /// The offset basis.
  @usableFromInline static let offsetBasis: UInt64 = 0xcbf2_9ce4_8422_2325
  /// The FNV prime for 64 bits.
  @usableFromInline static let prime: UInt64 = 0x0000_0100_0000_01b3

  /// The hash of `bytes`.
  ///
  /// Inlinable so that callers in other modules get a loop specialized for their byte
  /// collection instead of generic iteration through witness calls for every byte.
  @inlinable
  public static func hash64<S: Sequence>(_ bytes: S) -> UInt64 where S.Element == UInt8 {
    var hash = offsetBasis
    for byte in bytes {
      hash ^= UInt64(byte)
      hash = hash &* prime
    }
    return hash
  }
}
