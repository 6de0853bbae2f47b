/// One captured frame: the luma, which is all detection needs, and its
/// colour when the source was asked to keep it (`keepsColour`).
public struct Frame: Sendable {
    public var image: GrayImage
    /// The frame's colour, from a colour camera asked to keep it.
    public var chroma: ChromaPlanes?
    /// Seconds since the source started (the stream's clock for files, the
    /// driver's clock for cameras).
    public var timestamp: Double
    /// 0 for the first frame.
    public var index: Int
    /// When the picture was taken, on the turret's clock (the monotonic
    /// clock for a camera, whose driver stamps each buffer; the frame clock
    /// for a virtual one); nil when nothing says (a file). The time from
    /// here to the wire is how far the target has moved since.
    public var capturedAt: Double?

    public init(image: GrayImage, timestamp: Double, index: Int, chroma: ChromaPlanes? = nil, capturedAt: Double? = nil) {
        self.image = image
        self.chroma = chroma
        self.timestamp = timestamp
        self.index = index
        self.capturedAt = capturedAt
    }
}
