import Foundation
import SqueezeEngines
import Testing

@testable import SqueezeCore

/// Replays every input the gzip reader's fuzzer found (`scripts/fuzz decoder` saves them in
/// Tests/Fuzz/regressions/decoder):
/// the decoder must give the same result however the input is cut into pieces.
///
/// - crash-37315f4f…: a second member whose deflate data is corrupt; the error's position
///   depended on the pieces (fixed: zlib's consumed count gives the exact position).
/// - crash-a7f6cc29…: garbage after a member; its position counted the bytes of a partial
///   header already taken (fixed: the position is where the garbage starts).
/// - crash-92054a5e…: an invalid code lengths code in a dynamic block header: zlib refuses it
///   at once ("invalid code lengths set"); ISA-L, more lenient about incomplete codes,
///   decodes on to the end of the input ("truncated"). The file reader therefore lets zlib
///   decide whenever ISA-L refuses a file, so both engines report the same fault.
/// - crash-f9bf6e20…: a distance before the start of the data. ISA-L's error position is
///   where it stopped reading, up to 8 bytes past the fault, and so depends on the pieces
///   (12009 or 12017): with the fast engine the fault must not depend on them, the position
///   may (zlib's stays exact).
@Suite struct GzipReaderRegressionTests {
  static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(
      "Fuzz/regressions/decoder")

  /// The saved inputs: the folder's files (its subfolders hold other targets' inputs).
  static var inputs: [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter {
      var isFolder: ObjCBool = false
      return FileManager.default.fileExists(
        atPath: folder.appendingPathComponent($0).path, isDirectory: &isFolder)
        && !isFolder.boolValue
    }.sorted()
  }

  static func outcome(_ bytes: [UInt8], engine: Engine, piece: (Int) -> Int) -> String {
    guard let inflater = try? engine.makeInflater() else { return "no inflater" }
    let output = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 16)
    defer { output.deallocate() }
    var decoder = GzipDecoder(inflater: inflater, output: output)
    var produced: [UInt8] = []
    var start = 0
    var index = 0
    do {
      while start < bytes.count {
        let end = min(bytes.count, start + max(1, piece(index)))
        index += 1
        try bytes[start..<end].withUnsafeBytes { chunk in
          try decoder.feed(chunk) { (out: UnsafeRawBufferPointer) throws(FileFailure) in
            produced.append(contentsOf: out)
          }
        }
        start = end
      }
      try decoder.finish()
      return "ok \(produced.count) \(decoder.members)"
    } catch let error as GzipStreamError<FileFailure> {
      if case .format(let format) = error { return "error \(format)" }
      return "sink"
    } catch {
      return "error \(error)"
    }
  }

  /// The wording of an outcome's fault, up to its first colon ("error corrupt deflate data").
  static func fault(_ outcome: String) -> Substring {
    outcome.prefix { $0 != ":" }
  }

  @Test func thereAreSavedInputs() {
    #expect(Self.inputs.count >= 2)
  }

  @Test(arguments: Engine.allCases, inputs)
  func decodingDoesNotDependOnThePieces(engine: Engine, name: String) throws {
    let bytes = Array(try Data(contentsOf: Self.folder.appendingPathComponent(name)))
    // The outcome, or with ISA-L its fault: the wording up to the position's colon.
    func comparable(_ outcome: String) -> Substring {
      engine == .zlib ? outcome[...] : outcome.prefix { $0 != "," }
    }
    let whole = comparable(Self.outcome(bytes, engine: engine) { _ in bytes.count })
    #expect(comparable(Self.outcome(bytes, engine: engine) { 1 + $0 % 7 }) == whole, "\(name)")
    #expect(comparable(Self.outcome(bytes, engine: engine) { _ in 4096 }) == whole, "\(name)")
    #expect(comparable(Self.outcome(bytes, engine: engine) { _ in 1 }) == whole, "\(name)")
    // What ISA-L accepts, zlib (the reference) accepts the same way. (Where ISA-L refuses,
    // the file reader lets zlib decide: EngineTests checks the messages of whole files.)
    let fast = Self.outcome(bytes, engine: .fast) { _ in 4096 }
    if fast.hasPrefix("ok") { #expect(Self.outcome(bytes, engine: .zlib) { _ in 4096 } == fast) }
  }
}
