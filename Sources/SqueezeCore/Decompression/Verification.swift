import Glibc
import SqueezeEngines

/// Checks a finished output by decompressing it, before its source may be removed
/// (`--rm`): it must decode without error as one member, to exactly the source's length and
/// CRC-32.
enum Verification {
  /// Decompresses the temporary `output` and compares it with what was compressed.
  ///
  /// - Throws: ``FileFailure/verificationFailed(_:_:)`` naming what differs.
  static func verify(
    _ output: TemporaryEntry, expectedLength: Int64, expectedCRC: UInt32, display: RawPath,
    decoders: DecoderPool
  ) throws(FileFailure) {
    let descriptor: Int32
    do {
      descriptor = try output.open(flags: O_RDONLY).release()
    } catch {
      throw .verificationFailed(display, "cannot reopen it: \(error)")
    }
    defer { close(descriptor) }
    var crc = CRC32()
    let decoder: GzipDecoder
    do {
      decoder = try decoders.withWorkspace { (workspace) throws(FileFailure) in
        try GzipFileReader.decode(
          descriptor, workspace: workspace, stop: nil, progress: { _ in },
          restart: { crc = CRC32() }
        ) {
          crc.update($0)
        }
      }
    } catch {
      throw .verificationFailed(display, "\(error)")
    }
    guard decoder.members == 1, decoder.totalOutput == expectedLength, crc.value == expectedCRC
    else {
      throw .verificationFailed(
        display,
        "it decompresses to \(decoder.totalOutput) bytes with CRC-32 \(crc.value) in \(decoder.members) members, expected \(expectedLength) bytes with CRC-32 \(expectedCRC)"
      )
    }
  }
}
