/// Summed-area tables of one image, in buffers reused from frame to frame.
///
/// - `sums[(y) * stride + x]`: sum of the pixels above and left of (x, y).
/// - `squares`: the same for squared pixels, modulo 2^32 (window sums of a
///   detection window stay far below that, so differences are exact).
/// - `tilted` (only when asked): OpenCV's 45° rotated table,
///   `T(X, Y) = sum of I(x, y) for y < Y and |x - X + 1| <= Y - y - 1`, stored
///   with `tiltedPadding` spare columns on each side.
struct IntegralImages {
    private(set) var width = 0
    private(set) var height = 0
    var stride: Int { width + 1 }
    var tiltedStride: Int { width + 1 + 2 * tiltedPadding }
    private(set) var tiltedPadding = 0
    /// Elements after the last row of `sums` and `squares`: the cascade's four-wide scan
    /// loads eight values from a window's corner, past the last window's own.
    static let slack = 8
    private(set) var sums: [Int32] = []
    private(set) var squares: [UInt32] = []
    private(set) var tilted: [Int32] = []

    /// Fills the tables from `pixels` (`width` x `height`, no row padding).
    mutating func compute(_ pixels: UnsafeBufferPointer<UInt8>, width: Int, height: Int, withTilted: Bool) {
        self.width = width
        self.height = height
        let count = (width + 1) * (height + 1)
        if sums.count < count + Self.slack {
            sums = [Int32](repeating: 0, count: count + Self.slack)
            squares = [UInt32](repeating: 0, count: count + Self.slack)
        }
        let stride = width + 1
        sums.withUnsafeMutableBufferPointer { sum in
            squares.withUnsafeMutableBufferPointer { square in
                for x in 0...width {
                    sum[x] = 0
                    square[x] = 0
                }
                for y in 0..<height {
                    var rowSum: Int32 = 0
                    var rowSquare: UInt32 = 0
                    let above = y * stride, here = above + stride, source = y * width
                    sum[here] = 0
                    square[here] = 0
                    for x in 0..<width {
                        let p = Int32(pixels[source + x])
                        rowSum &+= p
                        rowSquare &+= UInt32(p * p)
                        sum[here + x + 1] = sum[above + x + 1] &+ rowSum
                        square[here + x + 1] = square[above + x + 1] &+ rowSquare
                    }
                }
            }
        }
        if withTilted { computeTilted(pixels, width: width, height: height) }
    }

    /// T(X, Y) = T(X-1, Y-1) + T(X+1, Y-1) - T(X, Y-2) + I(X-1, Y-1) + I(X-1, Y-2):
    /// the two upper triangles overlap in the one two rows up, and miss the
    /// apex pixel and the one above it. Columns outside the table are zero
    /// because the padding is wider than the image is tall.
    private mutating func computeTilted(_ pixels: UnsafeBufferPointer<UInt8>, width: Int, height: Int) {
        tiltedPadding = height + 2
        let stride = tiltedStride
        let count = stride * (height + 1)
        if tilted.count < count { tilted = [Int32](repeating: 0, count: count) }
        let padding = tiltedPadding
        tilted.withUnsafeMutableBufferPointer { t in
            for i in 0..<count { t[i] = 0 }
            func pixel(_ x: Int, _ y: Int) -> Int32 {
                x >= 0 && x < width && y >= 0 && y < height ? Int32(pixels[y * width + x]) : 0
            }
            for y in 1...max(1, height) where height > 0 {
                let row = y * stride, up = row - stride, up2 = row - 2 * stride
                for column in 1..<(stride - 1) {
                    let x = column - padding
                    var value = t[up + column - 1] &+ t[up + column + 1] &+ pixel(x - 1, y - 1) &+ pixel(x - 1, y - 2)
                    if y >= 2 { value &-= t[up2 + column] }
                    t[row + column] = value
                }
            }
        }
    }
}
