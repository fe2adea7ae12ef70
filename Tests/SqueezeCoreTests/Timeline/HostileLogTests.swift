import Foundation
import TestSupport
import Testing

@testable import SqueezeCore

/// Logs written to hurt the reader and the renderers: numbers out of range, names that are
/// markup, names and folders long enough to make quadratic work show.
@Suite struct HostileLogTests {
  /// A schema-2 `start` line.
  static let start =
    #"{"event":"start","t":0,"schema":2,"version":"t","arch":"x86_64","isolation":"nonisolated","jobs":2,"level":6,"cpus":2,"files":1,"bytes":10,"blockSize":131072}"#

  /// `lines` after the start line, as a log's bytes.
  static func log(_ lines: [String]) -> [UInt8] {
    Array(([start] + lines).map { $0 + "\n" }.joined().utf8)
  }

  @Test(arguments: [
    (line: #"{"event":"task","t":1e13,"id":1,"state":"running","thread":5}"#, key: "t"),
    (line: #"{"event":"task","t":-0.5,"id":1,"state":"running","thread":5}"#, key: "t"),
    (line: #"{"event":"hang","t":0.5,"durationMs":1e300,"severity":"hang"}"#, key: "durationMs"),
    (
      line: #"{"event":"sample","t":0.1,"running":1,"mainActorLagMs":1e300}"#,
      key: "mainActorLagMs"
    ),
    (line: #"{"event":"sample","t":0.1,"running":1e10}"#, key: "running"),
    (
      line: #"{"event":"sample","t":0.1,"threads":[{"tid":4294967296,"state":"idle"}]}"#, key: "tid"
    ),
    (
      line: #"{"event":"sample","t":0.1,"threads":[{"tid":4,"state":"blocked","syscall":-1}]}"#,
      key: "syscall"
    ),
    (line: #"{"event":"task","t":0.1,"id":1e20,"state":"enqueued"}"#, key: "id"),
    (line: #"{"event":"task","t":0.1,"id":1,"state":"running","thread":-7}"#, key: "thread"),
    (line: #"{"event":"chunk","t":0.1,"id":1,"chunk":1e17,"state":"enqueued"}"#, key: "chunk"),
    (line: #"{"event":"thread","t":0.1,"tid":1e300,"name":"x"}"#, key: "tid"),
    (line: #"{"event":"end","t":1,"files":1,"worstLagMs":1e13}"#, key: "worstLagMs"),
    (line: #"{"event":"end","t":1,"files":1,"bytesOut":1e19}"#, key: "bytesOut"),
    (line: #"{"event":"end","t":1,"files":1,"samplerCPUSeconds":1e10}"#, key: "samplerCPUSeconds"),
  ])
  func aNumberOutOfItsRangeIsAnErrorNamingTheLineAndTheKey(line: String, key: String) {
    // The first task event gives the later ones a task to belong to.
    let bytes = Self.log([#"{"event":"task","t":0,"id":1,"file":"a","state":"enqueued"}"#, line])
    #expect {
      _ = try TaskLogData.parse(bytes)
    } throws: { error in
      guard let error = error as? TaskLogData.ReadError, error.line == 3,
        case .outOfRange(let named, _, _) = error.reason
      else { return false }
      return named == key && error.description.hasPrefix("line 3: \"\(key)\" is out of range (")
    }
  }

  @Test func theMessageSaysTheValueAndTheRange() throws {
    let bytes = Self.log([#"{"event":"task","t":1e13,"id":1,"state":"running","thread":5}"#])
    let error = try #require(throws: TaskLogData.ReadError.self) { try TaskLogData.parse(bytes) }
    #expect(error.description == #"line 2: "t" is out of range (1e+13; expected 0 to 1e+9)"#)
  }

  @Test func fractionsWhereWholeNumbersBelongAndTextWhereNumbersBelongAreErrors() throws {
    let fraction = try #require(throws: TaskLogData.ReadError.self) {
      try TaskLogData.parse(Self.log([#"{"event":"task","t":0,"id":2.5,"state":"enqueued"}"#]))
    }
    #expect(fraction.description == #"line 2: "id" is not a whole number (2.5)"#)
    let text = try #require(throws: TaskLogData.ReadError.self) {
      try TaskLogData.parse(Self.log([#"{"event":"task","t":"soon","id":2,"state":"enqueued"}"#]))
    }
    #expect(text.description == #"line 2: "t" is not a number"#)
  }

  @Test func linesAreCountedAsAnEditorCountsThemBlankOnesIncluded() throws {
    let bytes = Array(
      (Self.start + "\n\n   \n" + #"{"event":"hang","t":1e10,"durationMs":1}"# + "\n").utf8)
    let error = try #require(throws: TaskLogData.ReadError.self) { try TaskLogData.parse(bytes) }
    #expect(error.line == 4)
  }

  /// Every number at the top of its range: what the renderers work out from them stays
  /// inside the integers they use, so all three drawings come out (none traps).
  @Test func aLogWithEveryNumberAtItsLimitDrawsInAllThreeFormats() throws {
    let limits = TaskLogData.Limits.self
    let second = limits.seconds.upperBound
    let count = Int(limits.count.upperBound)
    let id = Int64(limits.identifier.upperBound)
    let tid = Int(limits.threadID.upperBound)
    let millis = limits.milliseconds.upperBound
    let bytes = Int64(limits.byteCount.upperBound)
    let lines = [
      #"{"event":"start","t":0,"schema":\#(count),"arch":"x86_64","isolation":"x","jobs":\#(count),"level":\#(count),"cpus":\#(count),"files":\#(count),"bytes":\#(bytes),"blockSize":\#(bytes)}"#,
      #"{"event":"thread","t":\#(second),"tid":\#(tid),"name":"n"}"#,
      #"{"event":"task","t":0,"id":\#(id),"file":"f","state":"enqueued","on":"actor"}"#,
      #"{"event":"task","t":\#(second),"id":\#(id),"state":"running","thread":\#(tid)}"#,
      #"{"event":"chunk","t":0,"id":\#(id),"chunk":\#(id),"state":"enqueued"}"#,
      #"{"event":"chunk","t":\#(second),"id":\#(id),"chunk":\#(id),"state":"running","thread":\#(tid)}"#,
      #"{"event":"task","t":0,"id":\#(id),"state":"suspended","reason":"slot"}"#,
      #"{"event":"task","t":\#(second),"id":\#(id),"state":"failed","error":"e"}"#,
      #"{"event":"sample","t":\#(second),"running":\#(count),"enqueued":\#(count),"suspended":\#(count),"alive":\#(count),"total":\#(count),"completed":\#(count),"actorQueue":\#(count),"threads":[{"tid":\#(tid),"state":"blocked","syscall":\#(tid)}],"mainActorLagMs":\#(millis)}"#,
      #"{"event":"sample","t":0,"running":0,"mainActorLagMs":\#(millis)}"#,
      #"{"event":"hang","t":\#(second),"durationMs":\#(millis),"severity":"hang"}"#,
      #"{"event":"end","t":\#(second),"files":\#(count),"failed":\#(count),"bytesIn":\#(bytes),"bytesOut":\#(bytes),"maxRunning":\#(count),"maxEnqueued":\#(count),"hangs":\#(count),"microhangs":\#(count),"worstLagMs":\#(millis),"leakedContinuations":\#(count),"samplerCPUSeconds":\#(second)}"#,
    ]
    let data = try TaskLogData.parse(Array(lines.map { $0 + "\n" }.joined().utf8))
    let model = TimelineModel(data: data)
    #expect(
      try TimelineTests.elementIDs(TimelineRenderer(model: model).svg()).contains("lag-track"))
    let html = TimelinePage(model: model).html()
    #expect(try TimelineDrawingTests.dataBlock(of: html)["tasks"] != nil)
    #expect(
      try JSONSerialization.jsonObject(with: Data(ChromeTrace(model: model).json().utf8))
        is [String: Any])
    #expect(model.narrative(of: 0).hasPrefix("f: "))
  }
}

/// Names that are markup, in every drawing: text in the SVG, text in the page, strings in the
/// trace; the page's data block ends where squeeze ended it.
@Suite struct MarkupInNamesTests {
  static let names = [
    "q<!--<script>q", "</SCRIPT><script>alert(1)</script>", "a&b\"c'd<e>f]]>",
    "ctl\u{1}\u{7F}\r\nx\u{FFFF}\u{FFFE}", "<!--<sCrIpT >",
  ]

  /// A log of three tasks, the second named `name` (failed with `name` as its error).
  static func log(_ name: String) -> [UInt8] {
    var quoted = JSONWriter()
    quoted.string(name)
    let json = String(decoding: quoted.bytes, as: UTF8.self)
    return HostileLogTests.log([
      #"{"event":"thread","t":0,"tid":5,"name":\#(json)}"#,
      #"{"event":"task","t":0.1,"id":1,"file":"a","state":"enqueued","on":"pool"}"#,
      #"{"event":"task","t":0.1,"id":2,"file":\#(json),"state":"enqueued","on":"pool"}"#,
      #"{"event":"task","t":0.2,"id":2,"state":"running","thread":5}"#,
      #"{"event":"task","t":0.3,"id":2,"file":\#(json),"state":"failed","error":\#(json)}"#,
      #"{"event":"task","t":0.3,"id":3,"file":"c","state":"enqueued","on":"pool"}"#,
      #"{"event":"warning","t":0.3,"message":\#(json)}"#,
      #"{"event":"end","t":0.4,"files":3}"#,
    ])
  }

  /// Where the content of the `<script>` element whose content starts at `start` ends, by
  /// HTML's tokenizer (WHATWG, "script data" and its escaped and double-escaped states): a
  /// `<!--` followed by `<script` inside the element makes the next `</script>` part of it.
  static func scriptContentEnd(_ html: [UInt8], from start: Int) -> Int? {
    func matches(_ word: String, at index: Int) -> Bool {
      let bytes = Array(word.utf8)
      guard index + bytes.count <= html.count else { return false }
      for (offset, byte) in bytes.enumerated()
      where html[index + offset] | 0x20 != byte | 0x20 && html[index + offset] != byte {
        return false
      }
      return true
    }
    func endsTagName(at index: Int) -> Bool {
      index < html.count && [0x09, 0x0A, 0x0C, 0x0D, 0x20, 0x2F, 0x3E].contains(html[index])
    }
    enum State { case data, escaped, doubleEscaped }
    var state = State.data
    var index = start
    while index < html.count {
      switch state {
      case .data:
        if matches("<!--", at: index) {
          state = .escaped
          index += 4
          continue
        }
        if matches("</script", at: index) && endsTagName(at: index + 8) { return index }
      case .escaped:
        if matches("-->", at: index) {
          state = .data
          index += 3
          continue
        }
        if matches("</script", at: index) && endsTagName(at: index + 8) { return index }
        if matches("<script", at: index) && endsTagName(at: index + 7) {
          state = .doubleEscaped
          index += 7
          continue
        }
      case .doubleEscaped:
        if matches("-->", at: index) {
          state = .data
          index += 3
          continue
        }
        if matches("</script", at: index) && endsTagName(at: index + 8) {
          state = .escaped
          index += 8
          continue
        }
      }
      index += 1
    }
    return nil
  }

  @Test(arguments: names)
  func thePagesDataBlockEndsWhereSqueezeEndedIt(name: String) throws {
    let model = TimelineModel(data: try TaskLogData.parse(Self.log(name)))
    let html = Array(TimelinePage(model: model).html().utf8)
    let opening = Array("<script type=\"application/json\" id=\"\(TimelinePage.dataID)\">".utf8)
    let start = try #require(
      html.indices.first { html[$0...].starts(with: opening) }.map { $0 + opening.count })
    let end = try #require(Self.scriptContentEnd(html, from: start))
    // Squeeze ends the block with `</script>` and starts its code right after.
    #expect(html[end...].starts(with: Array("</script>\n<script>\n".utf8)), "\(name)")
    let block = Array(html[start..<end])
    #expect(!block.contains(UInt8(ascii: "<")), "no markup in the data")
    let data = try #require(
      try JSONSerialization.jsonObject(with: Data(block)) as? [String: Any])
    // Front-coded (the characters shared with the previous name, then the rest).
    let coded = try #require(data["files"] as? [Any])
    var files: [String] = []
    for index in stride(from: 0, to: coded.count - 1, by: 2) {
      let shared = try #require(coded[index] as? Int)
      let rest = try #require(coded[index + 1] as? String)
      files.append(String((files.last ?? "").utf16.prefix(shared))! + rest)
    }
    #expect(files.contains(name), "the name reads back whole")
    // The page's code holds nothing that would change or end its element.
    let code = TimelinePage.script.lowercased()
    for word in ["<!--", "<script", "</script"] { #expect(!code.contains(word)) }
  }

  @Test(arguments: names)
  func theSVGIsWellFormedXMLWithTheNameAsText(name: String) throws {
    let model = TimelineModel(data: try TaskLogData.parse(Self.log(name)))
    let folder = TemporaryFolder("markup-svg")
    let svg = try folder.write("t.svg", text: TimelineRenderer(model: model).svg())
    // Python's own XML parser, and the text it reads back: the name, less what XML 1.0
    // cannot hold (control characters, U+FFFE, U+FFFF: U+FFFD instead).
    let script = """
      import sys, xml.etree.ElementTree as E
      root = E.parse(sys.argv[1]).getroot()
      titles = [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}title")]
      sys.stdout.write("\\n".join(titles))
      """
    let parsed = try Shell.run("/usr/bin/python3", ["-c", script, svg])
    #expect(parsed.status == 0, "\(parsed.stderrText)")
    let readable = String(
      String.UnicodeScalarView(
        name.unicodeScalars.map { scalar in
          switch scalar.value {
          case 0x09, 0x0A: scalar
          case 0..<0x20, 0xFFFE, 0xFFFF: "\u{FFFD}"
          default: scalar
          }
        }))
    #expect(parsed.stdoutText.contains(readable + ": "), "its story names it")
  }

  @Test(arguments: names)
  func theTraceIsJSONWithTheNameAsAString(name: String) throws {
    let model = TimelineModel(data: try TaskLogData.parse(Self.log(name)))
    let trace = try TimelineDrawingTests.checkTraceRules(ChromeTrace(model: model).json())
    #expect(trace.contains { $0["name"] as? String == name }, "a slice named after it")
  }

  @Test func thePageSaysNoWordOfTheStoriesItself() {
    // The stories are worked out once, by TimelineModel: the page only puts them together.
    for words in ["waited", "after it was created", "compression slot", "leaked continuation"] {
      #expect(!TimelinePage.script.contains(words), "\(words)")
    }
  }

  @Test func jsonInAScriptElementEscapesMarkupAndReadsBack() throws {
    let text = "</script><!--<script>&\"\\\u{1}é"
    var plain = JSONWriter()
    plain.string(text)
    #expect(String(decoding: plain.bytes, as: UTF8.self) == #""</script><!--<script>&\"\\\u0001é""#)
    var script = JSONWriter(capacity: 64, escaping: .scriptElement)
    script.string(text)
    let escaped = String(decoding: script.bytes, as: UTF8.self)
    #expect(
      escaped == #""\u003c/script\u003e\u003c!--\u003cscript\u003e\u0026\"\\\u0001é""#)
    let back =
      try JSONSerialization.jsonObject(
        with: Data(("[" + escaped + "]").utf8)) as? [String]
    #expect(back == [text])
  }
}

/// Drawing is linear in the log's bytes: long names, deep folders and a long name on many
/// slices draw with output proportional to the log (what the old quadratic label fitting and
/// the per-slice names made take minutes, or hundreds of megabytes).
@Suite struct LinearDrawingTests {
  /// A log of one task named `name` that runs `runs` times on one thread.
  static func log(name: String, runs: Int) -> [UInt8] {
    var quoted = JSONWriter()
    quoted.string(name)
    var lines = [
      #"{"event":"thread","t":0,"tid":5,"name":"r-initiated-qos"}"#,
      #"{"event":"task","t":0,"id":1,"file":\#(String(decoding: quoted.bytes, as: UTF8.self)),"state":"enqueued","on":"pool"}"#,
    ]
    for run in 0..<runs {
      let time = Double(run) * 0.001
      lines.append(#"{"event":"task","t":\#(time),"id":1,"state":"running","thread":5}"#)
      lines.append(
        #"{"event":"task","t":\#(time + 0.0005),"id":1,"state":"suspended","reason":"slot"}"#)
    }
    lines.append(#"{"event":"task","t":\#(Double(runs) * 0.001),"id":1,"state":"finished"}"#)
    lines.append(#"{"event":"end","t":\#(Double(runs) * 0.001),"files":1}"#)
    return HostileLogTests.log(lines)
  }

  /// Every drawing of `log`, checked against `bound` bytes.
  static func expectDrawings(of log: [UInt8], within bound: (Int) -> Int) throws {
    let model = TimelineModel(data: try TaskLogData.parse(log))
    let limit = bound(log.count)
    let svg = TimelineRenderer(model: model).svg()
    #expect(svg.utf8.count < limit, "SVG \(svg.utf8.count) bytes for a log of \(log.count)")
    _ = try SVGGeometry.read(svg)
    let html = TimelinePage(model: model).html()
    #expect(html.utf8.count < limit, "page \(html.utf8.count) bytes")
    let trace = ChromeTrace(model: model).json()
    #expect(trace.utf8.count < limit, "trace \(trace.utf8.count) bytes")
  }

  @Test func aHundredThousandByteNameOnFourThousandSlicesDrawsInProportion() throws {
    let name = String(repeating: "a-hundred-thousand-byte-name/", count: 3449) + "end.txt"
    #expect(name.utf8.count == 100_028)
    // 4,000 slices: each drawn on its own (the most before binning), each naming the task.
    try Self.expectDrawings(of: Self.log(name: name, runs: 4_000)) { 8 * $0 + 200_000 }
  }

  @Test func twentyFilesFortyFoldersDeepDrawInProportion() throws {
    var lines: [String] = []
    for file in 1...20 {
      let folders = (1...40).map { String(repeating: "folder\($0)-", count: 25) }
      let path = folders.joined(separator: "/") + "/file \(file).txt"
      let time = Double(file) * 0.01
      lines += [
        #"{"event":"task","t":\#(time),"id":\#(file),"file":"\#(path)","state":"enqueued","on":"pool"}"#,
        #"{"event":"task","t":\#(time + 0.001),"id":\#(file),"state":"running","thread":5}"#,
        #"{"event":"task","t":\#(time + 0.002),"id":\#(file),"state":"finished"}"#,
      ]
    }
    lines.append(#"{"event":"end","t":0.3,"files":20}"#)
    let log = HostileLogTests.log(lines)
    #expect(log.count > 20 * 40 * 200)
    try Self.expectDrawings(of: log) { 3 * $0 + 200_000 }
  }

  /// The old fitting, one character at a time from the left (quadratic): the new one must
  /// give the same text.
  static func referenceFit(_ text: String, width maximum: Double, size: Double) -> String {
    guard TimelineFont.width(text, size: size) > maximum else { return text }
    var characters = Array(text)
    while !characters.isEmpty
      && TimelineFont.width("…" + String(characters), size: size) > maximum
    {
      characters.removeFirst()
    }
    return characters.isEmpty ? "" : "…" + String(characters)
  }

  @Test(arguments: [
    "short.txt", "a/very/deep/folder/with/a/long/name/that/goes/on/and/on/file-12.log",
    "ééééééééééééééééééééééééééééééééééééééééééééééééé/é.txt", "🇫🇷🇫🇷🇫🇷🇫🇷🇫🇷🇫🇷🇫🇷🇫🇷🇫🇷🇫🇷🇫🇷🇫🇷/x",
    "e\u{301}e\u{301}e\u{301}e\u{301}e\u{301}e\u{301}e\u{301}e\u{301}e\u{301}e\u{301}e\u{301}",
  ])
  func fittingKeepsTheLongestTailThatFits(text: String) {
    for width in [0.0, 5, 20, 60, 100, 230, 1000] {
      #expect(
        TimelineFont.fit(text, width: width, size: 9)
          == Self.referenceFit(text, width: width, size: 9), "\(width)")
    }
  }

  @Test func aMillionCharacterNameFitsFromItsEnd() {
    let text = String(repeating: "x", count: 1_000_000) + "/the-end.txt"
    let fitted = TimelineFont.fit(text, width: 230, size: 9)
    #expect(fitted.hasPrefix("…") && fitted.hasSuffix("/the-end.txt"))
    #expect(TimelineFont.width(fitted, size: 9) <= 230)
    #expect(TimelineFont.width("…x" + fitted.dropFirst(), size: 9) > 230, "no room for more")
  }
}

@Suite struct DrawingRecognitionTests {
  /// Every drawing squeeze makes is recognized as one (so `timeline -o` may replace it
  /// without -f); other files that begin the same way are not.
  @Test func eachFormatIsRecognizedByItsFirstBytes() throws {
    let model = TimelineModel(data: try TaskLogData.parse(Schema2Log.make(tasks: 5, duration: 1)))
    for drawing in [
      TimelineRenderer(model: model).svg(), TimelinePage(model: model).html(),
      ChromeTrace(model: model).json(),
    ] {
      #expect(OutputCheck.isDrawing(Array(drawing.utf8.prefix(512))), "\(drawing.prefix(40))")
    }
    for other in [
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\"><title>mine</title></svg>",
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>My page</title>",
      "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[]}", "precious\n", "",
    ] {
      #expect(!OutputCheck.isDrawing(Array(other.utf8)), "\(other)")
    }
  }
}
