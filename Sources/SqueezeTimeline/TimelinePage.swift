import SqueezeTaskLog

/// A task-state log as one interactive HTML page (`squeeze timeline LOG -o FILE.html`): the
/// page draws on a canvas from one compact data block embedded in it (every file name once,
/// times in integer microseconds), with no network and no external script.
///
/// It shows what the SVG shows (``TimelineRenderer``): counts over time, main-actor lag,
/// thread lanes, task lanes. Hovering any slice shows its file, state, duration and the
/// task's story: the very text of the SVG's titles (`TimelineModel/story(of:)`), worked out
/// here and carried in the data block (`Stories`), which the page only puts together; the
/// mouse wheel with Ctrl (or over the tracks) zooms, a drag pans, the wheel scrolls the task
/// lanes, `0` resets.
///
/// Nothing from the log is markup: the data block is JSON written by `JSONWriter` with
/// `JSONWriter/Escaping/scriptElement` (no `<`, `>` or `&` in it), the title is escaped,
/// and the script puts names on the page as text (`textContent`, the canvas).
package struct TimelinePage {
  /// What the log shows.
  package let model: TimelineModel

  /// The page of what `model` shows.
  package init(model: TimelineModel) {
    self.model = model
  }

  private var data: TaskLogData { model.data }

  /// The id of the embedded data block.
  static let dataID = "timeline-data"

  /// Integer microseconds (``TimelineModel/micros(_:)``: cannot trap).
  private static func micros(_ seconds: Double) -> Int64 { TimelineModel.micros(seconds) }

  /// The task states' codes in the data block.
  package static func code(of transition: TaskLogData.Transition) -> Int {
    switch transition.state {
    case .enqueued:
      switch transition.executor {
      case .pool: 0
      case .actor: 1
      case .mainActor: 2
      case nil: 11
      }
    case .running: 3
    case .suspended:
      switch transition.reason {
      case .slot: 4
      case .publication: 5
      case .chunks: 6
      case .continuation: 7
      case nil: 8
      }
    case .finished: 9
    case .failed: 10
    }
  }

  /// The embedded data block, as JSON text safe inside a `<script>` element.
  ///
  /// - Complexity: O(n) in the log's size (stories: O(n log n) in their distinct numbers).
  func dataBlock() -> String {
    var json = JSONWriter(capacity: data.tasks.count * 96 + 4096, escaping: .scriptElement)
    let renderer = TimelineRenderer(model: model)
    json.beginObject()
    json.key("meta")
    json.beginObject()
    json.field("title", renderer.title)
    json.field("facts", renderer.factsLine)
    json.field("measured", renderer.measuredLine)
    json.field("cpus", data.start.cpus)
    json.field("duration", Self.micros(model.duration))
    json.field("exact", model.exactCounts)
    json.field("maxRunning", model.figures.maxRunning)
    json.field("maxEnqueued", model.figures.maxEnqueued)
    json.field("maxActorQueue", model.figures.maxActorQueue)
    json.field("leaked", data.end?.leakedContinuations ?? 0)
    // The threads' signature and where the main actor ran, in the SVG's words.
    json.key("notes")
    json.beginArray()
    if let summary = model.poolSummary { json.string(summary) }
    if let note = model.mainActorNote { json.string("Note: " + note) }
    json.endArray()
    json.endObject()
    json.key("legend")
    json.beginArray()
    for item in Palette.legend {
      json.beginArray()
      json.string(item.name)
      json.string(item.color)
      json.endArray()
    }
    json.endArray()
    json.key("sys")
    json.beginObject()
    let names = TimelineModel.systemCallNames(architecture: data.start.architecture)
    for entry in names.sorted(by: { $0.key < $1.key }) {
      json.key(String(entry.key))
      json.string(entry.value)
    }
    json.endObject()
    json.key("threads")
    json.beginArray()
    // Each thread: tid, its name in the drawing, its role, then its shares of the time
    // tasks were alive in whole percent (on CPU, blocked, idle), or nothing when unsampled.
    for thread in model.threads {
      json.beginArray()
      json.integer(thread.tid)
      json.string(thread.displayName)
      json.string(thread.role)
      let shares = thread.shares
      if shares.sampled > 0 {
        json.integer(shares.percent(shares.onCPU))
        json.integer(shares.percent(shares.blocked))
        json.integer(shares.percent(shares.idle))
      }
      json.endArray()
    }
    json.endArray()
    json.key("states")
    json.beginArray()
    for thread in model.threads {
      json.beginArray()
      var previous: Int64 = 0
      for run in thread.states {
        let start = Self.micros(run.start)
        let code: Int
        switch run.state {
        case .running: code = 0
        case .idle: code = 1
        case .blocked: code = run.systemCall.map { $0 + 3 } ?? 2
        }
        json.integer(start - previous)
        json.integer(Self.micros(run.end) - start)
        json.integer(code)
        previous = start
      }
      json.endArray()
    }
    json.endArray()
    // Front-coded: the bytes shared with the previous name, then the rest (consecutive
    // tasks are mostly files of one folder, so this halves a big log's page).
    json.key("files")
    json.beginArray()
    var previousName: [UInt8] = []
    for task in data.tasks {
      let name = Array(task.file.utf8)
      var shared = 0
      while shared < min(name.count, previousName.count), name[shared] == previousName[shared] {
        shared += 1
      }
      // Never split a UTF-8 sequence: back up to the start of a character.
      while shared > 0 && shared < name.count && name[shared] & 0xC0 == 0x80 { shared -= 1 }
      json.integer(String(decoding: name[..<shared], as: UTF8.self).utf16.count)
      json.string(String(decoding: name[shared...], as: UTF8.self))
      previousName = name
    }
    json.endArray()
    json.key("ids")
    json.beginArray()
    for task in data.tasks { json.integer(task.id) }
    json.endArray()
    // Each task: its start less the previous task's, code[, thread], then the delta to the
    // next change, code[, thread], …
    json.key("tasks")
    json.beginArray()
    var previousStart: Int64 = 0
    for task in data.tasks {
      json.beginArray()
      var previous: Int64 = previousStart
      previousStart = Self.micros(task.created)
      for transition in task.transitions {
        let time = Self.micros(transition.time)
        let code = Self.code(of: transition)
        json.integer(time - previous)
        json.integer(code)
        if code == 3 { json.integer(model.threadIndex[transition.thread].map { $0 + 1 } ?? 0) }
        previous = time
      }
      json.endArray()
    }
    json.endArray()
    // Chunks: task, index, enqueued, started (-1), ended (-1), thread (1-based, 0 unknown).
    json.key("chunks")
    json.beginArray()
    for (position, task) in data.tasks.enumerated() {
      for chunk in task.chunks {
        json.integer(position)
        json.integer(chunk.index)
        json.integer(Self.micros(chunk.enqueued))
        json.integer(chunk.started.map(Self.micros) ?? -1)
        json.integer(chunk.ended.map(Self.micros) ?? -1)
        json.integer(model.threadIndex[chunk.thread].map { $0 + 1 } ?? 0)
      }
    }
    json.endArray()
    json.key("lag")
    json.beginArray()
    var previous: Int64 = 0
    for sample in data.samples {
      let time = Self.micros(sample.time)
      json.integer(time - previous)
      json.integer(TimelineModel.wholeNumber(sample.mainActorLagMilliseconds * 10))
      previous = time
    }
    json.endArray()
    json.key("hangs")
    json.beginArray()
    for hang in data.hangs {
      json.beginArray()
      json.integer(Self.micros(hang.time))
      json.integer(Self.micros(hang.durationMilliseconds / 1000))
      json.integer(hang.isHang ? 1 : 0)
      json.endArray()
    }
    json.endArray()
    Stories(model: model).write(into: &json)
    json.endObject()
    return String(decoding: json.bytes, as: UTF8.self)
  }

  /// Every task's story (``TimelineModel/story(of:)``), as the data block carries it: each
  /// story cut into its text and the numbers in it (`waited ‹0.6› ms for a thread, ran ‹1.2›
  /// ms on T‹2›; …`), the texts with their holes kept once each (`storyTexts`: a few dozen
  /// in a whole run), the numbers once each, most frequent first (`storyNumbers`), and per
  /// task the text's index followed by its numbers' (`stories`). The page fills the holes:
  /// it holds no words of its own. Carried whole, the stories would be most of a big run's
  /// page; cut so, few texts repeat and most numbers are an index of one or two digits.
  struct Stories {
    /// Each distinct text: its pieces between the holes.
    private(set) var texts: [[String]] = []
    /// Each distinct number, most frequent first.
    private(set) var numbers: [String] = []
    /// Per task: its text, then its numbers (indices into ``texts`` and ``numbers``).
    private(set) var stories: [Int] = []

    init(model: TimelineModel) {
      var textIndex: [[String]: Int] = [:]
      var counts: [String: (count: Int, first: Int)] = [:]
      var cut: [(text: Int, numbers: [String])] = []
      cut.reserveCapacity(model.data.tasks.count)
      for index in model.data.tasks.indices {
        let (pieces, found) = Self.cut(model.story(of: index))
        let text: Int
        if let known = textIndex[pieces] {
          text = known
        } else {
          text = texts.count
          textIndex[pieces] = text
          texts.append(pieces)
        }
        for number in found {
          let seen = counts[number] ?? (0, counts.count)
          counts[number] = (seen.count + 1, seen.first)
        }
        cut.append((text, found))
      }
      numbers = counts.sorted {
        ($0.value.count, -$0.value.first) > ($1.value.count, -$1.value.first)
      }.map(\.key)
      var numberIndex: [String: Int] = [:]
      for (position, number) in numbers.enumerated() { numberIndex[number] = position }
      stories.reserveCapacity(cut.count * 6)
      for (text, found) in cut {
        stories.append(text)
        for number in found { stories.append(numberIndex[number] ?? 0) }
      }
    }

    /// `story` cut at its numbers (runs of digits, with the `.` and `,` inside them): the
    /// pieces around them (one more than the numbers) and the numbers.
    static func cut(_ story: String) -> (pieces: [String], numbers: [String]) {
      var pieces: [String] = []
      var numbers: [String] = []
      let bytes = Array(story.utf8)
      func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
      var pieceStart = 0
      var index = 0
      while index < bytes.count {
        guard isDigit(bytes[index]) else {
          index += 1
          continue
        }
        var end = index + 1
        while end < bytes.count,
          isDigit(bytes[end])
            || ((bytes[end] == UInt8(ascii: ".") || bytes[end] == UInt8(ascii: ","))
              && end + 1 < bytes.count && isDigit(bytes[end + 1]))
        {
          end += 1
        }
        pieces.append(String(decoding: bytes[pieceStart..<index], as: UTF8.self))
        numbers.append(String(decoding: bytes[index..<end], as: UTF8.self))
        pieceStart = end
        index = end
      }
      pieces.append(String(decoding: bytes[pieceStart...], as: UTF8.self))
      return (pieces, numbers)
    }

    /// `"storyTexts":[…],"storyNumbers":[…],"stories":[…]`, members of the data block.
    func write<Output>(into json: inout JSONWriter<Output>) {
      json.key("storyTexts")
      json.beginArray()
      for pieces in texts {
        json.beginArray()
        for piece in pieces { json.string(piece) }
        json.endArray()
      }
      json.endArray()
      json.key("storyNumbers")
      json.beginArray()
      for number in numbers { json.string(number) }
      json.endArray()
      json.key("stories")
      json.beginArray()
      for value in stories { json.integer(value) }
      json.endArray()
    }
  }

  /// The page.
  package func html() -> String {
    """
    <!DOCTYPE html>
    <html lang="en"><head><meta charset="utf-8">
    <title>\(SVGBuilder.escape(TimelineRenderer(model: model).title))</title>
    <style>
    body{margin:0;background:#fff;color:#111;font:12px \(TimelineFont.family)}
    #head{padding:8px 12px 4px}#head h1{font-size:16px;margin:0 0 4px}#head p{margin:2px 0}
    #legend span{display:inline-block;margin-right:14px;white-space:nowrap}
    #legend i{display:inline-block;width:10px;height:10px;margin-right:4px;border:.5px solid #868e96;vertical-align:-1px}
    #help{color:#495057}
    canvas{display:block;cursor:crosshair}
    #tip{position:fixed;max-width:560px;background:#212529;color:#f8f9fa;padding:6px 8px;border-radius:4px;pointer-events:none;white-space:pre-wrap;font-size:11px;line-height:1.35}
    </style></head>
    <body>
    <div id="head"><h1 id="title"></h1><p id="facts"></p><p id="measured"></p><p id="problems" style="color:\(Palette.hang)"></p><p id="legend"></p><div id="notes"></div>
    <p id="help">wheel: scroll tasks · Ctrl+wheel (or wheel over the tracks): zoom · drag: pan · 0: reset</p></div>
    <canvas id="view"></canvas>
    <div id="tip" hidden></div>
    <script type="application/json" id="\(Self.dataID)">\(dataBlock())</script>
    <script>
    \(Self.script)
    </script>
    </body></html>

    """
  }

  /// The page's code: decodes the data block, works out slices and counts, puts the stories
  /// together, and draws what is in view. It holds no `<!--`, `<script` or `</script`
  /// (which would change or end its element; a test checks).
  package static let script = #"""
    "use strict";
    (function () {
    const D = JSON.parse(document.getElementById("timeline-data").textContent);
    const M = D.meta, DUR = Math.max(M.duration, 1000);
    const C = {}; for (const [name, color] of D.legend) C[name] = color;
    const COLOR = {run: C["running"], chunk: C["chunk running"], enq: C["enqueued"], susp: C["suspended"],
      cont: C["continuation wait"], fail: C["failed"], actor: C["actor queue"], micro: C["microhang ≥ 250 ms"],
      hang: C["hang ≥ 500 ms"], cpu: C["thread on CPU"], blocked: C["thread blocked"], idle: C["thread idle"]};
    const STATE = ["enqueued", "enqueued", "enqueued", "running", "suspended", "suspended", "suspended",
      "suspended", "suspended", "finished", "failed", "enqueued"];
    const QUAL = [" on the pool", " on the actor", " on the main actor", "", " for a slot", " for its publication",
      " for its chunks", " on a continuation", "", "", "", ""];
    // Tasks: transitions [{t, c, th}], absolute microseconds.
    const files = []; for (let k = 0, last = ""; k < D.files.length; k += 2) { last = last.slice(0, D.files[k]) + D.files[k + 1]; files.push(last); }
    let taskStart = 0;
    const tasks = D.tasks.map((flat, i) => {
      const tr = []; let t = taskStart; taskStart = t + (flat.length ? flat[0] : 0);
      for (let k = 0; k < flat.length;) {
        t += flat[k++]; const c = flat[k++]; const th = c === 3 ? flat[k++] : 0;
        tr.push({t, c, th});
      }
      return {i, id: D.ids[i], file: files[i], tr, chunks: []};
    });
    const ch = D.chunks;
    for (let k = 0; k < ch.length; k += 6) {
      tasks[ch[k]].chunks.push({index: ch[k + 1], enq: ch[k + 2], start: ch[k + 3], end: ch[k + 4], th: ch[k + 5]});
    }
    const order = tasks.slice().sort((a, b) => (a.tr[0].t - b.tr[0].t) || (a.id - b.id));
    const threads = D.threads.map(([tid, name, role, ...shares], i) => ({tid, name, role, shares, n: i + 1, slices: [], states: []}));
    for (const task of tasks) {
      for (let k = 0; k < task.tr.length; k++) {
        const tr = task.tr[k];
        if (tr.c === 3 && tr.th > 0) {
          const end = k + 1 < task.tr.length ? task.tr[k + 1].t : DUR;
          threads[tr.th - 1].slices.push({s: tr.t, e: end, task, chunk: -1});
        }
      }
      task.chunks.forEach((c, k) => {
        if (c.start >= 0 && c.th > 0) threads[c.th - 1].slices.push({s: c.start, e: c.end >= 0 ? c.end : DUR, task, chunk: k});
      });
    }
    for (const th of threads) th.slices.sort((a, b) => a.s - b.s);
    D.states.forEach((flat, i) => {
      let t = 0;
      for (let k = 0; k < flat.length; k += 3) { t += flat[k]; threads[i].states.push({s: t, e: t + flat[k + 1], c: flat[k + 2]}); }
    });
    // Exact counts: every change, in time order.
    const changes = [];
    function phase(c) { return c === 3 ? "r" : (c <= 2 || c === 11) ? "e" : (c <= 8 ? "s" : ""); }
    for (const task of tasks) {
      let prev = null;
      for (const tr of task.tr) {
        changes.push([tr.t, prev, tr.c]); prev = tr.c;
      }
      for (const c of task.chunks) {
        changes.push([c.enq, null, 100]);
        if (c.start >= 0) changes.push([c.start, 100, 103]);
        if (c.end >= 0) changes.push([c.end, c.start >= 0 ? 103 : 100, null]);
      }
    }
    changes.sort((a, b) => a[0] - b[0]);
    const steps = []; const cur = {r: 0, e: 0, a: 0};
    function bump(c, d) {
      if (c === null) return;
      if (c === 100) { cur.e += d; return; } if (c === 103) { cur.r += d; return; }
      const p = phase(c); if (p) cur[p === "s" ? "s" : p] = (cur[p === "s" ? "s" : p] || 0) + d;
      if (c === 1) cur.a += d;
    }
    for (const [t, from, to] of changes) {
      bump(from, -1); bump(to, 1);
      if (steps.length && steps[steps.length - 1].t === t) steps.pop();
      steps.push({t, r: cur.r, e: cur.e, a: cur.a});
    }
    const lag = []; { let t = 0; for (let k = 0; k < D.lag.length; k += 2) { t += D.lag[k]; lag.push({t, ms: D.lag[k + 1] / 10}); } }
    // Words for what is hovered: from whole microseconds with integer rounding (half up), as
    // the stories count.
    function decimal(v, d) { const scale = Math.pow(10, d), f = String(v % scale); return Math.floor(v / scale) + "." + "0".repeat(d - f.length) + f; }
    function dur(us) {
      us = Math.max(0, Math.round(us));
      if (us < 100) return us + " µs";
      if (us < 1e6) return decimal(Math.floor((us + 50) / 100), 1) + " ms";
      return decimal(Math.floor((us + 5000) / 10000), 2) + " s";
    }
    function sec(us) { return decimal(Math.floor((Math.max(0, us) + 50) / 100), 4) + " s"; }
    function thLabel(n) { return n > 0 ? "T" + threads[n - 1].n : "an unknown thread"; }
    // Stories: worked out by squeeze (the SVG's titles say the same); here only put together.
    const stories = [];
    for (let k = 0; k < D.stories.length;) {
      const pieces = D.storyTexts[D.stories[k++]]; let story = pieces[0];
      for (let j = 1; j < pieces.length; j++) story += D.storyNumbers[D.stories[k++]] + pieces[j];
      stories.push(story);
    }
    function narrative(task) { return task.file + ": " + stories[task.i]; }
    // Layout.
    const canvas = document.getElementById("view"), tip = document.getElementById("tip");
    const ctx = canvas.getContext("2d");
    const LEFT = 250, RIGHT = 70, TRACKS = [["Running", 70, "r"], ["Enqueued", 50, "e"], ["Actor queue", 30, "a"], ["Main-actor lag", 70, "lag"]];
    const laneH = tasks.length <= 2000 ? 10 : 3, threadH = 16;
    let t0 = 0, t1 = DUR, scroll = 0, W = 800, H = 600;
    function plotW() { return W - LEFT - RIGHT; }
    function xOf(t) { return LEFT + (t - t0) / (t1 - t0) * plotW(); }
    function tOf(x) { return t0 + (x - LEFT) / plotW() * (t1 - t0); }
    function layout() {
      let y = 22; const rows = [];
      for (const [name, h, key] of TRACKS) { rows.push({kind: "track", name, key, y, h}); y += h + 10; }
      y += 14; const threadTop = y; y += threads.length * threadH + 24;
      return {rows, threadTop, taskTop: y};
    }
    let L = layout();
    function resize() {
      W = Math.max(600, (window.innerWidth || 1400)); H = Math.max(400, (window.innerHeight || 900) - (document.getElementById("head").offsetHeight || 120));
      canvas.width = W; canvas.height = H; draw();
    }
    function maxOf(key) { return key === "r" ? Math.max(M.maxRunning, M.cpus, 1) : key === "e" ? Math.max(M.maxEnqueued, 1) : Math.max(M.maxActorQueue, 1); }
    function lowerBound(list, t, field) { let lo = 0, hi = list.length; while (lo < hi) { const mid = (lo + hi) >> 1; if (list[mid][field] < t) lo = mid + 1; else hi = mid; } return lo; }
    function text(s, x, y, size, color, align) { ctx.font = (size || 11) + "px " + "\#(TimelineFont.family)"; ctx.fillStyle = color || "#111"; ctx.textAlign = align || "left"; ctx.fillText(s, x, y); }
    function fit(s, width, size) { const adv = 0.61 * size; if (s.length * adv <= width) return s; const n = Math.max(0, Math.floor(width / adv) - 1); return "…" + s.slice(s.length - n); }
    function draw() {
      ctx.clearRect(0, 0, W, H); ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, W, H);
      const pw = plotW();
      for (const row of L.rows) {
        ctx.fillStyle = "#f8f9fa"; ctx.fillRect(LEFT, row.y, pw, row.h);
        text(row.name, 12, row.y + 13, 12, "#111");
        if (row.key === "lag") {
          const worst = lag.reduce((m, s) => Math.max(m, s.ms * 1.05), 600);
          const y = ms => row.y + row.h - Math.min(ms / worst, 1) * (row.h - 4);
          text("0–" + Math.round(worst) + " ms", 12, row.y + 27, 10, "#495057");
          for (const [t, d, isHang] of D.hangs) { ctx.fillStyle = isHang ? COLOR.hang : COLOR.micro; ctx.globalAlpha = 0.35; const x0 = xOf(t); ctx.fillRect(x0, row.y, Math.max(1.5, xOf(t + d) - x0), row.h); ctx.globalAlpha = 1; }
          for (const [ms, label, color] of [[250, "250 ms microhang", COLOR.micro], [500, "500 ms hang", COLOR.hang]]) {
            ctx.strokeStyle = color; ctx.setLineDash([4, 3]); ctx.beginPath(); ctx.moveTo(LEFT, y(ms)); ctx.lineTo(LEFT + pw, y(ms)); ctx.stroke(); ctx.setLineDash([]);
            text(label, LEFT - 8, y(ms) + 3.5, 10, "#212529", "right");
          }
          ctx.strokeStyle = "#862e9c"; ctx.beginPath();
          lag.forEach((s, k) => { const x = xOf(s.t); if (k === 0) ctx.moveTo(x, y(s.ms)); else ctx.lineTo(x, y(s.ms)); }); ctx.stroke();
          continue;
        }
        const top = maxOf(row.key), color = row.key === "r" ? COLOR.run : row.key === "e" ? COLOR.enq : COLOR.actor;
        text("0–" + top.toLocaleString("en-US"), 12, row.y + 27, 10, "#495057");
        const y = v => row.y + row.h - Math.min(v / top, 1) * (row.h - 4);
        ctx.fillStyle = color; ctx.globalAlpha = 0.6; ctx.beginPath(); ctx.moveTo(LEFT, row.y + row.h);
        let k = Math.max(0, lowerBound(steps, t0, "t") - 1);
        let lastX = LEFT, value = k < steps.length && steps[k].t <= t0 ? steps[k][row.key] : 0;
        for (; k < steps.length && steps[k].t <= t1; k++) {
          const x = Math.max(LEFT, xOf(steps[k].t)); ctx.lineTo(x, y(value)); value = steps[k][row.key]; ctx.lineTo(x, y(value)); lastX = x;
        }
        ctx.lineTo(LEFT + pw, y(value)); ctx.lineTo(LEFT + pw, row.y + row.h); ctx.closePath(); ctx.fill(); ctx.globalAlpha = 1;
        if (row.key === "r" && M.cpus > 0) { ctx.strokeStyle = "#212529"; ctx.setLineDash([4, 3]); ctx.beginPath(); ctx.moveTo(LEFT, y(M.cpus)); ctx.lineTo(LEFT + pw, y(M.cpus)); ctx.stroke(); ctx.setLineDash([]); text(M.cpus + " cores", LEFT - 8, y(M.cpus) + 3.5, 10, "#212529", "right"); }
      }
      // Threads.
      text("Threads", 12, L.threadTop - 6, 12, "#111");
      threads.forEach((th, i) => {
        const y = L.threadTop + i * threadH;
        ctx.fillStyle = "#f8f9fa"; ctx.fillRect(LEFT, y, pw, threadH);
        text("T" + th.n + " " + fit((th.name || "tid " + th.tid) + (th.role ? " · " + th.role : ""), LEFT - 20 - 6.1 * (String(th.n).length + 2), 10), 12, y + 11, 10, "#111");
        // Its shares of the time tasks were alive: on CPU, blocked, idle.
        if (th.shares.length === 3) {
          let x = LEFT + pw + 10; ctx.fillStyle = "#f8f9fa"; ctx.fillRect(x, y + 3, 48, 8);
          [[th.shares[0], COLOR.cpu], [th.shares[1], COLOR.blocked], [th.shares[2], COLOR.idle]].forEach(([p, color]) => { ctx.fillStyle = color; ctx.fillRect(x, y + 3, 48 * p / 100, 8); x += 48 * p / 100; });
        }
        for (let k = Math.max(0, lowerBound(th.slices, t0 - DUR, "s")); k < th.slices.length; k++) {
          const s = th.slices[k]; if (s.s > t1) break; if (s.e < t0) continue;
          ctx.fillStyle = s.chunk >= 0 ? COLOR.chunk : COLOR.run; const x0 = xOf(Math.max(s.s, t0)); ctx.fillRect(x0, y + 1, Math.max(0.5, xOf(Math.min(s.e, t1)) - x0), 9);
        }
        for (const r of th.states) {
          if (r.e < t0 || r.s > t1) continue;
          ctx.fillStyle = r.c === 0 ? COLOR.cpu : r.c === 1 ? COLOR.idle : COLOR.blocked; const x0 = xOf(Math.max(r.s, t0)); ctx.fillRect(x0, y + 11, Math.max(0.5, xOf(Math.min(r.e, t1)) - x0), 4);
        }
      });
      // Tasks (only the lanes in view).
      const top = L.taskTop; text("Tasks", 12, top - 6, 12, "#111");
      const first = Math.floor(scroll / laneH), visible = Math.ceil((H - top) / laneH) + 1;
      ctx.fillStyle = "#f8f9fa"; ctx.fillRect(LEFT, top, pw, H - top);
      for (let n = first; n < Math.min(order.length, first + visible); n++) {
        const task = order[n], y = top + n * laneH - scroll; if (y < top - laneH) continue;
        if (laneH >= 10) text(fit(task.file, LEFT - 20, 9), 12, y + laneH - 1.5, 9, "#212529");
        else if (n % 4 === 0) text(fit("#" + (n + 1) + " " + task.file, LEFT - 20, 9), 12, y + 9, 9, "#212529");
        task.tr.forEach((tr, k) => {
          if (tr.c === 9 || tr.c === 10) { if (tr.c === 10) { ctx.fillStyle = COLOR.fail; ctx.fillRect(xOf(tr.t), y, 2.5, laneH - 1); } return; }
          const end = k + 1 < task.tr.length ? task.tr[k + 1].t : DUR; if (end < t0 || tr.t > t1) return;
          const s = STATE[tr.c]; ctx.fillStyle = s === "running" ? COLOR.run : s === "enqueued" ? COLOR.enq : COLOR.susp;
          const x0 = xOf(Math.max(tr.t, t0)), w = Math.max(0.5, xOf(Math.min(end, t1)) - x0); ctx.fillRect(x0, y, w, laneH - 1);
          if (tr.c === 4 || tr.c === 5 || tr.c === 7) { ctx.fillStyle = COLOR.cont; ctx.fillRect(x0, y, w, Math.max(1, laneH / 4)); }
        });
        for (const c of task.chunks) {
          if (c.start < 0) continue; const e = c.end >= 0 ? c.end : DUR; if (e < t0 || c.start > t1) continue;
          ctx.fillStyle = COLOR.chunk; const x0 = xOf(Math.max(c.start, t0)); ctx.fillRect(x0, y + laneH * 0.45, Math.max(0.5, xOf(Math.min(e, t1)) - x0), laneH * 0.55 - 1);
        }
      }
      // Axes along the top of the tracks and of the task lanes.
      const span = t1 - t0, p10 = Math.pow(10, Math.floor(Math.log10(span / 10))); const step = [1, 2, 5, 10].map(m => m * p10).find(s => span / s <= 12) || 10 * p10;
      for (const axisY of [L.rows[0].y - 4, top - 12]) {
        ctx.fillStyle = "#fff"; ctx.fillRect(LEFT - 20, axisY - 10, pw + 40, 12);
        for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) { text((t / 1e6).toFixed(step >= 1e6 ? 0 : step >= 1e5 ? 1 : step >= 1e4 ? 2 : 4) + " s", xOf(t), axisY, 10, "#495057", "center"); }
      }
    }
    // Hover.
    function hit(x, y) {
      if (x < LEFT || x > W - RIGHT) return null;
      const t = tOf(x);
      for (const row of L.rows) {
        if (y >= row.y && y < row.y + row.h) {
          if (row.key === "lag") { const k = Math.max(0, lowerBound(lag, t, "t") - 1); const hang = D.hangs.find(h => t >= h[0] && t <= h[0] + h[1]); return lag.length ? "main-actor lag " + lag[k].ms.toFixed(1) + " ms at " + sec(lag[k].t) + (hang ? "\n" + (hang[2] ? "hang" : "microhang") + " of " + dur(hang[1]) : "") : null; }
          const k = Math.max(0, lowerBound(steps, t + 1, "t") - 1); return steps.length ? row.name.toLowerCase() + " " + steps[k][row.key] + " at " + sec(t) : null;
        }
      }
      if (y >= L.threadTop && y < L.threadTop + threads.length * threadH) {
        const th = threads[Math.floor((y - L.threadTop) / threadH)];
        const tol = (t1 - t0) / plotW() * 2;
        const s = th.slices.find(s => s.s - tol <= t && t <= s.e + tol);
        const st = th.states.find(r => r.s <= t && t <= r.e);
        let out = "T" + th.n + " tid " + th.tid + (th.name ? " " + th.name : "") + (th.role ? " · " + th.role : "");
        if (th.shares.length === 3) out += "\non CPU " + th.shares[0] + " %, blocked " + th.shares[1] + " %, idle " + th.shares[2] + " % of the time tasks were alive (sampled)";
        if (st) out += "\n" + (st.c === 0 ? "on CPU" : st.c === 1 ? "idle" : "blocked" + (st.c > 2 ? " in " + (D.sys[st.c - 3] || "syscall " + (st.c - 3)) : "")) + " (sampled)";
        if (s) out += "\n" + s.task.file + (s.chunk >= 0 ? ", chunk " + s.task.chunks[s.chunk].index : "") + ": running " + dur(s.e - s.s) + "\n" + narrative(s.task);
        return out;
      }
      if (y >= L.taskTop) {
        const task = order[Math.floor((y - L.taskTop + scroll) / laneH)]; if (!task) return null;
        let at = null; task.tr.forEach((tr, k) => { const end = k + 1 < task.tr.length ? task.tr[k + 1].t : DUR; if (tr.t <= t && t <= end) at = [tr, end]; });
        const head = at ? task.file + ": " + STATE[at[0].c] + QUAL[at[0].c] + (at[0].c === 3 && at[0].th ? " on " + thLabel(at[0].th) : "") + ", " + dur(at[1] - at[0].t) + "\n" : "";
        return head + narrative(task);
      }
      return null;
    }
    let drag = null;
    canvas.addEventListener("mousemove", e => {
      const r = canvas.getBoundingClientRect(), x = e.clientX - r.left, y = e.clientY - r.top;
      if (drag) { const dt = (drag.x - x) / plotW() * (t1 - t0); t0 = drag.t0 + dt; t1 = drag.t1 + dt; clamp(); draw(); return; }
      const info = hit(x, y);
      if (info) { tip.textContent = info; tip.hidden = false; tip.style.left = Math.min(e.clientX + 14, (window.innerWidth || 1400) - 570) + "px"; tip.style.top = (e.clientY + 14) + "px"; } else tip.hidden = true;
    });
    canvas.addEventListener("mouseleave", () => { tip.hidden = true; drag = null; });
    canvas.addEventListener("mousedown", e => { const r = canvas.getBoundingClientRect(); drag = {x: e.clientX - r.left, t0, t1}; });
    window.addEventListener("mouseup", () => { drag = null; });
    function clamp() { const span = Math.min(DUR, Math.max(20, t1 - t0)); if (t0 < 0) t0 = 0; t1 = t0 + span; if (t1 > DUR) { t1 = DUR; t0 = DUR - span; } }
    function zoom(factor, x) { const t = tOf(x); t0 = t - (t - t0) * factor; t1 = t + (t1 - t) * factor; clamp(); draw(); }
    canvas.addEventListener("wheel", e => {
      e.preventDefault(); const r = canvas.getBoundingClientRect(), x = e.clientX - r.left, y = e.clientY - r.top;
      if (e.ctrlKey || e.metaKey || y < L.taskTop) zoom(e.deltaY > 0 ? 1.25 : 0.8, Math.max(LEFT, x));
      else { scroll = Math.max(0, Math.min(order.length * laneH - (H - L.taskTop) + laneH, scroll + e.deltaY)); draw(); }
    }, {passive: false});
    window.addEventListener("keydown", e => {
      if (e.key === "0") { t0 = 0; t1 = DUR; scroll = 0; draw(); }
      else if (e.key === "+" || e.key === "=" || e.key === "w") zoom(0.8, LEFT + plotW() / 2);
      else if (e.key === "-" || e.key === "s") zoom(1.25, LEFT + plotW() / 2);
      else if (e.key === "ArrowLeft" || e.key === "a") { const d = (t1 - t0) / 5; t0 -= d; t1 -= d; clamp(); draw(); }
      else if (e.key === "ArrowRight" || e.key === "d") { const d = (t1 - t0) / 5; t0 += d; t1 += d; clamp(); draw(); }
    });
    document.getElementById("title").textContent = M.title;
    document.getElementById("facts").textContent = M.facts;
    document.getElementById("measured").textContent = M.measured;
    for (const note of M.notes) { const p = document.createElement("p"); p.textContent = note; document.getElementById("notes").appendChild(p); }
    if (M.leaked > 0) document.getElementById("problems").textContent = M.leaked + " task(s) still suspended on a continuation when the run ended";
    const legend = document.getElementById("legend");
    for (const [name, color] of D.legend) { const span = document.createElement("span"); const box = document.createElement("i"); box.style.background = color; span.appendChild(box); span.appendChild(document.createTextNode(name)); legend.appendChild(span); }
    window.addEventListener("resize", resize);
    resize();
    window.squeezeTimeline = {tasks, threads, steps, narrative, hit, draw, layout: () => L};
    })();
    """#
}
