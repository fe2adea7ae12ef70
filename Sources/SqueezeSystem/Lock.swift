#if SQUEEZE_TSAN_LOCKS
  import Glibc
#else
  import Synchronization
#endif

/// A value that threads and tasks share, read and changed only while holding its lock: the
/// project's one lock type, with the `withLock` API of the standard library's
/// `Synchronization.Mutex`.
///
/// In every ordinary build (debug, release, the tests) it is `Synchronization.Mutex` and
/// nothing more: `withLock` forwards to the mutex's own and is inlined, so the lock costs
/// and behaves exactly as the mutex does.
///
/// Built with the compile-time condition `SQUEEZE_TSAN_LOCKS` (`scripts/sanitize thread`
/// passes `-Xswiftc -DSQUEEZE_TSAN_LOCKS` beside `--sanitize=thread`), it is a
/// `pthread_mutex_t` instead, allocated on the heap once and never moved (POSIX leaves the
/// behaviour of a copied mutex undefined). The reason is ThreadSanitizer: it learns that
/// one critical section happens before the next from the lock and unlock calls it
/// intercepts (`pthread_mutex_lock` among them) and from atomic operations in code it
/// instruments. On Linux, `Mutex` hands a contended lock from one thread to the next inside
/// the kernel (a priority-inheritance futex, `FUTEX_LOCK_PI`), called from the Swift
/// runtime, which is neither instrumented nor intercepted. ThreadSanitizer then sees two
/// threads touch the protected value with nothing ordering them, and reports every
/// critical section of a contended lock as a data race: noise that buries real races. Over
/// `pthread_mutex_t` it sees the ordering, and what it still reports is real.
///
/// Like `Mutex`, the lock is non-copyable and not reentrant: calling ``withLock(_:)`` again
/// from inside its own closure deadlocks (`Mutex` stops the process instead). Keep it as a
/// `let` of a `Sendable` final class, and keep the closures short: a thread waiting for the
/// lock is blocked, not suspended.
///
/// It is `public`, not `package`: across modules a `package` `@inlinable` generic method was
/// called unspecialized where the same method declared `public` was inlined into the caller,
/// and every lock in the pipeline is taken from a module above this one.
public struct Lock<Value: ~Copyable>: ~Copyable {
  #if SQUEEZE_TSAN_LOCKS
    /// The POSIX mutex, at a heap address that never changes.
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// The protected value, read and written only while `mutex` is held.
    @usableFromInline let value: UnsafeMutablePointer<Value>
  #else
    /// The standard library's mutex, which holds the value.
    @usableFromInline let mutex: Mutex<Value>
  #endif

  /// A lock protecting `initialValue`.
  ///
  /// - Parameter initialValue: the value the lock starts with; it is sent into the lock, so
  ///   the caller keeps no other reference to it.
  @inlinable
  public init(_ initialValue: consuming sending Value) {
    #if SQUEEZE_TSAN_LOCKS
      mutex = .allocate(capacity: 1)
      mutex.initialize(to: pthread_mutex_t())
      // A default mutex (null attributes): not recursive, no error checking, the kind
      // whose lock and unlock cannot fail once it is initialised.
      pthread_mutex_init(mutex, nil)
      value = .allocate(capacity: 1)
      value.initialize(to: initialValue)
    #else
      mutex = Mutex(initialValue)
    #endif
  }

  #if SQUEEZE_TSAN_LOCKS
    @inlinable
    deinit {
      value.deinitialize(count: 1)
      value.deallocate()
      pthread_mutex_destroy(mutex)
      mutex.deinitialize(count: 1)
      mutex.deallocate()
    }
  #endif

  /// Runs `body` with the protected value while holding the lock, and returns its result.
  ///
  /// The calling thread blocks until the lock is free, so `body` must be short and must not
  /// suspend (it is synchronous) or take this lock again. The lock is released when `body`
  /// returns or throws.
  ///
  /// - Parameter body: reads or changes the value; what it returns or throws is passed on.
  /// - Returns: what `body` returned.
  /// - Throws: what `body` threw, unchanged.
  @inlinable @inline(__always)
  public borrowing func withLock<Result: ~Copyable, E: Error>(
    _ body: (inout sending Value) throws(E) -> sending Result
  ) throws(E) -> sending Result {
    #if SQUEEZE_TSAN_LOCKS
      pthread_mutex_lock(mutex)
      defer { pthread_mutex_unlock(mutex) }
      return try body(&value.pointee)
    #else
      return try mutex.withLock(body)
    #endif
  }
}

#if SQUEEZE_TSAN_LOCKS
  // Safe to share between threads: the value is reached only through `withLock`, which holds the POSIX
  // mutex for the whole of `body`, and `withLock`'s `inout sending` parameter keeps `body`
  // from letting a reference to it escape; the two pointers never change after `init`. This
  // is the same reasoning, and the same conformance, as `Synchronization.Mutex`'s.
  extension Lock: @unchecked Sendable where Value: ~Copyable {}
#else
  extension Lock: Sendable where Value: ~Copyable {}
#endif
