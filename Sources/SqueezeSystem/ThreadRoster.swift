import CSystem
import Synchronization

/// What squeeze knows about its threads that the kernel's 15-byte names (`comm`) cannot say:
/// the names squeeze gave its own threads, in full, and the Dispatch queue a thread ran a
/// task's job from.
///
/// The task-state log's `thread` events carry both, so a timeline can name
/// `com.apple.root.user-initiated-qos`'s workers "pool (user-initiated) 1, 2, …" instead of
/// the kernel's `r-initiated-qos`, and can say which thread ran the main actor's jobs (on
/// Linux, after `dispatchMain()`, a Dispatch worker thread drains the main queue while the
/// process's main thread waits for signals).
package enum ThreadRoster {
  /// Thread id → the name squeeze gave it. An entry is removed when its thread ends, since
  /// the kernel reuses thread ids.
  private static let given = Lock<[Int32: String]>([:])
  /// The last log number ``beginLog()`` handed out: each task-state log hears of every
  /// thread's queue afresh.
  private static let generation = Atomic<UInt>(0)

  /// Records `name` as the calling thread's name, in full (`ThreadName/set(_:)` also gives
  /// the kernel its first 15 bytes).
  package static func register(_ name: String) {
    let tid = ThreadName.currentID
    given.withLock { $0[tid] = name }
  }

  /// Forgets the calling thread's name: it is about to end.
  package static func forget() {
    let tid = ThreadName.currentID
    _ = given.withLock { $0.removeValue(forKey: tid) }
  }

  /// The name squeeze gave thread `tid`, or nil for a thread squeeze did not start (the
  /// cooperative pool's, Dispatch's).
  package static func givenName(of tid: Int32) -> String? {
    given.withLock { $0[tid] }
  }

  /// A Dispatch queue, as Dispatch describes it.
  package struct Queue: Sendable, Equatable {
    /// Its label in full (`dispatch_queue_get_label`): "Swift global concurrent queue" for
    /// the cooperative pool, "com.apple.main-thread" for the main queue, where the main
    /// actor's jobs run.
    package var label: String
    /// Its quality of service (`dispatch_queue_get_qos_class`): "user-initiated",
    /// "default", "utility", "background", "user-interactive", or nil when unspecified
    /// (the main queue's).
    package var qos: String?
  }

  /// Starts a new task-state log: every thread reports its queue to it again.
  ///
  /// - Returns: the log's number, for ``queueIfNew(forLog:)``. Each log has its own, so
  ///   logs that live at once (tests in one process) do not make each other hear a queue
  ///   twice.
  package static func beginLog() -> UInt {
    generation.add(1, ordering: .relaxed).newValue
  }

  /// The queue whose job runs on the calling thread, the first time the thread runs a job
  /// from it for log number `log` (``beginLog()``) or since it last told another log; nil
  /// when it already said so, and on squeeze's own threads
  /// (an actor's executor thread is no queue's, and Dispatch would answer with its default
  /// queue).
  ///
  /// - Complexity: O(1); a thread-local comparison unless the queue is new.
  package static func queueIfNew(forLog log: UInt) -> Queue? {
    guard let queue = squeeze_dispatch_queue_if_new(log) else { return nil }
    guard givenName(of: ThreadName.currentID) == nil else { return nil }
    let label = String(cString: squeeze_dispatch_queue_label(queue))
    return Queue(label: label, qos: qosName(squeeze_dispatch_queue_qos(queue)))
  }

  /// The name of a QoS class (the values of `<sys/qos.h>`), or nil when unspecified.
  package static func qosName(_ value: UInt32) -> String? {
    switch value {
    case 0x21: "user-interactive"
    case 0x19: "user-initiated"
    case 0x15: "default"
    case 0x11: "utility"
    case 0x09: "background"
    default: nil
    }
  }
}
