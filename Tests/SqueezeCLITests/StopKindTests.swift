import Foundation
import Glibc
import TestSupport
import Testing

@testable import SqueezeCLI
@testable import SqueezeCore
@testable import SqueezeSystem
@testable import SqueezeTaskLog

/// A signal's stop and a full disk's differ in one step: what waits in the publisher, whole.
/// A full disk only stops files from starting, so a whole output handed in is still
/// published; a signal asks for a prompt end, so it is removed. Run in-process through the
/// run's ``Stopper``, with an empty temporary handed to the compressor's publisher after
/// the stop.
@Suite struct StopKindTests {
  /// How the run was stopped.
  enum Stop: String, CustomTestStringConvertible {
    case signal, fullDisk
    var testDescription: String { rawValue }
  }

  /// Stops a compressor of a one-file folder as `stop` does, then hands its publisher a
  /// whole temporary named `x` in a folder of its own.
  ///
  /// - Returns: what became of it, whether the run's stop flag was set, and the entries
  ///   then in the folder (temporaries included).
  static func publish(after stop: Stop) async throws -> (
    outcome: Publisher.Outcome, stopped: Bool, entries: [String]
  ) {
    let folder = TemporaryFolder("stop-kind")
    try folder.write("S/a", [1, 2, 3])
    let run = try await InProcessRun.make([folder.url("S")])
    let compressor = run.compressor
    let namer = run.namer
    let flag = run.stop
    let stopper = Stopper()
    stopper.attach(compressor)
    switch stop {
    case .signal: stopper.stop()
    case .fullDisk: stopper.stopForFullDisk()
    }

    try FileManager.default.createDirectory(
      atPath: folder.url("O"), withIntermediateDirectories: true)
    let base = try FileDescriptor.open(
      RawPath(folder.url("O")), flags: .folder, symlinks: .always
    ).release()
    defer { close(base) }
    let (entry, descriptor) = try TemporaryEntry.file(
      in: FolderHandle(borrowing: base), namer: namer, permissions: 0o600)
    let device = try Descriptor.status(descriptor).device
    compressor.publisher.registerFileSystem(device, using: descriptor)
    close(descriptor)
    let request = Publisher.Request(
      temporary: entry, final: RelativeLocation(base: base, directory: "", name: "x"),
      replacesExisting: false, device: device, syncsAfterRename: false)
    let outcome = await compressor.publisher.publish(request)
    await compressor.publisher.shutdown()
    let entries = try FileManager.default.contentsOfDirectory(atPath: folder.url("O")).sorted()
    return (outcome, flag.isSet, entries)
  }

  @Test func aFullDiskStopStillPublishesAWholeOutput() async throws {
    let (outcome, stopped, entries) = try await Self.publish(after: .fullDisk)
    #expect(stopped, "no new file may start")
    #expect(outcome == .published)
    #expect(entries == ["x"])
  }

  @Test func aSignalStopRemovesAWholeOutputNotYetPublished() async throws {
    let (outcome, stopped, entries) = try await Self.publish(after: .signal)
    #expect(stopped)
    #expect(outcome == .cancelled)
    #expect(entries.isEmpty, "\(entries)")
  }
}
