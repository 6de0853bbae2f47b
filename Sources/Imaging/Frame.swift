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

    public init(image: GrayImage, timestamp: Double, index: Int, chroma: ChromaPlanes? = nil) {
        self.image = image
        self.chroma = chroma
        self.timestamp = timestamp
        self.index = index
    }
}
