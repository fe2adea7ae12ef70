import Foundation

/// The colours of a timeline, one per thing drawn, the same in the SVG, the HTML page and
/// the legend. Every pair is at least 20 apart in CIELAB (ΔE*ab 1976, ``deltaE76(_:_:)``;
/// 2.3 is a just-noticeable difference), so no two can be mistaken for each other, and the
/// states keep Instruments' habits: blue running, orange enqueued, grey suspended.
enum Palette {
  /// A task running on a thread.
  static let running = "#1c7ed6"
  /// A chunk of a big file running on a thread.
  static let chunk = "#0b7285"
  /// A task or chunk on an executor's queue.
  static let enqueued = "#f08c00"
  /// A task awaiting something.
  static let suspended = "#adb5bd"
  /// The mark on a wait that ends through a continuation (slot, publication, continuation).
  static let continuation = "#7048e8"
  /// A task that failed.
  static let failed = "#212529"
  /// Tasks waiting to enter `ParallelCompressor`.
  static let actorQueue = "#be4bdb"
  /// A main-actor lag of 250 ms or more.
  static let microhang = "#fcc419"
  /// A main-actor lag of 500 ms or more.
  static let hang = "#e03131"
  /// A thread on a CPU (or runnable).
  static let threadRunning = "#40c057"
  /// A thread blocked in the kernel.
  static let threadBlocked = "#a61e4d"
  /// A thread idle, waiting for work.
  static let threadIdle = "#f1f3f5"

  /// The legend: every colour above with what it means, in the order drawn.
  static let legend: [(name: String, color: String)] = [
    ("running", running), ("chunk running", chunk), ("enqueued", enqueued),
    ("suspended", suspended), ("continuation wait", continuation), ("failed", failed),
    ("actor queue", actorQueue), ("microhang ≥ 250 ms", microhang), ("hang ≥ 500 ms", hang),
    ("thread on CPU", threadRunning), ("thread blocked", threadBlocked),
    ("thread idle", threadIdle),
  ]

  /// CIELAB (D65) of an sRGB colour `#rrggbb` (IEC 61966-2-1 transfer function, CIE 1976
  /// L*a*b*).
  static func lab(_ hex: String) -> (l: Double, a: Double, b: Double) {
    let digits = Array(hex.utf8.dropFirst())
    func channel(_ at: Int) -> Double {
      let text = String(decoding: digits[at..<(at + 2)], as: UTF8.self)
      let value = Double(Int(text, radix: 16) ?? 0) / 255
      return value <= 0.04045 ? value / 12.92 : pow((value + 0.055) / 1.055, 2.4)
    }
    let (r, g, b) = (channel(0), channel(2), channel(4))
    let x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    let y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    let z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883
    func f(_ t: Double) -> Double { t > 216 / 24389 ? cbrt(t) : (24389 / 27 * t + 16) / 116 }
    return (116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z)))
  }

  /// The CIE 1976 colour difference ΔE*ab between two sRGB colours `#rrggbb`.
  static func deltaE76(_ first: String, _ second: String) -> Double {
    let (p, q) = (lab(first), lab(second))
    return ((p.l - q.l) * (p.l - q.l) + (p.a - q.a) * (p.a - q.a) + (p.b - q.b) * (p.b - q.b))
      .squareRoot()
  }
}

/// The one font of a timeline: monospace, so every label's box is known before it is drawn
/// (no label is cut by the picture's edge or drawn over data, which the tests check from
/// the same numbers).
enum TimelineFont {
  /// The font stack: DejaVu Sans Mono (Debian's default), then the usual monospace fonts of
  /// other systems. All advance 0.6 em per character (DejaVu Sans Mono 1233/2048 = 0.602).
  static let family = "DejaVu Sans Mono, Menlo, Consolas, Liberation Mono, monospace"
  /// The advance of one ASCII character, in em, with a little to spare.
  static let advance = 0.61
  /// Characters outside ASCII may come from a fallback font: counted as 1 em.
  static let wideAdvance = 1.0
  /// A text's height above its baseline and below it, in em.
  static let ascent = 0.8
  static let descent = 0.25

  /// The width of `text` at `size` pixels.
  static func width(_ text: String, size: Double) -> Double {
    var ems = 0.0
    for scalar in text.unicodeScalars { ems += scalar.isASCII ? advance : wideAdvance }
    return ems * size
  }

  /// `text` shortened from the left with "…" until it fits in `width` pixels at `size`
  /// (file names keep their most telling part, the end): the longest tail of whole
  /// characters that fits after the "…".
  ///
  /// - Complexity: O(n) in the text's length (the tail is measured once, from the end).
  static func fit(_ text: String, width maximum: Double, size: Double) -> String {
    guard width(text, size: size) > maximum else { return text }
    let room = maximum - width("…", size: size)
    var used = 0.0
    var start = text.endIndex
    while start > text.startIndex {
      let before = text.index(before: start)
      let added = width(String(text[before]), size: size)
      guard used + added <= room else { break }
      used += added
      start = before
    }
    return start == text.endIndex ? "" : "…" + text[start...]
  }
}
