import Foundation

/// A task-state log (spec §5) read back: what `squeeze timeline` draws. Unknown keys and
/// unknown events are ignored, as the spec asks of readers.
struct TaskLogData: Sendable {
  /// The `start` event.
  struct Start: Sendable {
    var version = ""
    var isolation = ""
    var jobs = 0
    var level = 0
    var cpus = 0
    var files = 0
    var bytes: Int64 = 0
  }

  /// One `sample` event.
  struct Sample: Sendable {
    var time: Double
    var running: Int
    var enqueued: Int
    var suspended: Int
    var alive: Int
    var total: Int
    var completed: Int
    var actorQueue: Int
    var mainActorLagMilliseconds: Double
  }

  /// One `hang` event.
  struct Hang: Sendable {
    var time: Double
    var durationMilliseconds: Double
    var isHang: Bool
  }

  /// One task's life: its file and each state it entered, in order.
  struct TaskTrack: Sendable {
    var id: Int
    var file: String
    var transitions: [(time: Double, state: TaskState)]

    /// When the task was created.
    var created: Double { transitions.first?.time ?? 0 }
  }

  /// The `end` event.
  struct End: Sendable {
    var time: Double = 0
    var files = 0
    var failed = 0
    var maxRunning = 0
    var maxEnqueued = 0
    var hangs = 0
    var microhangs = 0
    var worstLagMilliseconds: Double = 0
  }

  var start = Start()
  var samples: [Sample] = []
  var hangs: [Hang] = []
  var tasks: [TaskTrack] = []
  var end: End? = nil
  /// The log's last line was cut off (the run was killed while writing it).
  var endsMidLine = false

  /// The last time anything happened, in seconds.
  var duration: Double {
    max(
      end?.time ?? 0, samples.last?.time ?? 0,
      tasks.map { $0.transitions.last?.time ?? 0 }.max() ?? 0)
  }

  /// Why a log could not be read.
  struct ReadError: Error, CustomStringConvertible {
    var line: Int
    var reason: String
    var description: String { "line \(line): \(reason)" }
  }

  /// Parses the JSON Lines of a task-state log.
  ///
  /// A log without an `end` event (a killed run's) is read as far as it goes, and a last
  /// line cut off in the middle is left out.
  ///
  /// - Throws: ``ReadError`` for a line that is not a JSON object (other than a cut-off last
  ///   line), or a log without a `start` event.
  static func parse(_ bytes: [UInt8]) throws(ReadError) -> TaskLogData {
    var data = TaskLogData()
    var sawStart = false
    var taskIndex: [Int: Int] = [:]
    var lineNumber = 0
    let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true)
    for line in lines {
      lineNumber += 1
      guard let object = (try? JSONSerialization.jsonObject(with: Data(line))) as? [String: Any]
      else {
        // A killed run's log can end in the middle of a line: draw what came before it.
        if lineNumber == lines.count && bytes.last != UInt8(ascii: "\n") {
          data.endsMidLine = true
          break
        }
        throw ReadError(line: lineNumber, reason: "not a JSON object")
      }
      func number(_ key: String) -> Double { (object[key] as? NSNumber)?.doubleValue ?? 0 }
      func integer(_ key: String) -> Int { (object[key] as? NSNumber)?.intValue ?? 0 }
      let time = number("t")
      switch object["event"] as? String {
      case "start":
        sawStart = true
        data.start = Start(
          version: object["version"] as? String ?? "",
          isolation: object["isolation"] as? String ?? "",
          jobs: integer("jobs"), level: integer("level"), cpus: integer("cpus"),
          files: integer("files"), bytes: Int64(number("bytes")))
      case "sample":
        data.samples.append(
          Sample(
            time: time, running: integer("running"), enqueued: integer("enqueued"),
            suspended: integer("suspended"), alive: integer("alive"), total: integer("total"),
            completed: integer("completed"), actorQueue: integer("actorQueue"),
            mainActorLagMilliseconds: number("mainActorLagMs")))
      case "task":
        guard let state = (object["state"] as? String).flatMap(TaskState.init(rawValue:)) else {
          continue
        }
        let id = integer("id")
        if let index = taskIndex[id] {
          data.tasks[index].transitions.append((time, state))
        } else {
          taskIndex[id] = data.tasks.count
          data.tasks.append(
            TaskTrack(
              id: id, file: object["file"] as? String ?? "task \(id)", transitions: [(time, state)])
          )
        }
      case "hang":
        data.hangs.append(
          Hang(
            time: time, durationMilliseconds: number("durationMs"),
            isHang: (object["severity"] as? String) == "hang"))
      case "end":
        data.end = End(
          time: time, files: integer("files"), failed: integer("failed"),
          maxRunning: integer("maxRunning"), maxEnqueued: integer("maxEnqueued"),
          hangs: integer("hangs"), microhangs: integer("microhangs"),
          worstLagMilliseconds: number("worstLagMs"))
      default:
        continue
      }
    }
    guard sawStart else {
      throw ReadError(line: 1, reason: "no \"start\" event: not a squeeze task-state log")
    }
    return data
  }

  /// Summary figures of the samples, as `scripts/demo-contention` prints them.
  struct Statistics: Sendable, Equatable {
    /// Mean of `running` over the samples taken while tasks were alive.
    var meanRunning: Double
    var maxRunning: Int
    var maxEnqueued: Int
    /// Mean of `enqueued` over the samples taken while tasks were alive.
    var meanEnqueued: Double
    var maxActorQueue: Int
  }

  /// Statistics of the samples taken while work remained (some task alive or work running).
  var statistics: Statistics {
    let busy = samples.filter { $0.alive > 0 || $0.running > 0 }
    let count = Double(max(busy.count, 1))
    return Statistics(
      meanRunning: Double(busy.reduce(0) { $0 + $1.running }) / count,
      maxRunning: max(samples.map(\.running).max() ?? 0, end?.maxRunning ?? 0),
      maxEnqueued: max(samples.map(\.enqueued).max() ?? 0, end?.maxEnqueued ?? 0),
      meanEnqueued: Double(busy.reduce(0) { $0 + $1.enqueued }) / count,
      maxActorQueue: samples.map(\.actorQueue).max() ?? 0)
  }
}
