import Dispatch
import Glibc
import Synchronization

/// SIGINT, SIGTERM and SIGHUP handling (spec §3): the first signal asks the run to stop
/// (no new files; running ones stop at their next chunk and remove their temporaries; the
/// publisher removes what it has not renamed), and once the run has cleaned up and printed
/// its partial summary, the command re-raises the signal so a shell or cron sees it
/// (status 130, 143, 129). A second signal while cleaning up ends the process at once.
///
/// Signals are taken by `DispatchSource`s on a queue of their own (the default actions are
/// ignored while they are installed), as swift-package-manager's `Cancellator` does: the
/// handler runs as ordinary code, not in signal context.
package final class SignalHandling: Sendable {
  /// The signals handled.
  package static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP]

  /// The first signal received (0 for none).
  private final class Received: Sendable {
    let number = Atomic<Int32>(0)
  }
  private let received = Received()
  private let queue = DispatchQueue(label: "squeeze.signals")
  /// The installed sources, kept alive for the run.
  // nonisolated(unsafe): the array is written once, in init, before any handler can run, and
  // never read or written again; it exists only to keep the sources alive.
  private nonisolated(unsafe) let sources: [any DispatchSourceSignal]

  /// Installs the handlers; `onFirstSignal` runs (on the signal queue) when the first one
  /// arrives.
  package init(onFirstSignal: @escaping @Sendable (Int32) -> Void) {
    var installed: [any DispatchSourceSignal] = []
    for number in SignalHandling.signals {
      signal(number, SIG_IGN)
      let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
      source.setEventHandler { [received] in
        if received.number.compareExchange(
          expected: 0, desired: number, ordering: .acquiringAndReleasing
        ).exchanged {
          onFirstSignal(number)
        } else {
          // A second signal: stop waiting for the cleanup.
          SignalHandling.reraise(number)
        }
      }
      source.resume()
      installed.append(source)
    }
    sources = installed
  }

  /// The signal received, if any.
  package var receivedSignal: Int32? {
    let number = received.number.load(ordering: .acquiring)
    return number == 0 ? nil : number
  }

  /// Ends the process by `number` with its default action, as if it had never been caught.
  package static func reraise(_ number: Int32) -> Never {
    Glibc.signal(number, SIG_DFL)
    var set = sigset_t()
    sigemptyset(&set)
    sigaddset(&set, number)
    pthread_sigmask(SIG_UNBLOCK, &set, nil)
    raise(number)
    // The default action of these signals ends the process; should it not, exit as a shell
    // reports it.
    exit(128 + number)
  }
}
