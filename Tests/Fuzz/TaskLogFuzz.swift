// libFuzzer target for the task-log reader (TaskLogData, JSONValue) and the three renderers
// (TimelineRenderer's SVG, TimelinePage's HTML, ChromeTrace's JSON). Not a SwiftPM target:
// `scripts/fuzz tasklog` compiles this file with the sources of SqueezeCore, all with
// `swiftc -sanitize=fuzzer,address`. The test suite replays every input saved under
// Tests/Fuzz/regressions/tasklog/ (TaskLogFuzzRegressionTests).
//
// For every input it checks, beyond "no crash, no trap, no sanitizer report":
// - a log the reader takes draws in all three formats;
// - the page's data block holds no `<` (so no name can end or change its <script> element)
//   and is JSON, and so is the trace (read back with the reader's own JSON parser);
// - the SVG holds no character XML 1.0 cannot (controls other than tab and line feed,
//   U+FFFE, U+FFFF);
// - each drawing is at most 100 bytes per byte of the log, plus 4 MiB: linear, whatever the
//   names (a quadratic blow-up shows as a size, or as libFuzzer's -timeout).

import Glibc

/// Stops the fuzzer with `message` (-O drops `precondition`'s own message).
func fail(_ message: String) -> Never {
  fputs("tasklog fuzz: \(message)\n", stderr)
  abort()
}

/// libFuzzer's entry point: checks one input (see the top of the file).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
  let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
  let data: TaskLogData
  do {
    data = try TaskLogData.parse(bytes)
  } catch {
    guard error.line >= 1 else { fail("an error without a line: \(error)") }
    return 0
  }
  let model = TimelineModel(data: data)
  let limit = 100 * count + (4 << 20)

  let svg = Array(TimelineRenderer(model: model).svg().utf8)
  guard svg.count <= limit else { fail("SVG of \(svg.count) bytes from \(count)") }
  var index = 0
  while index < svg.count {
    let byte = svg[index]
    if byte < 0x20 && byte != 0x09 && byte != 0x0A { fail("control byte \(byte) in the SVG") }
    // U+FFFE and U+FFFF are EF BF BE and EF BF BF in UTF-8.
    if byte == 0xEF && index + 2 < svg.count && svg[index + 1] == 0xBF
      && (svg[index + 2] == 0xBE || svg[index + 2] == 0xBF)
    {
      fail("U+FFFE or U+FFFF in the SVG")
    }
    index += 1
  }

  let html = Array(TimelinePage(model: model).html().utf8)
  guard html.count <= limit else { fail("page of \(html.count) bytes from \(count)") }
  let opening = Array("<script type=\"application/json\" id=\"\(TimelinePage.dataID)\">".utf8)
  guard let open = html.indices.first(where: { html[$0...].starts(with: opening) }) else {
    fail("no data block")
  }
  let blockStart = open + opening.count
  guard let blockEnd = html[blockStart...].firstIndex(of: UInt8(ascii: "<")) else {
    fail("the data block does not end")
  }
  guard html[blockEnd...].starts(with: Array("</script>\n<script>\n".utf8)) else {
    fail("the data block ends at byte \(blockEnd), not at squeeze's </script>")
  }
  guard (try? JSONValue.parse(html[blockStart..<blockEnd])) != nil else {
    fail("the data block is not JSON")
  }

  let trace = Array(ChromeTrace(model: model).json().utf8)
  guard trace.count <= limit else { fail("trace of \(trace.count) bytes from \(count)") }
  guard case .object = (try? JSONValue.parse(trace)) ?? .null else {
    fail("the trace is not a JSON object")
  }
  return 0
}
