import CSystem
import Foundation
import Glibc

/// What a thread of squeeze's process is doing, as the kernel reports it in
/// `/proc/self/task/TID/stat` (proc(5), field 3) and `/proc/self/task/TID/syscall`.
package enum ThreadState: String, Sendable, CaseIterable {
  /// `R`: on a CPU, or runnable and waiting for one (the kernel does not tell them apart).
  case running
  /// `D` (uninterruptible: disk I/O, mostly), or `S` in any system call that is not a wait
  /// for work, time or a signal (a read from a slow device, a lock in the kernel): the
  /// thread is held up doing something.
  case blocked
  /// `S` in a wait for work: `futex` (how dispatch's workers, semaphores and mutexes sleep),
  /// a timed sleep, `epoll_wait`/`poll`, or a wait for a signal.
  case idle
}

/// Reads the state of every thread of the process, for the samples of the task-state log.
///
/// The threads are listed from `/proc/self/task` (its entries are thread ids); each thread's
/// `schedstat`, `stat` and `syscall` files are opened once and re-read with `pread` at
/// offset 0. A thread whose time on a CPU (`schedstat`'s first field, in nanoseconds) has
/// not changed since the last sample has not run, so it is still where it was (the same
/// wait, the same system call): its last reading is reused and only `schedstat` is read. A
/// sample of a dozen mostly idle threads costs a directory read and about fifteen small
/// reads. Owned by the sampler thread alone.
///
/// The classification is R on CPU, D blocked, S in `futex` idle, any other S blocked, with
/// one widening, said here because it changes what
/// a lane shows: an S thread in a timed sleep (`nanosleep`, `clock_nanosleep`), an event
/// wait (`epoll_wait`, `poll`, `select`) or a signal wait (`rt_sigsuspend`, `pause`) is idle
/// too. The heartbeat sleeps between beats and the main thread of an async program waits
/// for signals: neither is blocked on anyone's behalf, and calling them blocked would hide
/// the threads that are (a pool thread in `fsync`).
package struct ThreadStates: ~Copyable {
  /// One thread's state at one sample.
  package struct Reading: Sendable, Equatable {
    /// The thread id (`gettid`).
    package var tid: Int32
    /// What it is doing.
    package var state: ThreadState
    /// The system call it is in (the architecture's number, see ``architecture``), when
    /// blocked.
    package var systemCall: Int?
  }

  /// A thread seen for the first time, or renamed.
  package struct Named: Sendable, Equatable {
    /// The thread id (`gettid`).
    package var tid: Int32
    /// `/proc/self/task/TID/comm`: at most 15 bytes.
    package var name: String
  }

  /// The machine architecture whose system-call numbers the log's `syscall` values use
  /// (`start`'s `arch`).
  package static var architecture: String {
    #if arch(x86_64)
      "x86_64"
    #elseif arch(arm64)
      "aarch64"
    #else
      "unknown"
    #endif
  }

  /// System calls in which a sleeping thread waits for work, time or a signal (idle):
  /// futex, nanosleep, clock_nanosleep, epoll_wait, epoll_pwait, epoll_pwait2, poll, ppoll,
  /// select, pselect6, pause, rt_sigsuspend, rt_sigtimedwait (numbers from the kernel's
  /// `syscall_64.tbl` and the generic `unistd.h` table).
  static let idleSystemCalls: Set<Int> = {
    #if arch(x86_64)
      [202, 35, 230, 232, 281, 441, 7, 271, 23, 270, 34, 130, 128]
    #elseif arch(arm64)
      [98, 101, 115, 22, 441, 73, 72, 133, 137]
    #else
      []
    #endif
  }()

  private struct Open {
    var stat: Int32
    var syscall: Int32
    var schedstat: Int32
    var name: String
    /// Nanoseconds on a CPU at the last reading, and that reading (nil before the first).
    var runtime: UInt64 = 0
    var last: Reading? = nil
  }

  /// `/proc/self/task`, open as a directory; -1 when /proc is not there.
  private let directory: Int32
  /// The threads known so far.
  private var threads: [Int32: Open] = [:]
  private var buffer = [UInt8](repeating: 0, count: 1024)

  /// The thread that reads (the sampler's): reading its own state would always say `R`.
  private let reader = squeeze_thread_id()

  /// Opens `/proc/self/task`; the calling thread is the one that will read (its own state is
  /// reported as `idle`: between samples it sleeps, and reading itself would always see it
  /// on a CPU).
  package init() {
    directory = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
  }

  deinit {
    if directory >= 0 { close(directory) }
    for thread in threads.values {
      close(thread.stat)
      if thread.syscall >= 0 { close(thread.syscall) }
      if thread.schedstat >= 0 { close(thread.schedstat) }
    }
  }

  /// Reads every thread's state, in thread-id order.
  ///
  /// - Returns: the readings, and the threads seen for the first time or renamed since the
  ///   last call (for the log's `thread` events). Threads that have exited are forgotten.
  package mutating func read() -> (readings: [Reading], named: [Named]) {
    let listed = listThreads()
    var readings: [Reading] = []
    var named: [Named] = []
    readings.reserveCapacity(listed.count)
    for tid in listed {
      if threads[tid] == nil, let opened = openThread(tid) { threads[tid] = opened }
      guard var thread = threads[tid] else { continue }
      let runtime = readRuntime(thread.schedstat)
      if let runtime, runtime == thread.runtime, let last = thread.last, last.state != .running,
        tid != reader
      {
        // Not on a CPU since the last sample: still in the same wait.
        readings.append(last)
        continue
      }
      guard let (state, name) = readStat(thread.stat) else {
        forget(tid)
        continue
      }
      defer {
        if var updated = threads[tid] {
          updated.runtime = runtime ?? 0
          updated.last = readings.last?.tid == tid ? readings.last : nil
          threads[tid] = updated
        }
      }
      if name != thread.name {
        thread.name = name
        threads[tid] = thread
        named.append(Named(tid: tid, name: name))
      }
      switch state {
      case _ where tid == reader:
        readings.append(Reading(tid: tid, state: .idle, systemCall: nil))
      case UInt8(ascii: "R"):
        readings.append(Reading(tid: tid, state: .running, systemCall: nil))
      case UInt8(ascii: "S"), UInt8(ascii: "D"):
        let call = readSystemCall(thread.syscall)
        if state == UInt8(ascii: "S"), let call, Self.idleSystemCalls.contains(call) {
          readings.append(Reading(tid: tid, state: .idle, systemCall: nil))
        } else {
          readings.append(Reading(tid: tid, state: .blocked, systemCall: call))
        }
      case UInt8(ascii: "Z"), UInt8(ascii: "X"):
        // Exited: not a thread that does anything any more.
        forget(tid)
      default:
        // Stopped or traced (T, t): held up.
        readings.append(Reading(tid: tid, state: .blocked, systemCall: nil))
      }
    }
    let listedSet = Set(listed)
    for tid in threads.keys where !listedSet.contains(tid) { forget(tid) }
    return (readings, named)
  }

  private mutating func forget(_ tid: Int32) {
    guard let thread = threads.removeValue(forKey: tid) else { return }
    close(thread.stat)
    if thread.syscall >= 0 { close(thread.syscall) }
    if thread.schedstat >= 0 { close(thread.schedstat) }
  }

  /// The thread ids in `/proc/self/task`, sorted.
  private mutating func listThreads() -> [Int32] {
    guard directory >= 0, lseek(directory, 0, SEEK_SET) == 0 else { return [] }
    var tids: [Int32] = []
    buffer.withUnsafeMutableBytes { raw in
      while true {
        let count = squeeze_getdents64(directory, raw.baseAddress, UInt(raw.count))
        guard count > 0 else { break }
        var offset = 0
        while offset < count {
          // struct linux_dirent64: d_ino u64, d_off s64, d_reclen u16, d_type u8, d_name.
          let length = Int(raw.load(fromByteOffset: offset + 16, as: UInt16.self))
          var tid: Int32 = 0
          var index = offset + 19
          var digits = 0
          while index < offset + length, raw[index] >= 0x30, raw[index] <= 0x39 {
            tid = tid * 10 + Int32(raw[index] - 0x30)
            index += 1
            digits += 1
          }
          if digits > 0 && raw[index] == 0 { tids.append(tid) }
          offset += length
        }
      }
    }
    return tids.sorted()
  }

  private func openThread(_ tid: Int32) -> Open? {
    let stat = open("/proc/self/task/\(tid)/stat", O_RDONLY | O_CLOEXEC)
    guard stat >= 0 else { return nil }
    // Readable for the process itself; -1 (state only) if a security module refuses it.
    let syscall = open("/proc/self/task/\(tid)/syscall", O_RDONLY | O_CLOEXEC)
    // Absent without CONFIG_SCHED_INFO: then every thread is read in full.
    let schedstat = open("/proc/self/task/\(tid)/schedstat", O_RDONLY | O_CLOEXEC)
    return Open(stat: stat, syscall: syscall, schedstat: schedstat, name: "")
  }

  /// Nanoseconds the thread has spent on a CPU (`schedstat`: `runtime waittime slices`).
  private mutating func readRuntime(_ descriptor: Int32) -> UInt64? {
    guard descriptor >= 0 else { return nil }
    let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, 64, 0) }
    guard count > 0 else { return nil }
    var value: UInt64 = 0
    var digits = 0
    for byte in buffer[..<count] {
      guard byte >= 0x30 && byte <= 0x39 else { break }
      value = value &* 10 &+ UInt64(byte - 0x30)
      digits += 1
    }
    return digits > 0 ? value : nil
  }

  /// The state letter and name from a `stat` file: `tid (comm) S …`, where the name may hold
  /// spaces and parentheses (so the state follows the last `)`).
  private mutating func readStat(_ descriptor: Int32) -> (UInt8, String)? {
    let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
    guard count > 0 else { return nil }
    let bytes = buffer[..<count]
    guard let open = bytes.firstIndex(of: UInt8(ascii: "(")),
      let close = bytes.lastIndex(of: UInt8(ascii: ")")), close + 2 < count, open < close
    else { return nil }
    let name = String(decoding: bytes[(open + 1)..<close], as: UTF8.self)
    return (bytes[close + 2], name)
  }

  /// The system call number from a `syscall` file (`202 0x… …`), or nil when the thread is
  /// not in one (`running`, `-1 …`) or the file cannot be read.
  private mutating func readSystemCall(_ descriptor: Int32) -> Int? {
    guard descriptor >= 0 else { return nil }
    let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, 32, 0) }
    guard count > 0 else { return nil }
    var value = 0
    var digits = 0
    for byte in buffer[..<count] {
      guard byte >= 0x30 && byte <= 0x39 else { break }
      value = value * 10 + Int(byte - 0x30)
      digits += 1
    }
    return digits > 0 ? value : nil
  }
}

/// Names threads so they can be told apart in the log, `top -H`, `ps -L`, gdb and perf.
package enum ThreadName {
  /// Names the calling thread: in full in ``ThreadRoster`` (for the task-state log's
  /// `thread` events), and for the kernel (`pthread_setname_np`: `ps`, `top -H`, gdb, perf)
  /// its first 15 bytes, all Linux keeps (a longer name would be refused).
  package static func set(_ name: StaticString) {
    let full = name.withUTF8Buffer { String(decoding: $0, as: UTF8.self) }
    ThreadRoster.register(full)
    var kernel = Array(name.withUTF8Buffer { $0.prefix(15) })
    kernel.append(0)
    _ = kernel.withUnsafeBufferPointer { bytes in
      bytes.withMemoryRebound(to: CChar.self) { squeeze_set_thread_name($0.baseAddress) }
    }
  }

  /// The calling thread's id (`gettid(2)`), asked of the kernel once per thread and then
  /// kept in a thread-local variable (about 1 ns a read).
  @inlinable
  package static var currentID: Int32 { squeeze_thread_id() }
}

/// Threads of squeeze's own, outside Swift's cooperative pool: for work that must keep time
/// or block (the sampler, the heartbeat, the publisher, a scan running ahead, an actor's
/// executor) without taking a pool thread away from the tasks.
package enum SystemThread {
  /// Starts a thread that runs `body`, named `name` (at most 15 bytes: ``ThreadName``), or
  /// keeping the process's name when `name` is nil.
  package static func start(name: StaticString?, _ body: @escaping @Sendable () -> Void) {
    let thread = Thread {
      if let name { ThreadName.set(name) }
      body()
      // The kernel may give this thread's id to a new thread.
      if name != nil { ThreadRoster.forget() }
    }
    thread.start()
  }
}
