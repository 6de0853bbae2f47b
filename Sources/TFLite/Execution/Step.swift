/// Where a tensor lives: in the activation arena or among the constants.
enum Place: Equatable {
    case arena(Int)
    case constant(Int)
}

/// One prepared operator with its places resolved to pointers.
struct Step {
    var kernel: any Kernel
    var bounds: Bounds
    var inputs: [UnsafeMutablePointer<Float>]
    var output: UnsafeMutablePointer<Float>
    /// Weights and bias for convolutions.
    var weights: UnsafeMutablePointer<Float>?
    var bias: UnsafeMutablePointer<Float>?
    /// Floats of each input and of the output: where the step reads and writes.
    var inputCounts: [Int]
    var outputCount: Int

    /// The floats it writes.
    var written: Range<UnsafeMutablePointer<Float>> { output..<output + outputCount }

    var partCount: Int { kernel.partCount }
    var outputPixels: Int { kernel.outputPixels }
    var operation: String { kernel.operation }
    var work: Int { kernel.work }

    /// Runs parts `parts` of the `count` the step is cut into: a share of its
    /// rows for the kernels that split, the whole step (part 0 only) for the others.
    func run(parts: Range<Int> = 0..<1, of count: Int = 1) {
        guard partCount > 1 || parts.lowerBound == 0 else { return }
        kernel.run(Self.share(of: partCount, parts: parts, count: count), self)
    }

    /// What parts `parts` of `count` cover of `total` rows (or pixels, blocks): the one
    /// cut that running a part and reasoning about what it reads or writes both use.
    static func share(of total: Int, parts: Range<Int>, count: Int) -> Range<Int> {
        parts.lowerBound * total / count..<parts.upperBound * total / count
    }

    /// Runs output rows `rows` of `height`, as a member of a `StepGroup` (a 1x1
    /// convolution split by pixels takes those rows' pixels).
    func run(rows: Range<Int>, of height: Int) {
        let perRow = partCount / height
        kernel.run(rows.lowerBound * perRow..<rows.upperBound * perRow, self)
    }

    /// The rows of `input` that output rows `rows` read, run as a member of a `StepGroup`;
    /// nil where it reads all of it, or cannot say.
    func inputRows(_ rows: Range<Int>, of input: UnsafeMutablePointer<Float>) -> Range<Int>? {
        guard let index = inputs.firstIndex(of: input) else { return nil }
        return kernel.inputRows(rows, ofInput: index)
    }
}
