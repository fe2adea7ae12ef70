import CSystem
import Dispatch
import Glibc
import Synchronization

/// SIGINT, SIGTERM and SIGHUP handling: the first signal asks the run to stop (no new
/// files; running ones stop at their next chunk and remove their temporaries; the publisher
/// removes what it has not renamed), and once the run has cleaned up and printed its partial
/// summary, the command re-raises the signal so a shell or cron sees it (status 130, 143,
/// 129). A second signal (`timeout -s INT` sends two; a user presses Ctrl-C again) skips the
/// rest: the command's `onSecondSignal` removes what must not outlive the run (its
/// temporaries), and the second signal is re-raised at once, without the summary.
///
/// A signal whose disposition was "ignore" when the handlers are installed is left ignored
/// (a background job's SIGINT, `nohup`'s SIGHUP), as gzip leaves it.
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
  /// arrives, and `onSecondSignal` when another one does, right before that one is re-raised.
  package init(
    onFirstSignal: @escaping @Sendable (Int32) -> Void,
    onSecondSignal: (@Sendable (Int32) -> Void)? = nil
  ) {
    var installed: [any DispatchSourceSignal] = []
    // A signal ignored when the process started stays ignored, as gzip and coreutils leave
    // it: a shell starts a background job (`cmd &` in a script) with SIGINT ignored, so that
    // the terminal's Ctrl-C is not for it, and `nohup` starts its command with SIGHUP ignored.
    for number in SignalHandling.signals where squeeze_signal_is_ignored(number) == 0 {
      signal(number, SIG_IGN)
      let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
      let handle = SourceHandle(source)
      source.setEventHandler { [received] in
        // Signals that arrive together are reported in one call (`data` counts them):
        // `timeout -s INT` sends two within microseconds.
        var count = max(1, handle.source.data)
        if received.number.compareExchange(
          expected: 0, desired: number, ordering: .acquiringAndReleasing
        ).exchanged {
          onFirstSignal(number)
          count -= 1
        }
        if count > 0 {
          // A second signal: no summary, but nothing left behind either.
          onSecondSignal?(number)
          SignalHandling.reraise(number)
        }
      }
      source.resume()
      installed.append(source)
    }
    sources = installed
  }

  /// A signal source, for its own event handler to read how many signals it reports.
  // @unchecked Sendable: `source` is set once, before the source is resumed, and only read
  // afterwards, by the event handler, on the one serial queue every source delivers to. The
  // handler keeps its source alive through this: both live as long as the process handles
  // signals, which is what the run needs.
  private final class SourceHandle: @unchecked Sendable {
    let source: any DispatchSourceSignal
    init(_ source: any DispatchSourceSignal) { self.source = source }
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
