import CVectorClamp

/// MAX_POOL_2D: the largest value under each window, cells outside the input ignored.
struct MaxPool2D: WindowedKernel {
    let geometry: WindowGeometry
    let channels: Int

    static func plan(_ op: OperatorDescription, window: Window, activation: Activation, _ planner: inout Planner) throws(ModelError)
        -> PreparedOperator
    {
        try planner.requireInputs(op, 1)
        let (height, width, channels) = try planner.imageShape(op.inputs[0], "MAX_POOL_2D")
        let geometry = WindowGeometry(inputWidth: width, inputHeight: height, window: window)
        try planner.expect([1, geometry.outputHeight, geometry.outputWidth, channels], from: op)
        return PreparedOperator(kernel: MaxPool2D(geometry: geometry, channels: channels), bounds: Bounds(activation), reads: [op.inputs[0]])
    }

    var operation: String { "MAX_POOL_2D" }
    var work: Int { geometry.windowCells * channels }

    func run(_ share: Range<Int>, _ step: Step) {
        Self.maxPool(input: step.inputs[0], channels: channels, geometry: geometry, rows: share, output: step.output, bounds: step.bounds)
    }

    /// Max pooling; cells outside the input are ignored, as in TFLite. Eight
    /// channels at a time; a channel tail loads eight lanes (reaching into the
    /// next pixel or the arena's slack) and stores only its own.
    static func maxPool(
        input: UnsafePointer<Float>, channels: Int, geometry g: WindowGeometry, rows outputRows: Range<Int>,
        output: UnsafeMutablePointer<Float>, bounds: Bounds
    ) {
        let w = g.window
        for y in outputRows {
            let rows = g.taps(output: y, stride: w.strideY, pad: g.padTop, kernel: w.height, input: g.inputHeight)
            for x in 0..<g.outputWidth {
                let columns = g.taps(output: x, stride: w.strideX, pad: g.padLeft, kernel: w.width, input: g.inputWidth)
                let out = output + (y * g.outputWidth + x) * channels
                let origin = input + (rows.origin * g.inputWidth + columns.origin) * channels
                var channel = 0
                if rows.range.count == 2, columns.range.count == 2, w.width == 2, w.height == 2 {
                    // The 2x2 window wholly inside (BlazeFace's shortcut pool): four loads a vector.
                    let top = origin, bottom = origin + g.inputWidth * channels
                    while channel + 8 <= channels {
                        let upper = sentry_max8(load(top + channel), load(top + channels + channel))
                        let lower = sentry_max8(load(bottom + channel), load(bottom + channels + channel))
                        store(bounds.apply(sentry_max8(upper, lower)), out + channel)
                        channel += 8
                    }
                }
                while channel < channels {
                    var largest = Vector(repeating: -.infinity)
                    for ky in rows.range {
                        for kx in columns.range {
                            largest = sentry_max8(largest, load(origin + (ky * g.inputWidth + kx) * channels + channel))
                        }
                    }
                    store(bounds.apply(largest), out + channel, count: channels - channel)
                    channel += 8
                }
            }
        }
    }
}
