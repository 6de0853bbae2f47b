import Imaging

/// Copies the luma (Y) of a captured buffer into a gray image, in place.
///
/// Pure and allocation-free: it writes into `image`'s existing pixels, so a
/// camera that reuses one image per frame allocates nothing per frame.
public enum LumaExtraction {
    /// - Parameters:
    ///   - fourcc: `GREY` (Y only), `YUYV` (Y at every other byte), or
    ///     `YU12`/`YV12`/`NV12` (4:2:0: the Y plane comes first).
    ///   - source: the driver's buffer, `bytesPerLine` bytes per row.
    ///   - image: receives `image.width` x `image.height` luma bytes.
    /// - Returns: false when the buffer is too short for the image.
    @discardableResult
    public static func extract(fourcc: String, from source: UnsafeRawBufferPointer, bytesPerLine: Int, into image: inout GrayImage) -> Bool {
        let width = image.width, height = image.height
        let packed = fourcc == "YUYV"
        let rowBytes = packed ? 2 * width : width
        guard bytesPerLine >= rowBytes, source.count >= (height - 1) * bytesPerLine + rowBytes else { return false }
        guard let input = source.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return height == 0 }
        image.withUnsafeMutablePixels { pixels in
            guard let out = pixels.baseAddress else { return }
            for y in 0..<height {
                let row = input + y * bytesPerLine, target = out + y * width
                if packed {
                    for x in 0..<width { target[x] = row[2 &* x] }
                } else {
                    target.update(from: row, count: width)
                }
            }
        }
        return true
    }
}
