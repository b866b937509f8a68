import Glibc
import NetlayerJSON

/// HTTP dates (RFC 9110 section 5.6.7), read strictly: the IMF-fixdate every sender
/// must write (`Sun, 06 Nov 1994 08:49:37 GMT`), and the two obsolete forms a recipient
/// must still accept, RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime
/// (`Sun Nov  6 08:49:37 1994`). Anything else is not a date: two-digit years outside
/// RFC 850, a missing comma, another zone, one-digit hours, trailing text. The one
/// reader of dates for `Retry-After`, `Expires`, `Date`, `Last-Modified` and `Age`'s
/// companions, so all of them agree on what a date is.
public enum HTTPDate {
    /// Seconds since the epoch of `text`, or nil when it is not an HTTP date.
    public static func parse(_ text: some StringProtocol) -> Int64? {
        var bytes = Array(text.utf8)[...]
        guard bytes.count >= 24, bytes.count <= 40 else { return nil }
        if let weekday = bytes.firstIndex(of: UInt8(ascii: ",")) {
            let name = bytes[..<weekday]
            bytes = bytes[(weekday + 1)...]
            if name.count == 3 {
                guard isDayName(name, long: false) else { return nil }
                return imfFixdate(bytes)
            }
            guard isDayName(name, long: true) else { return nil }
            return rfc850(bytes)
        }
        return asctime(bytes)
    }

    /// `text` as an IMF-fixdate, the form a sender writes.
    public static func format(_ seconds: Int64) -> String {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let rest = seconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        let weekday = Int((days % 7 + 7 + 4) % 7)  // 1970-01-01 was a Thursday
        func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(dayNames[weekday]), \(two(day)) \(monthNames[Int(month) - 1]) \(year) "
            + "\(two(rest / 3600)):\(two(rest / 60 % 60)):\(two(rest % 60)) GMT"
    }

    private static let dayNames = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let longDayNames = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
    private static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// ` 06 Nov 1994 08:49:37 GMT` (after "Sun,").
    private static func imfFixdate(_ b: ArraySlice<UInt8>) -> Int64? {
        let s = Array(b)
        guard s.count == 25, s[0] == 0x20, s[3] == 0x20, s[7] == 0x20, s[12] == 0x20, s[21] == 0x20,
              s[22...] == [UInt8(ascii: "G"), UInt8(ascii: "M"), UInt8(ascii: "T")][...],
              let day = digits(s[1..<3]), let month = month(s[4..<7]), let year = digits(s[8..<12]),
              let time = time(s[13..<21]) else { return nil }
        return seconds(year: year, month: month, day: day, time: time)
    }

    /// ` 06-Nov-94 08:49:37 GMT` (after "Sunday,"); a two-digit year is the one in the
    /// coming fifty years or the past (RFC 9110 section 5.6.7).
    private static func rfc850(_ b: ArraySlice<UInt8>) -> Int64? {
        let s = Array(b)
        guard s.count == 23, s[0] == 0x20, s[3] == UInt8(ascii: "-"), s[7] == UInt8(ascii: "-"), s[10] == 0x20,
              s[19] == 0x20, s[20...] == [UInt8(ascii: "G"), UInt8(ascii: "M"), UInt8(ascii: "T")][...],
              let day = digits(s[1..<3]), let month = month(s[4..<7]), let shortYear = digits(s[8..<10]),
              let time = time(s[11..<19]) else { return nil }
        let currentYear = civil(fromDays: now() / 86_400).year
        var year = currentYear - currentYear % 100 + shortYear
        if year > currentYear + 50 { year -= 100 }
        return seconds(year: year, month: month, day: day, time: time)
    }

    /// `Sun Nov  6 08:49:37 1994`.
    private static func asctime(_ b: ArraySlice<UInt8>) -> Int64? {
        let s = Array(b)
        guard s.count == 24, isDayName(s[0..<3], long: false), s[3] == 0x20, s[7] == 0x20, s[10] == 0x20,
              s[19] == 0x20, let month = month(s[4..<7]), let time = time(s[11..<19]),
              let year = digits(s[20..<24]) else { return nil }
        let day: Int64?
        if s[8] == 0x20 { day = digits(s[9..<10]) } else { day = digits(s[8..<10]) }
        guard let day else { return nil }
        return seconds(year: year, month: month, day: day, time: time)
    }

    private static func isDayName(_ name: ArraySlice<UInt8>, long: Bool) -> Bool {
        let text = String(decoding: name, as: UTF8.self)
        return (long ? longDayNames : dayNames).contains(text)
    }

    private static func month(_ name: ArraySlice<UInt8>) -> Int64? {
        monthNames.firstIndex(of: String(decoding: name, as: UTF8.self)).map { Int64($0) + 1 }
    }

    private static func digits(_ s: ArraySlice<UInt8>) -> Int64? {
        var value: Int64 = 0
        for b in s {
            guard b >= UInt8(ascii: "0"), b <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int64(b - UInt8(ascii: "0"))
        }
        return value
    }

    /// `08:49:37` as seconds into the day.
    private static func time(_ s: ArraySlice<UInt8>) -> Int64? {
        let s = Array(s)
        guard s.count == 8, s[2] == UInt8(ascii: ":"), s[5] == UInt8(ascii: ":"), let h = digits(s[0..<2]),
              let m = digits(s[3..<5]), let sec = digits(s[6..<8]), h < 24, m < 60, sec <= 60 else { return nil }
        return h * 3600 + m * 60 + min(sec, 59)
    }

    private static func seconds(year: Int64, month: Int64, day: Int64, time: Int64) -> Int64? {
        guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year) else { return nil }
        return days(year: year, month: month, day: day) * 86_400 + time
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 (Howard Hinnant's days_from_civil).
    private static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The civil date of `days` since 1970-01-01 (civil_from_days).
    private static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Seconds since the epoch now.
    package static func now() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec)
    }
}
