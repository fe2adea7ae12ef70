import SqueezeTaskLog
import SqueezeTimeline
import Testing

@testable import SqueezeCLI

@Suite struct DrawingRecognitionTests {
  /// A short log of one task, as squeeze writes one.
  static let log = """
    {"event":"start","t":0,"schema":2,"version":"t","arch":"x86_64","isolation":"nonisolated","jobs":2,"level":6,"cpus":2,"files":1,"bytes":10,"blockSize":131072}
    {"event":"task","t":0.001,"id":1,"file":"a.txt","state":"enqueued","on":"pool"}
    {"event":"task","t":0.002,"id":1,"state":"running","thread":101}
    {"event":"task","t":0.003,"id":1,"state":"finished"}
    {"event":"end","t":0.004,"files":1,"failed":0,"bytesIn":10,"bytesOut":30}

    """

  /// Every drawing squeeze makes is recognized as one (so `timeline -o` may replace it
  /// without -f); other files that begin the same way are not.
  @Test func eachFormatIsRecognizedByItsFirstBytes() throws {
    let model = TimelineModel(data: try TaskLogData.parse(Array(Self.log.utf8)))
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
