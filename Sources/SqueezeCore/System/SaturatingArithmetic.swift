// Arithmetic that holds at the ends of its type instead of trapping, for numbers that come
// from outside the process: file sizes (`st_size` is anything up to `Int64.max` on tmpfs,
// where `truncate -s 9223372036854775807` makes such a sparse file at no cost), and the
// quotients of such numbers by measured times. Swift traps on overflow (SIGILL, status 132,
// no message); a total of sizes shown in a progress line or a summary is better pinned at
// 9.22 EB than the run lost. Counts of bytes actually read or written need none of this: no
// run reads 2^63 bytes.

extension Int64 {
  /// `self + other`, or `Int64.max` (`Int64.min`) when the sum is above (below) what an
  /// `Int64` holds.
  func addingSaturated(_ other: Int64) -> Int64 {
    let (sum, overflow) = addingReportingOverflow(other)
    guard overflow else { return sum }
    return other > 0 ? .max : .min
  }

  /// `value` rounded toward zero, or `Int64.max` (`Int64.min`) when it is above (below) what
  /// an `Int64` holds; 0 for NaN. `Int64(_:)` traps on all three.
  init(saturating value: Double) {
    if value.isNaN {
      self = 0
    } else if value >= 0x1p63 {
      // 2^63 is the first Double past Int64.max.
      self = .max
    } else if value <= -0x1p63 {
      self = .min
    } else {
      self = Int64(value)
    }
  }
}

extension Int {
  /// `value` rounded toward zero, held at `Int.max` and `Int.min`; 0 for NaN (see
  /// `Int64.init(saturating:)`).
  init(saturating value: Double) {
    self = Int(clamping: Int64(saturating: value))
  }
}
