import Foundation
import Glibc
import SqueezeCore
import TestSupport
import Testing

/// `squeeze timeline` run on logs written to hurt it: it fails with a message naming the line
/// (status 1), or draws.
@Suite struct HostileTimelineTests {
  static let start =
    #"{"event":"start","t":0,"schema":2,"version":"t","arch":"x86_64","isolation":"nonisolated","jobs":2,"level":6,"cpus":2,"files":1,"bytes":10,"blockSize":131072}"#

  @Test(arguments: [
    (
      line: #"{"event":"task","t":1e13,"id":1,"state":"running","thread":5}"#,
      message: #"line 3: "t" is out of range (1e+13; expected 0 to 1e+9)"#
    ),
    (
      line: #"{"event":"hang","t":0.5,"durationMs":1e300,"severity":"hang"}"#,
      message: #"line 3: "durationMs" is out of range (1e+300; expected 0 to 1e+12)"#
    ),
  ])
  func aNumberOutOfRangeFailsWithStatus1NamingTheLogAndTheLine(line: String, message: String)
    throws
  {
    let folder = TemporaryFolder("hostile-log")
    let log = try folder.write(
      "run.jsonl",
      text: [Self.start, #"{"event":"task","t":0,"id":1,"file":"a","state":"enqueued"}"#, line]
        .map { $0 + "\n" }.joined())
    for output in ["run.svg", "run.html", "run.json"] {
      let result = try SqueezeBinary.run(["timeline", log, "-o", folder.url(output)])
      #expect(result.status == 1, "\(output): \(result.stderrText)")
      #expect(result.stderrText == "squeeze: '\(log)': \(message)\n")
      #expect(!FileManager.default.fileExists(atPath: folder.url(output)))
    }
  }

  /// An empty log (what a run killed before its first write leaves: `kill -9` 0.1 s into a
  /// run of 3,000 files left one) is said to be empty, in every format, not "line 1: no
  /// start event: not a squeeze task-state log"; status 1, nothing drawn. Blank lines alone
  /// are empty too.
  @Test(arguments: ["", "\n\n"]) func anEmptyLogIsSaidToBeEmpty(contents: String) throws {
    let folder = TemporaryFolder("empty-log")
    let log = try folder.write("run.jsonl", text: contents)
    for output in ["run.svg", "run.html", "run.json"] {
      let result = try SqueezeBinary.run(["timeline", log, "-o", folder.url(output)])
      #expect(result.status == 1, "\(output): \(result.stderrText)")
      #expect(
        result.stderrText
          == "squeeze: '\(log)': empty: its run wrote nothing to it (it stopped before its work, or was killed or is still running before its first write)\n",
        "\(output): \(result.stderrText)")
      #expect(!FileManager.default.fileExists(atPath: folder.url(output)))
    }
  }

  /// A log with no `end` event, cut in the middle of its last line (a killed run's), is drawn
  /// in every format with a warning that says so and how far it goes; status 0.
  @Test func aLogCutOffIsDrawnWithAWarning() throws {
    let folder = TemporaryFolder("cut-log")
    let log = try folder.write(
      "run.jsonl",
      text: [
        Self.start, #"{"event":"task","t":0,"id":1,"file":"a","state":"enqueued"}"#,
        #"{"event":"task","t":1.25,"id":1,"state":"running","thread":5}"#,
      ].map { $0 + "\n" }.joined() + #"{"event":"task","t":1.5,"id"#)
    for output in ["run.svg", "run.html", "run.json"] {
      let result = try SqueezeBinary.run(["timeline", log, "-o", folder.url(output)])
      #expect(result.status == 0, "\(output): \(result.stderrText)")
      #expect(
        result.stderrText.hasSuffix(
          "squeeze: warning: '\(log)' stops before the run's end (killed, or still running): drew its first 1.25 s, its last line cut off\n"
        ), "\(output): \(result.stderrText)")
      #expect(FileManager.default.fileExists(atPath: folder.url(output)))
    }
  }

  /// Debian's `chromium`, when installed: the one test that needs a real browser's HTML
  /// parser and script engine.
  static let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first {
    FileManager.default.isExecutableFile(atPath: $0)
  }

  /// The page once drew nothing for a file named `q<!--<script>q`: in its data block, the
  /// browser's tokenizer took `<!--<script>` as the start of an escaped script, so the
  /// element swallowed the page's code. A real browser runs the page: its code fills in the
  /// title and the legend.
  @Test(
    .tags(.system), .systemTier,
    .enabled(if: chromium != nil, "needs Debian's chromium (a real browser)"))
  func aNameThatIsMarkupLeavesThePageWorkingInABrowser() throws {
    let folder = TemporaryFolder("markup-page")
    let lines = [
      Self.start,
      #"{"event":"task","t":0.1,"id":1,"file":"q<!--<script>q","state":"enqueued","on":"pool"}"#,
      #"{"event":"task","t":0.2,"id":1,"state":"running","thread":5}"#,
      #"{"event":"task","t":0.3,"id":1,"state":"finished"}"#,
      #"{"event":"end","t":0.4,"files":1}"#,
    ]
    let log = try folder.write("run.jsonl", text: lines.map { $0 + "\n" }.joined())
    let drawn = try SqueezeBinary.run(["timeline", log, "-o", folder.url("page.html")])
    #expect(drawn.status == 0, "\(drawn.stderrText)")
    let browser = try Shell.run(
      try #require(Self.chromium),
      [
        "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=2000",
        "--dump-dom", "file://" + folder.url("page.html"),
      ])
    #expect(browser.status == 0, "\(browser.stderrText)")
    #expect(
      browser.stdoutText.contains(
        "<h1 id=\"title\">squeeze timeline: --isolation nonisolated</h1>"),
      "the page's code ran")
    #expect(browser.stdoutText.contains("<span><i style="), "it drew the legend")
  }

  /// A small log to draw.
  static func smallLog(in folder: TemporaryFolder) throws -> String {
    let lines = [
      Self.start,
      #"{"event":"task","t":0.1,"id":1,"file":"a.txt","state":"enqueued","on":"pool"}"#,
      #"{"event":"task","t":0.2,"id":1,"state":"running","thread":5}"#,
      #"{"event":"task","t":0.3,"id":1,"state":"finished"}"#,
      #"{"event":"end","t":0.4,"files":1}"#,
    ]
    return try folder.write("run.jsonl", text: lines.map { $0 + "\n" }.joined())
  }

  /// `-o` never replaces someone's file: a file that is not a drawing squeeze made is left
  /// alone (status 1) unless `-f`; an empty file or an earlier drawing is replaced.
  @Test(arguments: ["run.svg", "run.html", "run.json"])
  func theOutputReplacesOnlyDrawingsUnlessForced(output: String) throws {
    let folder = TemporaryFolder("timeline-output")
    let log = try Self.smallLog(in: folder)
    let path = folder.url(output)
    try folder.write(output, text: "precious\n")
    let refused = try SqueezeBinary.run(["timeline", log, "-o", path])
    #expect(refused.status == 1)
    #expect(
      refused.stderrText
        == "squeeze: '\(path)' exists and is not a drawing squeeze made; not replaced (use -f to replace it)\n"
    )
    #expect(try folder.read(output) == Array("precious\n".utf8), "untouched")
    let forced = try SqueezeBinary.run(["timeline", "-f", log, "-o", path])
    #expect(forced.status == 0, "\(forced.stderrText)")
    let drawn = try folder.read(output)
    #expect(drawn != Array("precious\n".utf8))
    // Now a drawing squeeze made: drawn again without -f (a new file, not rewritten in place).
    var before = stat()
    stat(path, &before)
    let again = try SqueezeBinary.run(["timeline", log, "-o", path])
    #expect(again.status == 0, "\(again.stderrText)")
    var after = stat()
    stat(path, &after)
    #expect(before.st_ino != after.st_ino)
    // An empty file is replaced too.
    try folder.write(output, [])
    #expect(try SqueezeBinary.run(["timeline", log, "-o", path]).status == 0)
    #expect(try folder.read(output) == drawn)
  }

  @Test func aLinkAtTheOutputIsNotFollowedAndAFolderIsNeverReplaced() throws {
    let folder = TemporaryFolder("timeline-link")
    let log = try Self.smallLog(in: folder)
    try folder.write("target.svg", text: "precious\n")
    symlink(folder.url("target.svg"), folder.url("link.svg"))
    let refused = try SqueezeBinary.run(["timeline", log, "-o", folder.url("link.svg")])
    #expect(refused.status == 1)
    #expect(refused.stderrText.contains("is a symbolic link; not followed (use -f"))
    let forced = try SqueezeBinary.run(["timeline", "-f", log, "-o", folder.url("link.svg")])
    #expect(forced.status == 0, "\(forced.stderrText)")
    #expect(try folder.read("target.svg") == Array("precious\n".utf8), "the target is untouched")
    var link = stat()
    lstat(folder.url("link.svg"), &link)
    #expect(link.st_mode & S_IFMT == S_IFREG, "the link itself was replaced")
    try folder.makeFolder("folder.svg")
    let folderRefused = try SqueezeBinary.run([
      "timeline", "-f", log, "-o", folder.url("folder.svg"),
    ])
    #expect(folderRefused.status == 1)
    #expect(
      folderRefused.stderrText
        == "squeeze: '\(folder.url("folder.svg"))' is a folder; not replaced\n")
  }
}
