import CLibdeflate
import Glibc

/// Decides, from a chunk's data alone, whether deflating it would save anything: data that
/// is already compressed (xz, zip, jpeg) is then written as stored blocks
/// (``StoredBlocks``), at copying speed, instead of being deflated for nothing (libdeflate
/// -6 spends 2.5 s of CPU on the kernel's 138 MB `.tar.xz` to make it 0.01 % larger).
///
/// Two steps, the first nearly free, so compressible data pays almost nothing:
/// 1. Order-0 entropy of ``entropySampleLength`` bytes spread over the chunk. Text, code and
///    most binaries are well under ``entropyGate`` bits a byte: deflate them.
/// 2. Otherwise, libdeflate's fastest level on ``sampleCount`` samples of ``sampleLength``
///    bytes (a deflate window each, so matches within the window count): if that saves less
///    than ``minimumSaving`` of the samples, store the chunk.
///
/// Deterministic: the decision depends only on the chunk's bytes, so outputs stay the same
/// whatever `--jobs` or the isolation stage. Chunks shorter than ``minimumChunkLength`` are
/// not probed (libdeflate chooses stored blocks for them itself when it must).
///
/// Not thread-safe: it holds a compressor; one per ``LibdeflateDeflater``.
final class IncompressibleProbe {
  private let compressor: OpaquePointer
  private let scratch: UnsafeMutableRawBufferPointer

  /// The shortest chunk probed: 64 KiB.
  static let minimumChunkLength = 64 << 10
  /// Bytes whose byte histogram gives the entropy estimate: 16 KiB, in 4 runs of 4 KiB.
  static let entropySampleLength = 16 << 10
  /// Bits a byte below which data is taken as compressible without the second step: 7.5
  /// (kernel source is about 5, executables about 6, xz and zip data 7.99).
  static let entropyGate = 7.5
  /// Samples libdeflate compresses in the second step, and their length (32 KiB, the
  /// deflate window).
  static let sampleCount = 3
  static let sampleLength = 32 << 10
  /// The saving below which a chunk is stored: 0.1 % of the samples.
  static let minimumSaving = 0.001

  /// - Throws: ``EngineError`` when libdeflate cannot allocate its fastest compressor.
  init() throws(EngineError) {
    guard let compressor = libdeflate_alloc_compressor(1) else {
      throw EngineError(
        library: .libdeflate, code: 0,
        detail: "cannot allocate a compressor at level 1 (libdeflate)")
    }
    self.compressor = compressor
    scratch = .allocate(
      byteCount: libdeflate_deflate_compress_bound(compressor, Self.sampleLength), alignment: 64)
  }

  deinit {
    libdeflate_free_compressor(compressor)
    scratch.deallocate()
  }

  /// True when `chunk` should be stored rather than deflated.
  func isIncompressible(_ chunk: UnsafeRawBufferPointer) -> Bool {
    guard chunk.count >= Self.minimumChunkLength else { return false }
    guard Self.entropy(of: chunk) >= Self.entropyGate else { return false }
    var sampled = 0
    var compressed = 0
    for index in 0..<Self.sampleCount {
      let start = (chunk.count - Self.sampleLength) * index / max(1, Self.sampleCount - 1)
      let sample = UnsafeRawBufferPointer(rebasing: chunk[start..<(start + Self.sampleLength)])
      let produced = libdeflate_deflate_compress(
        compressor, sample.baseAddress, sample.count, scratch.baseAddress, scratch.count)
      sampled += sample.count
      compressed += produced == 0 ? sample.count : produced
    }
    return Double(sampled - compressed) < Double(sampled) * Self.minimumSaving
  }

  /// Order-0 entropy in bits a byte of 4 runs of 4 KiB spread over `chunk`.
  static func entropy(of chunk: UnsafeRawBufferPointer) -> Double {
    var counts = [Int](repeating: 0, count: 256)
    let run = entropySampleLength / 4
    for index in 0..<4 {
      let start = (chunk.count - run) * index / 3
      for byte in chunk[start..<(start + run)] { counts[Int(byte)] += 1 }
    }
    let total = Double(entropySampleLength)
    var bits = 0.0
    for count in counts where count > 0 {
      let p = Double(count) / total
      bits -= p * log2(p)
    }
    return bits
  }
}
