/// A step before memory exists: tensors named by their places.
struct PlannedStep {
    var kernel: any Kernel
    var bounds: Bounds
    var inputs: [Place]
    var output: Place
    var weights: Place?
    var bias: Place?
    /// Floats of each input and of the output.
    var inputCounts: [Int]
    var outputCount: Int
    /// Shares rows with the step before it (see `StepGroup`).
    var joinsPrevious = false
    /// The output's rows, for a step that can share them (0 for others).
    var outputRows = 0

    func resolve(_ pointer: (Place) -> UnsafeMutablePointer<Float>) -> Step {
        Step(
            kernel: kernel, bounds: bounds, inputs: inputs.map(pointer), output: pointer(output),
            weights: weights.map(pointer), bias: bias.map(pointer), inputCounts: inputCounts, outputCount: outputCount)
    }
}
