/// The geometry of a 2-D window over an NHWC tensor, with TFLite's padding rules.
struct WindowGeometry {
    var inputWidth, inputHeight, outputWidth, outputHeight: Int
    var window: Window
    /// Zeros before the first input column/row (SAME puts the odd one after).
    var padLeft, padTop: Int

    init(inputWidth: Int, inputHeight: Int, window: Window) {
        self.inputWidth = inputWidth
        self.inputHeight = inputHeight
        self.window = window
        func size(_ input: Int, _ kernel: Int, _ stride: Int) -> (output: Int, padBefore: Int) {
            switch window.padding {
            case .valid: return ((input - kernel) / stride + 1, 0)
            case .same:
                let output = (input + stride - 1) / stride
                return (output, max((output - 1) * stride + kernel - input, 0) / 2)
            }
        }
        (outputWidth, padLeft) = size(inputWidth, window.width, window.strideX)
        (outputHeight, padTop) = size(inputHeight, window.height, window.strideY)
    }

    /// The output columns whose window lies wholly inside the input's columns
    /// (the kernels' fast paths; the columns before and after cross the border).
    var insideColumns: Range<Int> {
        Self.inside(pad: padLeft, stride: window.strideX, kernel: window.width, input: inputWidth, output: outputWidth)
    }

    /// The output rows whose window lies wholly inside the input's rows.
    var insideRows: Range<Int> {
        Self.inside(pad: padTop, stride: window.strideY, kernel: window.height, input: inputHeight, output: outputHeight)
    }

    private static func inside(pad: Int, stride: Int, kernel: Int, input: Int, output: Int) -> Range<Int> {
        let first = min((pad + stride - 1) / stride, output)
        let lastWindowStart = input + pad - kernel
        let end = lastWindowStart >= 0 ? min(lastWindowStart / stride + 1, output) : 0
        return first..<max(end, first)
    }

    /// The kernel rows (or columns) that land inside the input for output row `y` (column).
    @inline(__always) func taps(output: Int, stride: Int, pad: Int, kernel: Int, input: Int) -> (origin: Int, range: Range<Int>) {
        let origin = output * stride - pad
        return (origin, max(0, -origin)..<min(kernel, input - origin))
    }

    var outputPixels: Int { outputWidth * outputHeight }

    /// Window positions times the window's cells: a windowed kernel's work per channel.
    var windowCells: Int { outputPixels * window.width * window.height }

    /// The window as a step's name shows it, e.g. "3x3/2".
    var name: String { "\(window.width)x\(window.height)/\(window.strideX)" }

    /// The input rows that output rows `rows` read: what a thread running those rows
    /// needs the step before to have written.
    func inputRows(_ rows: Range<Int>) -> Range<Int> {
        let first = rows.lowerBound * window.strideY - padTop
        let end = (rows.upperBound - 1) * window.strideY - padTop + window.height
        let start = min(max(first, 0), inputHeight)
        return start..<max(start, min(end, inputHeight))
    }
}
