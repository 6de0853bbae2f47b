/// BT.601 Y'CbCr to R'G'B', the matrix every camera format and JPEG here
/// uses, in either range: what the networks were trained on is R'G'B'.
public struct RGBConversion: Sendable, Equatable {
    /// Subtracted from the luma before `lumaScale`.
    public let lumaOffset: Float
    public let lumaScale: Float
    /// Chroma (less 128) to red, to green, and to blue.
    public let crToRed: Float
    public let cbToGreen: Float
    public let crToGreen: Float
    public let cbToBlue: Float

    public init(_ range: ChromaPlanes.Range) {
        // BT.601's luma weights; the rest follows from them and the range.
        let (kr, kb) = (0.299, 0.114), kg = 1 - kr - kb
        let (lumaScale, chromaScale, lumaOffset) = range == .full ? (1.0, 1.0, 0.0) : (255.0 / 219, 255.0 / 224, 16.0)
        self.lumaOffset = Float(lumaOffset)
        self.lumaScale = Float(lumaScale)
        crToRed = Float(2 * (1 - kr) * chromaScale)
        cbToBlue = Float(2 * (1 - kb) * chromaScale)
        cbToGreen = Float(-2 * (1 - kb) * kb / kg * chromaScale)
        crToGreen = Float(-2 * (1 - kr) * kr / kg * chromaScale)
    }

    /// One pixel, rounded to the nearest level and clipped to 0...255.
    public func rgb(y: UInt8, cb: UInt8, cr: UInt8) -> (red: UInt8, green: UInt8, blue: UInt8) {
        let luma = (Float(y) - lumaOffset) * lumaScale, u = Float(cb) - 128, v = Float(cr) - 128
        return (Self.level(luma + crToRed * v), Self.level(luma + cbToGreen * u + crToGreen * v), Self.level(luma + cbToBlue * u))
    }

    /// `value` as a byte: rounded half up and clipped to 0...255, as Pillow rounds.
    static func level(_ value: Float) -> UInt8 { UInt8(min(max(value + 0.5, 0), 255)) }
}
