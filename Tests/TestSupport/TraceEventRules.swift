import Foundation

/// Checks a Chrome trace (Google's "Trace Event Format", as Perfetto's UI and
/// chrome://tracing read it) event by event, each against the rules of its kind.
///
/// Every event must have the common fields `ph`, `name`, `pid`, `tid` (integers), `ts`
/// (integer microseconds, not negative) and an `args` object; then by kind:
/// - `X` (complete): `dur` (integer, not negative) and `cat`;
/// - `B`/`E` (duration): balanced on each track, an end never before its begin;
/// - `i`/`I` (instant): a scope `s` of `g`, `p` or `t`, and `cat`;
/// - `C` (counter): `args` holding at least one series, every value a number;
/// - `b`/`n`/`e` (async): an `id` (string or integer) and `cat`;
/// - `M` (metadata): a name of `process_name`, `process_labels`, `process_sort_index`,
///   `thread_name` or `thread_sort_index`, with `args.name` (text) for the names and
///   `args.sort_index` (integer) for the sort orders.
public enum TraceEventRules {
  /// What checking a trace found.
  public struct Report {
    /// The trace's events, in order.
    public var events: [[String: Any]] = []
    /// Each rule an event broke, with the event's position and kind; empty for a valid trace.
    public var problems: [String] = []
    /// How many events of each kind (`ph`) the trace has.
    public var kinds: [String: Int] = [:]
  }

  /// Parses `json` (an object with `traceEvents`) and checks every event.
  ///
  /// - Throws: when the text is not JSON or has no `traceEvents` array of objects.
  public static func check(_ json: String) throws -> Report {
    guard
      let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
      let events = object["traceEvents"] as? [[String: Any]]
    else { throw NotATrace() }
    var report = Report(events: events)
    var open: [String: [Int]] = [:]
    for (position, event) in events.enumerated() {
      let ph = event["ph"] as? String ?? "?"
      report.kinds[ph, default: 0] += 1
      func fail(_ rule: String) { report.problems.append("event \(position) (\(ph)): \(rule)") }
      func integer(_ key: String) -> Int? {
        guard let number = event[key] as? NSNumber else { return nil }
        return wholeNumber(number)
      }
      if !["X", "B", "E", "i", "I", "C", "b", "n", "e", "M"].contains(ph) { fail("unknown ph") }
      if !(event["name"] is String) { fail("no name") }
      guard let pid = integer("pid") else {
        fail("no integer pid")
        continue
      }
      guard let tid = integer("tid") else {
        fail("no integer tid")
        continue
      }
      guard let ts = integer("ts"), ts >= 0 else {
        fail("no integer ts of 0 or more")
        continue
      }
      guard let args = event["args"] as? [String: Any] else {
        fail("no args object")
        continue
      }
      let track = "\(pid)/\(tid)"
      switch ph {
      case "X":
        if (integer("dur") ?? -1) < 0 { fail("no integer dur of 0 or more") }
        if !(event["cat"] is String) { fail("no cat") }
      case "B":
        open[track, default: []].append(ts)
      case "E":
        if let begin = open[track]?.popLast() {
          if ts < begin { fail("ends before it begins on \(track)") }
        } else {
          fail("an end without a begin on \(track)")
        }
      case "i", "I":
        if !["g", "p", "t"].contains(event["s"] as? String ?? "") { fail("no scope s") }
        if !(event["cat"] is String) { fail("no cat") }
      case "C":
        if args.isEmpty { fail("a counter without a series") }
        if !args.values.allSatisfy({ $0 is NSNumber }) { fail("a counter value is not a number") }
      case "b", "n", "e":
        if !(event["id"] is String || integer("id") != nil) { fail("no id") }
        if !(event["cat"] is String) { fail("no cat") }
      case "M":
        switch event["name"] as? String ?? "" {
        case "process_name", "process_labels", "thread_name":
          if !(args["name"] is String || args["labels"] is String) { fail("no args.name") }
        case "process_sort_index", "thread_sort_index":
          if (args["sort_index"] as? NSNumber).flatMap(wholeNumber) == nil {
            fail("no integer args.sort_index")
          }
        default: fail("not a metadata name the format defines")
        }
      default: break
      }
    }
    for (track, begins) in open where !begins.isEmpty {
      report.problems.append("\(begins.count) begin(s) without an end on \(track)")
    }
    return report
  }

  /// `number` as an integer when it is one (`2`, not `1.5`).
  static func wholeNumber(_ number: NSNumber) -> Int? {
    let value = number.doubleValue
    guard value.isFinite, value.rounded() == value, abs(value) < 9e15 else { return nil }
    return number.intValue
  }

  /// The text was not a trace.
  public struct NotATrace: Error {}
}
