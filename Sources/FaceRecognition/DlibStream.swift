/// Why a dlib model file could not be used: where in the file, and what was wrong.
public struct DlibFormatError: Error, Equatable, CustomStringConvertible {
    /// The byte offset the fault was found at.
    public let offset: Int
    public let reason: String

    public var description: String { "\(reason) (at byte \(offset))" }
}

/// A bounds-checked reader of dlib's serialisation (dlib/serialize.h) as its
/// network files use it: every length and count is checked against what is
/// left of the file before anything is allocated, so a truncated or hostile
/// file is an error, never a crash or a huge allocation.
struct DlibStream {
    let bytes: [UInt8]
    private(set) var position = 0

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    var remaining: Int { bytes.count - position }

    func fail(_ reason: String) -> DlibFormatError { DlibFormatError(offset: position, reason: reason) }

    /// dlib's integer: a control byte (the sign in 0x80, the byte count in the
    /// low four bits), then that many bytes of magnitude, least significant first.
    mutating func integer(_ what: String) throws(DlibFormatError) -> Int64 {
        guard remaining >= 1 else { throw fail("the file ends before \(what)") }
        let control = bytes[position]
        let size = Int(control & 0x0F)
        guard size >= 1, size <= 8, control & 0x70 == 0 else { throw fail("\(what) is not one of dlib's integers (control byte \(control))") }
        guard remaining >= 1 + size else { throw fail("the file ends inside \(what)") }
        var magnitude: UInt64 = 0
        for index in stride(from: size, through: 1, by: -1) { magnitude = magnitude << 8 | UInt64(bytes[position + index]) }
        guard magnitude <= UInt64(Int64.max) else { throw fail("\(what) is out of range") }
        position += 1 + size
        return control & 0x80 != 0 ? -Int64(magnitude) : Int64(magnitude)
    }

    /// A count or size: an integer from 0 to `limit`.
    mutating func count(_ what: String, atMost limit: Int) throws(DlibFormatError) -> Int {
        let start = position
        let value = try integer(what)
        guard value >= 0, value <= Int64(limit) else {
            throw DlibFormatError(offset: start, reason: "\(what) is \(value), outside 0...\(limit)")
        }
        return Int(value)
    }

    /// An integer that must be `expected` (a version number, a window size).
    mutating func expect(_ expected: Int64, _ what: String) throws(DlibFormatError) {
        let start = position
        let value = try integer(what)
        guard value == expected else { throw DlibFormatError(offset: start, reason: "\(what) is \(value), not \(expected)") }
    }

    /// A string: its length as an integer, then its bytes. Names in dlib's files are short.
    mutating func string(_ what: String) throws(DlibFormatError) -> String {
        let length = try count("the length of \(what)", atMost: 256)
        // Checked after the length is read: its own bytes are no longer left.
        guard length <= remaining else { throw fail("\(what) is longer than the rest of the file") }
        defer { position += length }
        return String(decoding: bytes[position..<position + length], as: UTF8.self)
    }

    /// A floating-point number: a mantissa and a power of two, each one of dlib's integers
    /// (dlib's `float_details`; exponents 32000 to 32002 stand for ±infinity and NaN).
    mutating func real(_ what: String) throws(DlibFormatError) -> Double {
        guard remaining >= 1, bytes[position] & 0x70 == 0 else { throw fail("\(what) is not in dlib's binary number format") }
        let mantissa = try integer(what), exponent = try integer(what)
        switch exponent {
        case 32000: return .infinity
        case 32001: return -.infinity
        case 32002: return .nan
        case -2000...2000: return Double(sign: mantissa < 0 ? .minus : .plus, exponent: Int(exponent), significand: Double(mantissa.magnitude))
        default: throw fail("\(what) has the exponent \(exponent)")
        }
    }

    /// A bool: the character '0' or '1'.
    mutating func boolean(_ what: String) throws(DlibFormatError) -> Bool {
        guard remaining >= 1 else { throw fail("the file ends before \(what)") }
        defer { position += 1 }
        switch bytes[position] {
        case UInt8(ascii: "0"): return false
        case UInt8(ascii: "1"): return true
        default: throw fail("\(what) is not '0' or '1'")
        }
    }

    /// A tensor (version 2): its four sizes (samples, channels, rows, columns), then
    /// its values as 4-byte little-endian floats.
    mutating func tensor(_ what: String) throws(DlibFormatError) -> (shape: [Int], values: [Float]) {
        try expect(2, "the version of \(what)")
        var shape: [Int] = []
        for name in ["samples", "channels", "rows", "columns"] {
            shape.append(try count("\(what)'s \(name)", atMost: remaining / 4))
        }
        let count = shape.reduce(1) { $0.multipliedReportingOverflow(by: $1).overflow ? Int.max : $0 * $1 }
        guard count <= remaining / 4 else { throw fail("\(what) of shape \(shape) is larger than the rest of the file") }
        var values = [Float](repeating: 0, count: count)
        for index in 0..<count {
            let at = position + 4 * index
            var word: UInt32 = 0
            for byte in (0..<4).reversed() { word = word << 8 | UInt32(bytes[at + byte]) }
            values[index] = Float(bitPattern: word)
        }
        position += 4 * count
        return (shape, values)
    }

    /// An alias tensor (version 1): only the four sizes of a view into a layer's parameters.
    mutating func aliasShape(_ what: String) throws(DlibFormatError) -> [Int] {
        try expect(1, "the version of \(what)")
        var shape: [Int] = []
        for name in ["samples", "channels", "rows", "columns"] {
            shape.append(try count("\(what)'s \(name)", atMost: 1 << 26))
        }
        return shape
    }
}
