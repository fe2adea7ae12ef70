import Foundation
import Glibc
import TestSupport
import Testing

/// Every JSON object squeeze prints says `"schema": 2`, and its `ratio` is compressed ÷
/// uncompressed, a fraction, whichever mode printed it.
@Suite struct JSONSchemaTests {
  static func object(_ arguments: [String]) throws -> [String: Any] {
    let result = try SqueezeBinary.run(arguments)
    try #require(result.status == 0, "\(arguments): \(result.stderrText)")
    return try #require(
      JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any])
  }

  static func number(_ value: Any?) -> Double? { (value as? NSNumber)?.doubleValue }

  @Test func ratioIsCompressedOverUncompressedInEveryMode() throws {
    let folder = TemporaryFolder("ratio")
    let text = TestData.text(200_000, seed: 3)
    try folder.write("in/t.txt", text)
    let compress = try Self.object(["--json", folder.url("in")])
    var status = stat()
    try #require(stat(folder.url("in/t.txt.gz"), &status) == 0)
    let expected = Double(status.st_size) / Double(text.count)
    #expect(expected < 0.5, "text compresses")
    let test = try Self.object(["-t", "--json", folder.url("in")])
    let list = try Self.object(["-l", "--json", folder.url("in")])
    try FileManager.default.removeItem(atPath: folder.url("in/t.txt"))
    let decompress = try Self.object(["-d", "--json", folder.url("in")])
    let files = try #require(list["files"] as? [[String: Any]])
    let totals = try #require(list["totals"] as? [String: Any])
    for (name, ratio) in [
      ("compress", Self.number(compress["ratio"])), ("test", Self.number(test["ratio"])),
      ("decompress", Self.number(decompress["ratio"])), ("list", Self.number(files[0]["ratio"])),
      ("list totals", Self.number(totals["ratio"])),
    ] {
      let value = try #require(ratio, "\(name) has a ratio")
      #expect(abs(value - expected) < 0.0001, "\(name): \(value), expected \(expected)")
    }
    for object in [compress, test, list, decompress] {
      #expect(object["schema"] as? Int == 2)
    }
  }

  /// "ratio" in `-l`'s table is gzip's: percent saved, header and trailer left out. The
  /// JSON's `savedPercent` is that figure (and in a run's object, the summary line's
  /// "% saved"); `ratio` keeps its schema-2 meaning, deprecated.
  @Test func savedPercentIsTheListsRatioColumnAndTheSummarysSaving() throws {
    let folder = TemporaryFolder("saved-percent")
    try folder.write("in/a.txt", TestData.text(200_000, seed: 5))
    try folder.write("in/b.txt", TestData.text(30_000, seed: 6))
    let compress = try Self.object(["--json", folder.url("in")])
    let bytesIn = try #require(Self.number(compress["bytesIn"]))
    let bytesOut = try #require(Self.number(compress["bytesOut"]))
    let saved = try #require(Self.number(compress["savedPercent"]))
    #expect(abs(saved - (1 - bytesOut / bytesIn) * 100) < 0.006, "\(saved)")
    let table = try SqueezeBinary.run(["-l", folder.url("in/a.txt.gz"), folder.url("in/b.txt.gz")])
    try #require(table.status == 0, "\(table.stderrText)")
    // The column: "  71.2% name"; the rows are the two files, then (totals).
    let column = table.stdoutText.split(separator: "\n").dropFirst().map {
      Double($0.split(separator: " ", omittingEmptySubsequences: true)[2].dropLast()) ?? .nan
    }
    let list = try Self.object([
      "-l", "--json", folder.url("in/a.txt.gz"), folder.url("in/b.txt.gz"),
    ])
    let files = try #require(list["files"] as? [[String: Any]])
    let totals = try #require(list["totals"] as? [String: Any])
    let json =
      files.map { Self.number($0["savedPercent"]) ?? .nan } + [
        Self.number(totals["savedPercent"]) ?? .nan
      ]
    try #require(column.count == 3 && json.count == 3, "\(table.stdoutText)")
    for (shown, given) in zip(column, json) {
      #expect(abs(shown - given) <= 0.05, "column \(shown) %, JSON \(given)")
    }
    #expect(column[0] > 50, "text compresses: \(column)")
    #expect(files[0]["ratio"] != nil, "the deprecated key is kept")
  }

  @Test func nothingUncompressedGivesANullRatio() throws {
    let folder = TemporaryFolder("ratio-empty")
    try folder.write("in/empty", [])
    let compress = try Self.object(["--json", folder.url("in")])
    #expect(compress["ratio"] is NSNull)
    let list = try Self.object(["-l", "--json", folder.url("in")])
    let files = try #require(list["files"] as? [[String: Any]])
    #expect(files[0]["ratio"] is NSNull)
    #expect(files[0]["savedPercent"] is NSNull)
    #expect(compress["savedPercent"] is NSNull)
    let dryRun = try Self.object(["--dry-run", "--json", folder.url("in")])
    #expect(dryRun["schema"] as? Int == 2)
  }
}
