import Foundation
import Glibc
import TestSupport
import Testing

/// SIGINT, SIGTERM and SIGHUP mid-run: temporaries removed, the partial summary printed, and
/// the process ends by the signal.
@Suite(.tags(.slow), .systemTier) struct SignalTests {
  /// A folder big enough to still be working 300 ms after the start.
  static func busyFolder(_ folder: TemporaryFolder) throws {
    for index in 0..<400 {
      try folder.write(
        "in/d\(index % 10)/f\(index).txt", TestData.text(150_000, seed: UInt64(index)))
    }
  }

  /// A signal while a mirror's symbolic links are made, after its files, stops the run
  /// there, as a full disk does: no further link, no deletion, no folder times, the summary
  /// and `--json` say interrupted, and the re-run makes the rest. Before, the run made every
  /// link (20,000: 1.7 to 11 s here), then said it had finished (`"interrupted": false`, no
  /// "interrupted" in its summary) and died of the signal.
  @Test func aSignalWhileAMirrorsLinksAreMadeStopsThere() throws {
    let folder = TemporaryFolder("signal-links")
    _ = try folder.write("S/f", text: "hello\n")
    for index in 0..<20_000 {
      #expect(symlink("f", folder.url("S/l\(index)")) == 0)
    }
    let mirror = folder.url("M")
    let result = try SqueezeBinary.run(["--json", "-o", mirror, folder.url("S/")]) { pid in
      // Once the first link is there, the files are done and the links are being made.
      for _ in 0..<2_000 {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: mirror)) ?? []
        if names.contains(where: { $0.hasPrefix("l") }) { break }
        usleep(10_000)
      }
      kill(pid, SIGINT)
    }
    #expect(result.signal == SIGINT, "\(result.status) \(result.stderrText)")
    let links = try FileManager.default.contentsOfDirectory(atPath: mirror)
      .filter { $0.hasPrefix("l") }.count
    #expect(links < 20_000, "the run stopped making links")
    #expect(result.stderrText.contains(", interrupted"), "\(result.stderrText)")
    let object = try #require(
      JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any],
      "\(result.stdoutText)")
    #expect(object["interrupted"] as? Bool == true)
    let files = try #require(object["files"] as? [String: Any])
    #expect(
      (files["symbolicLinks"] as? [String: Any])?["written"] as? Int == links,
      "\(result.stdoutText)")
    #expect(TemporaryFolder.squeezeTemporaries(under: mirror).isEmpty)

    let rerun = try SqueezeBinary.run(["-o", mirror, folder.url("S/")])
    #expect(rerun.status == 0, "\(rerun.stderrText)")
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: mirror)
        .filter { $0.hasPrefix("l") }.count == 20_000)
  }

  @Test(arguments: [(SIGINT, Int32(130)), (SIGTERM, Int32(143)), (SIGHUP, Int32(129))])
  func aSignalStopsTheRunCleanly(signal number: Int32, status: Int32) throws {
    let folder = TemporaryFolder("signal")
    try Self.busyFolder(folder)
    let result = try SqueezeBinary.run(["-j", "2", folder.url("in")]) { pid in
      usleep(300_000)
      kill(pid, number)
    }
    #expect(result.signal == number, "ended by the signal: \(result.status) \(result.stderrText)")
    #expect(result.status == status)
    #expect(result.stderrText.contains("interrupted"), "the partial summary: \(result.stderrText)")
    let everything = try FileManager.default.subpathsOfDirectory(atPath: folder.path)
    #expect(everything.filter(TemporaryFolder.isSqueezeTemporary).isEmpty, "no temporaries left")
    let outputs = everything.filter { $0.hasSuffix(".gz") }
    for output in outputs {
      #expect(try SystemGzip.accepts(folder.url(output)), "\(output) is whole")
    }
    // The summary counts the files left undone: the 400 less those with an output.
    let notDone = 400 - outputs.count
    if notDone > 0 {
      #expect(
        result.stderrText.contains(
          "interrupted (\(notDone) \(notDone == 1 ? "file" : "files") not done)"),
        "\(outputs.count) of 400 done: \(result.stderrText)")
    }
  }

  /// A signal ignored when squeeze starts stays ignored, as gzip and coreutils leave it: a
  /// shell script's background job gets SIGINT ignored (the terminal's Ctrl-C is not for
  /// it) and `nohup` gives its command SIGHUP ignored. The run goes on to its end.
  @Test(arguments: [SIGINT, SIGHUP])
  func aSignalIgnoredAtTheStartStaysIgnored(signal number: Int32) throws {
    let folder = TemporaryFolder("signal-ignored")
    try Self.busyFolder(folder)
    // `trap '' N` sets the disposition to ignore, which exec keeps.
    let result = try Shell.run(
      "/bin/sh",
      [
        "-c", "trap '' \(number); exec \"$0\" -j 2 \"$1\"", SqueezeBinary.path,
        folder.url("in"),
      ]
    ) { pid in
      usleep(300_000)
      kill(pid, number)
    }
    #expect(result.signal == nil, "not ended by the ignored signal: \(result.stderrText)")
    #expect(result.status == 0, "\(result.stderrText)")
    #expect(!result.stderrText.contains("interrupted"))
    let outputs = try FileManager.default.subpathsOfDirectory(atPath: folder.path)
      .filter { $0.hasSuffix(".gz") }
    #expect(outputs.count == 400, "every file done")
  }

  /// `-q` prints errors only: an interrupted quiet run prints no summary (gzip -q and
  /// pigz -q print nothing either); the status says it was stopped, and nothing is left.
  @Test func aQuietRunStoppedBySignalPrintsNothing() throws {
    let folder = TemporaryFolder("signal-quiet")
    try Self.busyFolder(folder)
    let result = try SqueezeBinary.run([
      "-q", "--json", "-j", "2", "-o", folder.url("M"), folder.url("in"),
    ]) {
      pid in
      usleep(300_000)
      kill(pid, SIGTERM)
    }
    #expect(result.signal == SIGTERM, "ended by the signal: \(result.status) \(result.stderrText)")
    #expect(result.status == 143)
    #expect(result.stderrText == "", "nothing but errors under -q")
    let everything = try FileManager.default.subpathsOfDirectory(atPath: folder.path)
    #expect(everything.filter(TemporaryFolder.isSqueezeTemporary).isEmpty, "no temporaries left")
    // --json (on stdout) says the run was stopped and counts the files it left undone.
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any])
    let files = try #require(object["files"] as? [String: Any])
    let outputs = everything.filter { $0.hasSuffix(".gz") }.count
    #expect(object["interrupted"] as? Bool == true)
    #expect(files["notDone"] as? Int == 400 - outputs, "\(outputs) outputs: \(files)")
    #expect(files["compressed"] as? Int == outputs)
  }

  /// Big files (each compressed chunk by chunk, its temporary open for seconds) and many
  /// small ones.
  static func slowFolder(_ folder: TemporaryFolder) throws {
    for index in 0..<4 {
      try folder.write("in/big\(index).txt", TestData.text(12_000_000, seed: UInt64(100 + index)))
    }
    for index in 0..<200 {
      try folder.write("in/d\(index % 5)/f\(index).txt", TestData.text(20_000, seed: UInt64(index)))
    }
  }

  /// Waits until a squeeze temporary exists below `path` (the run is writing), or the
  /// process `pid` is gone, or a minute has passed (a guard, not a measurement).
  static func waitForTemporary(under path: String, pid: Int32) {
    for _ in 0..<60_000 {
      if !TemporaryLifetimeTests.temporaries(under: path).isEmpty { return }
      if !SqueezeBinary.unnamedOutputs(of: pid, under: path).isEmpty { return }
      if kill(pid, 0) != 0 { return }
      usleep(1000)
    }
  }

  /// Waits until signal `number`, sent to process `pid`, is pending neither for the process
  /// nor for any of its threads (`ShdPnd` and each thread's `SigPnd` in `/proc`, bit
  /// `number - 1`): the run has taken it. libdispatch takes a signal in two steps (a thread
  /// that does not block it passes it on to its manager thread, which reads it from a
  /// signalfd), so both masks are read. Polls without sleeping, so that what the caller does
  /// next comes microseconds later; returns when the process is gone, or after 2 seconds (a
  /// guard, not a measurement).
  static func waitUntilTaken(_ number: Int32, pid: Int32) {
    let bit = UInt64(1) << UInt64(number - 1)
    func pending(_ field: String, in statusFile: String) -> UInt64? {
      guard let text = try? String(contentsOfFile: statusFile, encoding: .utf8) else { return nil }
      for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
        return UInt64(
          line.dropFirst(field.count + 1).trimmingCharacters(in: .whitespaces), radix: 16)
      }
      return nil
    }
    let deadline = Date().addingTimeInterval(2)
    while Date() < deadline {
      guard let shared = pending("ShdPnd", in: "/proc/\(pid)/status") else { return }
      var mask = shared
      let threads =
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
      for thread in threads {
        mask |= pending("SigPnd", in: "/proc/\(pid)/task/\(thread)/status") ?? 0
      }
      if mask & bit == 0 { return }
    }
  }

  /// How a run that gets two signals was started.
  struct TwoSignals: Sendable, CustomTestStringConvertible {
    var first: Int32
    var second: Int32
    var status: Int32
    var extra: [String]
    var testDescription: String {
      "signals \(first) then \(second) \(extra.joined(separator: " "))"
    }
  }

  @Test(arguments: [
    TwoSignals(first: SIGINT, second: SIGINT, status: 130, extra: []),
    TwoSignals(first: SIGTERM, second: SIGINT, status: 130, extra: ["-o", "M"]),
    TwoSignals(first: SIGHUP, second: SIGTERM, status: 143, extra: ["--rm"]),
  ])
  func aSecondSignalStillRemovesEveryTemporary(signals: TwoSignals) throws {
    // The second signal is sent as soon as the run has taken the first, while the first's
    // orderly stop (running chunks finish first: 8 to 70 ms measured here) is under way.
    // A fixed 2 ms pause was used before, and in one run of the whole suite all five rounds
    // of a case died of the first signal. Should the stop still end first (this process
    // preempted between the two), the round is clean but did not test a second signal:
    // rounds go on until one did.
    var secondArrived = false
    for round in 1...8 where !secondArrived {
      let folder = TemporaryFolder("two-signals")
      try Self.slowFolder(folder)
      let extra = signals.extra.map { $0 == "M" ? folder.url("M") : $0 }
      let result = try SqueezeBinary.run(["-9", "-j", "2"] + extra + [folder.url("in")]) { pid in
        SignalTests.waitForTemporary(under: folder.path, pid: pid)
        kill(pid, signals.first)
        // Taken before the second is sent, so that two of one kind arrive as two signals,
        // not one the kernel merged.
        SignalTests.waitUntilTaken(signals.first, pid: pid)
        kill(pid, signals.second)
      }
      let context = "round \(round): \(result.status) \(result.stderrText)"
      #expect(result.signal == signals.second || result.signal == signals.first, "\(context)")
      secondArrived = result.signal == signals.second
      if secondArrived { #expect(result.status == signals.status, "\(context)") }
      #expect(
        TemporaryLifetimeTests.temporaries(under: folder.path).isEmpty,
        "\(context): \(TemporaryLifetimeTests.temporaries(under: folder.path))")
      let everything = try FileManager.default.subpathsOfDirectory(atPath: folder.path)
      for output in everything.filter({ $0.hasSuffix(".gz") }) {
        #expect(try SystemGzip.accepts(folder.url(output)), "\(context): \(output) is whole")
      }
    }
    #expect(secondArrived, "in eight rounds the run always ended before the second signal")
  }

  @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/timeout")))
  func timeoutSendingTwoInterruptsLeavesNoTemporary() throws {
    let folder = TemporaryFolder("timeout-int")
    try Self.slowFolder(folder)
    // SIGALRM is what timeout gets when its time is up: it then sends SIGINT to squeeze and
    // again to its process group (squeeze gets two).
    let result = try Shell.run(
      "/usr/bin/timeout",
      ["--preserve-status", "-s", "INT", "3600", SqueezeBinary.path, "-9", folder.url("in")]
    ) { pid in
      SignalTests.waitForTemporary(under: folder.path, pid: pid)
      kill(pid, SIGALRM)
    }
    #expect(result.status == 130, "\(result.stderrText)")
    #expect(
      TemporaryLifetimeTests.temporaries(under: folder.path).isEmpty,
      "\(TemporaryLifetimeTests.temporaries(under: folder.path))")
  }
}
