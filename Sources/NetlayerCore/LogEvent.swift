import Glibc
import NetlayerJSON

/// How much a `NetworkLogger` reports.
public enum LogLevel: Int, Sendable, Comparable, CaseIterable {
    case off = 0, error, info, debug

    public var name: String { ["off", "error", "info", "debug"][rawValue] }

    public init?(name: String) {
        guard let level = LogLevel.allCases.first(where: { $0.name == name }) else { return nil }
        self = level
    }

    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }
}

/// One structured log event: `{"level", "event", "id", ...}`.
public struct LogEvent: Sendable {
    public var level: LogLevel
    /// "request", "response", "error" or "warning".
    public var event: String
    public var fields: JSONObject

    public init(level: LogLevel, event: String, fields: JSONObject) {
        self.level = level
        self.event = event
        self.fields = fields
    }

    /// The event as one JSON object, level and event first.
    public var json: JSON {
        var object: JSONObject = ["level": .string(event == "warning" ? "warning" : level.name), "event": .string(event)]
        for member in fields { object[member.key] = member.value }
        return .object(object)
    }

    /// Writes `event` to stderr as one JSON line (the default sink).
    public static func writeToStderr(_ event: LogEvent) {
        var line = JSONWriter.serialize(event.json)
        line.append(0x0A)
        _ = line.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
    }
}
