/// UTF-8 validation and repair for the parser: every maximal subpart of an ill-formed sequence
/// becomes one U+FFFD (the Unicode Standard's recommended practice, which `String(decoding:)`
/// follows too). Doing it here means the standard library only ever decodes valid bytes.
///
/// Thread-safety: pure functions.
enum UTF8Repair {
    /// The replacement character U+FFFD in UTF-8.
    static let replacement: [UInt8] = [0xEF, 0xBF, 0xBD]

    /// `bytes` with ill-formed sequences replaced, or nil if they are already valid UTF-8.
    static func repaired(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var index = 0
        var firstBad = -1
        while index < bytes.count {
            let (length, valid) = sequence(bytes, at: index)
            if !valid {
                firstBad = index
                break
            }
            index += length
        }
        guard firstBad >= 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 16)
        // Valid runs are copied whole; each ill-formed subpart becomes one U+FFFD.
        var runStart = 0
        index = firstBad
        while index < bytes.count {
            let (length, valid) = sequence(bytes, at: index)
            if !valid {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart ..< index]))
                out.append(contentsOf: replacement)
                runStart = index + length
            }
            index += length
        }
        out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart ..< bytes.count]))
        return out
    }

    /// The sequence starting at `index` (Unicode Table 3-7): its length and whether it is
    /// well-formed; for an ill-formed one, the length of its maximal subpart (at least 1).
    @inline(__always)
    static func sequence(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> (length: Int, valid: Bool) {
        let lead = bytes[index]
        if lead < 0x80 { return (1, true) }
        let continuations: Int
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch lead {
        case 0xC2 ... 0xDF: continuations = 1
        case 0xE0: continuations = 2; low = 0xA0
        case 0xE1 ... 0xEC, 0xEE ... 0xEF: continuations = 2
        case 0xED: continuations = 2; high = 0x9F
        case 0xF0: continuations = 3; low = 0x90
        case 0xF1 ... 0xF3: continuations = 3
        case 0xF4: continuations = 3; high = 0x8F
        default: return (1, false)
        }
        var next = index + 1
        for position in 0 ..< continuations {
            guard next < bytes.count else { return (next - index, false) }
            let byte = bytes[next]
            let (min, max): (UInt8, UInt8) = position == 0 ? (low, high) : (0x80, 0xBF)
            guard byte >= min && byte <= max else { return (next - index, false) }
            next += 1
        }
        return (next - index, true)
    }
}
