import Foundation
import Glibc
import TestSupport
import Testing

@testable import SqueezeCore
@testable import SqueezeSystem

/// Completions counted, and the count each call of the publisher's batch hook saw.
final class Completions: Sendable {
  let state = Lock((done: 0, seenByHook: [Int]()))
}

/// How finished files' outcomes reach the actor: the channel's wake-ups and the publisher's
/// one wake-up per batch.
@Suite struct OutcomeDeliveryTests {
  /// How many wake-ups `channel` gave before it was finished, and the files drained at them.
  static func wakeups(of channel: OutcomeChannel) async -> (count: Int, files: [Int]) {
    channel.finish()
    var count = 0
    var files: [Int] = []
    var batch: [OutcomeChannel.Entry] = []
    while await channel.nextWake() {
      count += 1
      channel.drain(into: &batch)
      files += batch.map(\.file)
      batch.removeAll(keepingCapacity: true)
    }
    return (count, files)
  }

  static func entry(_ file: Int) -> OutcomeChannel.Entry {
    OutcomeChannel.Entry(file: file, outcome: .upToDate(bytes: Int64(file)))
  }

  @Test func postsThatDoNotWakeLeaveTheConsumerAsleepUntilWoken() async {
    let quiet = OutcomeChannel()
    for file in 0..<3 { quiet.post(Self.entry(file), wakes: false) }
    #expect(await Self.wakeups(of: quiet).count == 0)

    let woken = OutcomeChannel()
    for file in 0..<3 { woken.post(Self.entry(file), wakes: false) }
    woken.wake()
    woken.wake()
    let (count, files) = await Self.wakeups(of: woken)
    #expect(count == 1, "one wake-up for the three, however often woken")
    #expect(files == [0, 1, 2])
  }

  @Test func wakingWithNothingPostedDoesNotWake() async {
    let channel = OutcomeChannel()
    channel.wake()
    #expect(await Self.wakeups(of: channel).count == 0)
  }

  @Test func aPostWakesAConsumerWaitingOnAnotherTask() async {
    let channel = OutcomeChannel()
    async let woke = channel.nextWake()
    channel.post(Self.entry(7))
    #expect(await woke)
  }

  @Test func finishingEndsAConsumerWaitingWithNothingToDrain() async {
    let channel = OutcomeChannel()
    async let ended = channel.nextWake()
    channel.finish()
    #expect(await ended == false)
  }

  @Test func eachDrainTakesOnlyWhatWasPostedSinceTheLast() {
    let channel = OutcomeChannel()
    var batch: [OutcomeChannel.Entry] = []
    for file in 0..<5 { channel.post(Self.entry(file)) }
    channel.drain(into: &batch)
    #expect(batch.map(\.file) == [0, 1, 2, 3, 4])
    batch.removeAll(keepingCapacity: true)
    for file in 5..<7 { channel.post(Self.entry(file)) }
    channel.drain(into: &batch)
    #expect(batch.map(\.file) == [5, 6])
    batch.removeAll(keepingCapacity: true)
    channel.drain(into: &batch)
    #expect(batch.isEmpty)
  }

  /// A real temporary in `folder`, ready to publish as `name`; its file system is
  /// registered with `publisher` when one is given.
  static func request(
    _ name: RawPath, in folder: FolderHandle, base: Int32, namer: TemporaryNamer,
    publisher: Publisher?
  ) throws -> Publisher.Request {
    let (entry, descriptor) = try TemporaryEntry.file(in: folder, namer: namer, permissions: 0o600)
    defer { close(descriptor) }
    let device = try Descriptor.status(descriptor).device
    publisher?.registerFileSystem(device, using: descriptor)
    return Publisher.Request(
      temporary: entry, final: RelativeLocation(base: base, directory: "", name: name),
      replacesExisting: false, device: device, syncsAfterRename: false)
  }

  @Test func thePublisherCallsItsBatchHookAfterTheBatchsCompletions() async throws {
    let folder = TemporaryFolder("publisher-batch")
    let base = try FileDescriptor.open(RawPath(folder.path), flags: .folder, symlinks: .always)
      .release()
    defer { close(base) }
    let completions = Completions()
    let publisher = Publisher(
      discardRequested: AtomicFlag(),
      afterEachBatch: { completions.state.withLock { $0.seenByHook.append($0.done) } })
    let namer = TemporaryNamer()
    let handle = FolderHandle(borrowing: base)
    let count = 20
    await withTaskGroup(of: Publisher.Outcome.self) { group in
      for index in 0..<count {
        guard
          let request = try? Self.request(
            RawPath("f\(index)"), in: handle, base: base, namer: namer, publisher: publisher)
        else {
          Issue.record("cannot make temporary \(index)")
          continue
        }
        group.addTask {
          await withCheckedContinuation { continuation in
            publisher.submit(request) { outcome in
              completions.state.withLock { $0.done += 1 }
              continuation.resume(returning: outcome)
            }
          }
        }
      }
      for await outcome in group { #expect(outcome == .published) }
    }
    await publisher.shutdown()
    let (done, seen) = completions.state.withLock { ($0.done, $0.seenByHook) }
    #expect(done == count)
    #expect(seen.last == count, "the hook ran after the last completion")
    #expect(seen == seen.sorted(), "once per batch, after its completions")
    #expect(TemporaryFolder.files(in: folder.path).count == count)
  }

  /// A file system whose descriptor could not be kept (a failed `dup`) is registered again by
  /// the next output on it, not skipped as the one registered last.
  @Test func aFailedRegistrationIsTriedAgain() async throws {
    let folder = TemporaryFolder("publisher-register")
    let base = try FileDescriptor.open(RawPath(folder.path), flags: .folder, symlinks: .always)
      .release()
    defer { close(base) }
    let publisher = Publisher(discardRequested: AtomicFlag())
    let request = try Self.request(
      "f", in: FolderHandle(borrowing: base), base: base, namer: TemporaryNamer(),
      publisher: nil)
    publisher.registerFileSystem(request.device, using: -1)
    publisher.registerFileSystem(request.device, using: base)
    #expect(await publisher.publish(request) == .published)
    #expect(publisher.syncsPerformed >= 1)
    await publisher.shutdown()
  }
}
