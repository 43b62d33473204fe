#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One JSON value in a result line. Enough for flat objects of numbers, strings and booleans.
enum JSONValue: Sendable {
    case int(Int)
    /// A number printed with a fixed number of decimals.
    case double(Double, decimals: Int)
    case string(String)
    case bool(Bool)

    /// The value as a JSON literal.
    var literal: String {
        switch self {
        case .int(let value):
            return String(value)
        case .double(let value, let decimals):
            guard value.isFinite else { return "null" }
            return formatFixed(value, decimals: decimals)
        case .string(let value):
            return quoteJSON(value)
        case .bool(let value):
            return value ? "true" : "false"
        }
    }
}

/// A flat JSON object whose keys keep the order they were added in.
struct JSONLine {
    private(set) var fields: [(key: String, value: JSONValue)] = []

    /// Sets `key` to `value`, replacing an earlier value (in place) if there was one.
    mutating func set(_ key: String, _ value: JSONValue) {
        if let index = fields.firstIndex(where: { $0.key == key }) {
            fields[index].value = value
        } else {
            fields.append((key, value))
        }
    }

    /// The object on one line, without a trailing newline.
    var text: String {
        "{" + fields.map { quoteJSON($0.key) + ":" + $0.value.literal }.joined(separator: ",") + "}"
    }

    /// Prints the object as exactly one line on standard output and flushes it.
    func emit() {
        print(text)
        fflush(nil)  // all output streams; `stdout` is a C global Swift 6 rejects
    }
}

/// `value` with exactly `decimals` digits after the point (`%.*f`), as a JSON number.
func formatFixed(_ value: Double, decimals: Int) -> String {
    var buffer = [CChar](repeating: 0, count: 64)
    _ = withVaList([Int32(decimals), value]) { vsnprintf(&buffer, buffer.count, "%.*f", $0) }
    return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
}

/// `string` as a quoted JSON string, escaping what JSON requires.
func quoteJSON(_ string: String) -> String {
    var out = "\""
    for scalar in string.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case _ where scalar.value < 0x20:
            let hex = String(scalar.value, radix: 16)
            out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        default:
            out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}
