// libFuzzer target for squeeze's gzip reader (GzipDecoder, GzipHeader, both engines'
// inflaters: ISA-L's, the fast engine's, and zlib's; CRC-32). Not a SwiftPM target:
// scripts/fuzz builds the SqueezeEngines module and compiles this file with the sources of
// SqueezeCore, all with `swiftc -sanitize=fuzzer,address`.
//
// For every input it checks, beyond "no crash, no sanitizer report":
// - with each engine, the result does not depend on how the input is cut into pieces: fed
//   whole, in pieces of 1 to 7 bytes, and in 4 KiB pieces, the decoded bytes and the error
//   (if any) are the same (with ISA-L, the fault: it reports where it stopped reading, up
//   to 8 bytes past the fault, which depends on the pieces);
// - what ISA-L accepts, zlib (the reference) accepts with the same bytes (where ISA-L
//   refuses, squeeze's file reader lets zlib decide, so faults are zlib's);
// - output streams in chunks no larger than the decoder's buffer;
// - accepted input has at least one member and its total length equals the bytes produced.

import Glibc
import SqueezeEngines

@testable import SqueezeGzip

struct FuzzSinkError: Error {}

/// Decodes `data` cut into pieces by `pieceSize` (index → size) and returns the outcome.
func decode(_ data: UnsafeRawBufferPointer, engine: Engine, pieceSize: (Int) -> Int) -> (
  bytes: [UInt8], outcome: String
) {
  guard let inflater = try? engine.makeInflater() else { return ([], "no inflater") }
  let output = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 16)
  defer { output.deallocate() }
  var decoder = GzipDecoder(inflater: inflater, output: output)
  var bytes: [UInt8] = []
  var start = 0
  var piece = 0
  while start < data.count {
    let end = min(data.count, start + max(1, pieceSize(piece)))
    piece += 1
    do throws(GzipStreamError<FuzzSinkError>) {
      try decoder.feed(UnsafeRawBufferPointer(rebasing: data[start..<end])) {
        (chunk) throws(FuzzSinkError) in
        precondition(chunk.count <= 4096, "a chunk larger than the output buffer")
        bytes.append(contentsOf: chunk)
        // Bound memory on bombs: stop collecting (but keep decoding) past 8 MiB.
        if bytes.count > 8 << 20 { bytes.removeAll(keepingCapacity: true) }
      }
    } catch {
      switch error {
      case .format(let format): return (bytes, "error: \(format)")
      case .sink: return (bytes, "sink")
      }
    }
    start = end
  }
  do {
    try decoder.finish()
  } catch {
    return (bytes, "error: \(error)")
  }
  precondition(decoder.members >= 1, "accepted input without a member")
  return (bytes, "ok \(decoder.members) \(decoder.totalOutput)")
}

/// libFuzzer's entry point: checks one input (see the top of the file).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
  let data = UnsafeRawBufferPointer(start: start, count: count)
  var results: [Engine: (bytes: [UInt8], outcome: String)] = [:]
  for engine in Engine.allCases {
    let whole = decode(data, engine: engine) { _ in count }
    let small = decode(data, engine: engine) { 1 + $0 % 7 }
    let pages = decode(data, engine: engine) { _ in 4096 }
    // (-O strips precondition messages: say what differs before stopping.)
    // zlib's error positions are exact; ISA-L's are where it stopped, after reading up to
    // 8 bytes ahead, which depends on the pieces: with it, the fault must not.
    let same: (String, String) -> Bool =
      engine == .zlib ? { $0 == $1 } : { fault(of: $0) == fault(of: $1) }
    if !same(whole.outcome, small.outcome) || !same(whole.outcome, pages.outcome) {
      fputs(
        "\(engine): outcome depends on the pieces: whole \(whole.outcome); small \(small.outcome); pages \(pages.outcome)\n",
        stderr)
      fatalError("outcome depends on how the input is cut")
    }
    if whole.outcome.hasPrefix("ok") && (whole.bytes != small.bytes || whole.bytes != pages.bytes) {
      fatalError("decoded bytes depend on how the input is cut")
    }
    results[engine] = whole
  }
  // What ISA-L accepts, zlib accepts with the same bytes. (Where ISA-L refuses, squeeze's
  // file reader lets zlib decide; where only zlib refuses, squeeze would accept what gzip
  // does not: that must never happen.)
  if let fast = results[.fast], let zlib = results[.zlib], fast.outcome.hasPrefix("ok"),
    fast.outcome != zlib.outcome || fast.bytes != zlib.bytes
  {
    fputs("engines disagree: fast \(fast.outcome); zlib \(zlib.outcome)\n", stderr)
    fatalError("the engines disagree")
  }
  // The header parser alone, on every prefix length up to 64 bytes, must not trap.
  for length in 0...min(count, 64) {
    _ = GzipHeader.parse(UnsafeRawBufferPointer(rebasing: data[..<length]))
  }
  return 0
}

/// What must be the same with both engines: the whole outcome of accepted input (members
/// and length), or the error's wording up to its first colon (the detail after it, and
/// where the engine noticed, are the engine's).
func fault(of outcome: String) -> Substring {
  guard outcome.hasPrefix("error: ") else { return outcome[...] }
  return outcome.dropFirst("error: ".count).prefix { $0 != ":" }
}
