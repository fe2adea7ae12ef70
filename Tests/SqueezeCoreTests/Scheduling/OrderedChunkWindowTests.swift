import Dispatch
import Glibc
import SqueezeSystem
import Synchronization
import Testing

@testable import SqueezeCore

/// A chunk's error in these tests; index -1 is the window's interruption.
struct ChunkError: Error, Equatable {
  var index: Int

  static let interruption = ChunkError(index: -1)
}

/// What a window did: which chunks were read, started, consumed and given back, the most in
/// flight (started and not yet consumed) and read ahead (read and not yet consumed), and how
/// many outputs are alive (made and not yet dropped).
final class WindowLedger: Sendable {
  private struct State {
    var produced = 0
    var started: [Int] = []
    var consumed: [Int] = []
    var discarded = 0
    var made = 0
    var alive = 0
    var mostInFlight = 0
    var mostReadAhead = 0
  }
  private let state = Mutex(State())

  func produce() {
    state.withLock {
      $0.produced += 1
      $0.mostReadAhead = max($0.mostReadAhead, $0.produced - $0.consumed.count)
    }
  }
  func start(_ index: Int) {
    state.withLock {
      $0.started.append(index)
      $0.mostInFlight = max($0.mostInFlight, $0.started.count - $0.consumed.count)
    }
  }
  func consume(_ index: Int) { state.withLock { $0.consumed.append(index) } }
  func discard() { state.withLock { $0.discarded += 1 } }
  func make() {
    state.withLock {
      $0.made += 1
      $0.alive += 1
    }
  }
  func drop() { state.withLock { $0.alive -= 1 } }

  var started: [Int] { state.withLock { $0.started } }
  var consumed: [Int] { state.withLock { $0.consumed } }
  var discarded: Int { state.withLock { $0.discarded } }
  var made: Int { state.withLock { $0.made } }
  var alive: Int { state.withLock { $0.alive } }
  var mostInFlight: Int { state.withLock { $0.mostInFlight } }
  var mostReadAhead: Int { state.withLock { $0.mostReadAhead } }

  /// Waits until every output has been dropped, or gives up after about a second: the
  /// runtime frees a finished child task (and the copy of its result it holds) on its own
  /// thread, a moment after the group has handed the result over.
  func settle() async {
    for _ in 0..<1000 where alive > 0 { try? await Task.sleep(for: .milliseconds(1)) }
  }
}

/// A chunk's output: counted alive in its ledger from its making until it is dropped, as a
/// buffer of compressed or restored bytes would be.
final class Piece: Sendable {
  let index: Int
  let value: Int
  private let ledger: WindowLedger

  init(index: Int, value: Int, ledger: WindowLedger) {
    self.index = index
    self.value = value
    self.ledger = ledger
    ledger.make()
  }

  deinit { ledger.drop() }
}

@Suite struct OrderedChunkWindowTests {
  typealias Window = OrderedChunkWindow<Int, Piece, ChunkError>

  static func window(
    width: Int, slots: WorkSlots? = nil, stop: AtomicFlag = AtomicFlag()
  ) -> Window {
    Window(width: width, slots: slots, stop: stop, interruption: .interruption, task: nil)
  }

  /// Runs `count` chunks whose input is their index and whose output doubles it, after
  /// `pause(index)` microseconds; `failing` throws instead.
  static func run(
    _ window: Window, count: Int, ledger: WindowLedger, pause: @escaping @Sendable (Int) -> UInt32,
    failing: Int? = nil, doneAt: Int? = nil, before: @escaping @Sendable (Int) -> Void = { _ in }
  ) async -> ChunkError? {
    var next = 0
    do throws(ChunkError) {
      try await window.run(
        next: { () throws(ChunkError) in
          defer { next += 1 }
          ledger.produce()
          return .chunk(next, isLast: next == count - 1)
        },
        work: { (index, input) throws(ChunkError) in
          ledger.start(index)
          before(index)
          usleep(pause(index))
          if index == failing { throw ChunkError(index: index) }
          return Piece(index: index, value: input * 2, ledger: ledger)
        },
        consume: { (index, piece) throws(ChunkError) in
          #expect(piece.index == index)
          #expect(piece.value == index * 2)
          ledger.consume(index)
          return index == doneAt ? .done : .more
        },
        discard: { _ in ledger.discard() })
      return nil
    } catch {
      return error
    }
  }

  @Test(arguments: [1, 2, 3, 8])
  func handsOutputsOverInChunkOrderWhateverOrderTheyFinishIn(width: Int) async {
    let ledger = WindowLedger()
    // Later chunks often finish first: pauses of 0 to 3 ms in a scrambled order.
    let error = await Self.run(
      Self.window(width: width), count: 40, ledger: ledger,
      pause: { UInt32(($0 * 7919) % 4) * 1000 })
    #expect(error == nil)
    #expect(ledger.consumed == Array(0..<40))
    #expect(Set(ledger.started) == Set(0..<40))
    await ledger.settle()
    #expect(ledger.alive == 0)
  }

  @Test(arguments: [1, 2, 4])
  func keepsNoMoreThanItsWidthInFlightAndInMemory(width: Int) async {
    let ledger = WindowLedger()
    // The first chunk of every group of 8 is the slow one, so the others finish early and
    // wait for their turn: the window fills up to its width.
    let error = await Self.run(
      Self.window(width: width), count: 64, ledger: ledger,
      pause: { $0 % 8 == 0 ? 3000 : 0 })
    #expect(error == nil)
    #expect(ledger.consumed == Array(0..<64))
    // Outputs are made by started chunks only: at most `width` are held at once.
    #expect(ledger.mostInFlight <= width)
    #expect(ledger.mostInFlight == width, "the slow chunks filled the window")
    // The producer reads at most one chunk past the window.
    #expect(ledger.mostReadAhead <= width + 1)
    await ledger.settle()
    #expect(ledger.alive == 0)
  }

  @Test func chunksTakeASlotEachWhileTheyRun() async {
    let ledger = WindowLedger()
    let slots = WorkSlots(width: 2)
    let occupancy = Occupancy()
    var next = 0
    do throws(ChunkError) {
      try await Self.window(width: 6, slots: slots).run(
        next: { () throws(ChunkError) in
          defer { next += 1 }
          return .chunk(next, isLast: next == 29)
        },
        work: { (index, _) throws(ChunkError) in
          occupancy.enter()
          usleep(500)
          occupancy.leave()
          return Piece(index: index, value: index * 2, ledger: ledger)
        },
        consume: { (_, _) throws(ChunkError) in .more })
    } catch {
      Issue.record("unexpected \(error)")
    }
    #expect(occupancy.most <= 2)
    // Every slot came back.
    #expect(slots.tryAcquire() && slots.tryAcquire())
  }

  @Test func aFailingChunkEndsTheWindowWithItsErrorAndDropsTheRest() async {
    let width = 3
    let ledger = WindowLedger()
    let error = await Self.run(
      Self.window(width: width), count: 100, ledger: ledger, pause: { $0 == 5 ? 2000 : 100 },
      failing: 5)
    #expect(error == ChunkError(index: 5))
    #expect(ledger.consumed == Array(0..<ledger.consumed.count))
    #expect(ledger.consumed.count <= 5)
    // Nothing started past what the window held when the failure came back.
    #expect(ledger.started.allSatisfy { $0 < 5 + width + 1 })
    // Every output made was consumed or given back, and none is alive.
    #expect(ledger.made == ledger.consumed.count + ledger.discarded)
    await ledger.settle()
    #expect(ledger.alive == 0)
  }

  @Test func aConsumerThatIsDoneStopsTheChunksAfterIt() async {
    let ledger = WindowLedger()
    let error = await Self.run(
      Self.window(width: 4), count: 100, ledger: ledger, pause: { _ in 200 }, doneAt: 10)
    #expect(error == nil)
    #expect(ledger.consumed == Array(0...10))
    #expect(ledger.started.allSatisfy { $0 <= 10 + 4 })
    #expect(ledger.made == ledger.consumed.count + ledger.discarded)
    await ledger.settle()
    #expect(ledger.alive == 0)
  }

  @Test func cancellingItsTaskStopsStartingChunks() async {
    let ledger = WindowLedger()
    let runner = Mutex<Task<ChunkError?, Never>?>(nil)
    let width = 2
    let task = Task {
      await Self.run(
        Self.window(width: width), count: 1000, ledger: ledger, pause: { _ in 100 },
        before: { index in
          guard index == 3 else { return }
          // The chunk cancels the task that runs the window (once it is known).
          while runner.withLock({ $0 }) == nil { usleep(100) }
          runner.withLock { $0 }?.cancel()
        })
    }
    runner.withLock { $0 = task }
    let error = await task.value
    #expect(error == .interruption)
    #expect(ledger.started.allSatisfy { $0 <= 3 + width + 1 })
    #expect(ledger.made == ledger.consumed.count + ledger.discarded)
    await ledger.settle()
    #expect(ledger.alive == 0)
  }

  @Test func aStopSignalEndsTheWindowAsTheRunsStopDoes() async throws {
    // SIGUSR1 stands in for SIGINT (which the test runner keeps): its handler does what
    // squeeze's does on a stopping signal, set the stop flag and close the slots.
    let stop = AtomicFlag()
    let slots = WorkSlots(width: 2)
    signal(SIGUSR1, SIG_IGN)
    let source = DispatchSource.makeSignalSource(
      signal: SIGUSR1, queue: DispatchQueue(label: "test.signal"))
    source.setEventHandler {
      stop.set()
      slots.close()
    }
    source.resume()
    defer {
      source.cancel()
      signal(SIGUSR1, SIG_DFL)
    }
    let ledger = WindowLedger()
    let width = 3
    let error = await Self.run(
      Self.window(width: width, slots: slots, stop: stop), count: 1000, ledger: ledger,
      pause: { _ in 100 },
      before: { index in
        guard index == 4 else { return }
        kill(getpid(), SIGUSR1)
        // Wait (bounded) for the handler, as a chunk would go on compressing meanwhile.
        for _ in 0..<100_000 where !stop.isSet { usleep(100) }
      })
    #expect(stop.isSet)
    #expect(error == .interruption)
    #expect(ledger.started.allSatisfy { $0 <= 4 + width + 1 })
    #expect(ledger.made == ledger.consumed.count + ledger.discarded)
    await ledger.settle()
    #expect(ledger.alive == 0)
  }
}
