import Foundation
import Testing

@testable import SqueezeCore

/// Replays every task log saved under Tests/Fuzz/regressions/tasklog (`scripts/fuzz tasklog`
/// saves the inputs that crash it there) with the fuzz target's checks: the reader takes the
/// log or names the line it refuses; what it takes draws in all three formats, the page's
/// data block ends where squeeze ended it, the trace is JSON, the drawings stay proportional.
///
/// - time-out-of-range.jsonl: `"t":1e13` trapped converting to microseconds (status 132).
/// - hang-out-of-range.jsonl: `"durationMs":1e300` trapped in the page, the trace and the
///   SVG's hang title.
/// - markup-name.jsonl: a file named `q<!--<script>q` made the page's data block swallow its
///   code (a blank page).
@Suite struct TaskLogFuzzRegressionTests {
  static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(
      "Fuzz/regressions/tasklog")

  static var inputs: [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
  }

  @Test func thereAreSavedInputs() {
    #expect(Self.inputs.count >= 3)
  }

  @Test(arguments: inputs)
  func aSavedInputIsReadOrRefusedAndDrawsWithinBounds(name: String) throws {
    let bytes = Array(try Data(contentsOf: Self.folder.appendingPathComponent(name)))
    let data: TaskLogData
    do {
      data = try TaskLogData.parse(bytes)
    } catch {
      #expect(error.line >= 1)
      return
    }
    let model = TimelineModel(data: data)
    let limit = 100 * bytes.count + (4 << 20)
    let svg = TimelineRenderer(model: model).svg()
    #expect(svg.utf8.count <= limit)
    _ = try SVGGeometry.read(svg)
    let html = Array(TimelinePage(model: model).html().utf8)
    #expect(html.count <= limit)
    let opening = Array("<script type=\"application/json\" id=\"\(TimelinePage.dataID)\">".utf8)
    let start = try #require(
      html.indices.first { html[$0...].starts(with: opening) }.map { $0 + opening.count })
    let end = try #require(MarkupInNamesTests.scriptContentEnd(html, from: start))
    #expect(html[end...].starts(with: Array("</script>\n<script>\n".utf8)))
    #expect(!html[start..<end].contains(UInt8(ascii: "<")))
    _ = try JSONSerialization.jsonObject(with: Data(html[start..<end]))
    let trace = ChromeTrace(model: model).json()
    #expect(trace.utf8.count <= limit)
    _ = try TimelineDrawingTests.checkTraceRules(trace)
  }
}
