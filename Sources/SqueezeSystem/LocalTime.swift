import Glibc

/// A moment as the local clock shows it (`localtime_r(3)`, the zone `TZ` names or the
/// system's), to the minute: what `gzip -lv` prints in its date and time columns.
package struct LocalTime: Equatable, Sendable {
  /// The month, 1 to 12.
  package var month: Int
  /// The day of the month, 1 to 31.
  package var day: Int
  /// The hour, 0 to 23.
  package var hour: Int
  /// The minute, 0 to 59.
  package var minute: Int

  /// `seconds` since 1970-01-01 00:00:00 UTC in local time, or nil when the C library
  /// cannot convert it (a year past what `struct tm` holds).
  package init?(seconds: Int64) {
    guard let time = time_t(exactly: seconds) else { return nil }
    var value = time
    var parts = tm()
    // localtime_r(3) need not read TZ itself (POSIX); tzset(3) makes it.
    tzset()
    guard localtime_r(&value, &parts) != nil else { return nil }
    month = Int(parts.tm_mon) + 1
    day = Int(parts.tm_mday)
    hour = Int(parts.tm_hour)
    minute = Int(parts.tm_min)
  }

  /// English month abbreviations, as C's "C" locale and gzip write them.
  package static let monthAbbreviations = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
  ]
}
