/// Runs a `TFLiteModel` on the CPU in float32.
///
/// Everything is prepared once: fp16 weights are converted (DEQUANTIZE of a
/// constant is done at load), weights are repacked for the kernels, and every
/// intermediate tensor gets a place in one arena, reused once the tensor is
/// dead. `invoke()` then allocates nothing.
public final class Interpreter {
    /// The input tensor's shape, e.g. [1, 192, 192, 3].
    public let inputShape: [Int]
    /// The output tensors' shapes, in the model's order.
    public let outputShapes: [[Int]]
    /// Bytes held for activations and weights.
    public let memoryBytes: Int
    /// Threads each convolution is split between.
    public let threads: Int

    private let arena: UnsafeMutablePointer<Float>
    private let constants: UnsafeMutablePointer<Float>
    private let steps: [Step]
    /// What runs as one: the network's groups of steps, in order (`groupCount` of them),
    /// then each step alone (for `stepTimings`).
    private let units: [StepGroup]
    private let groupCount: Int
    /// The network's groups as they run: each run of consecutive shared groups is one
    /// chain for the pool (see `WorkerPool`), each other group a chain of its own.
    private let chains: [Range<Int>]
    private let inputPointer: UnsafeMutablePointer<Float>
    private let outputPointers: [UnsafeMutablePointer<Float>]
    /// The helper threads, with more than one thread (read by tests for their CPU time).
    let pool: WorkerPool?

    /// Prepares `model`; operators or shapes it cannot run are a `ModelError` naming `path`.
    /// With `identicalInputChannels` (the caller writes a gray frame into every channel),
    /// the first layer is folded to one input channel where the model allows, and
    /// `inputShape` then says one channel (see `Planner.foldingIdenticalInputChannels`).
    public init(model: TFLiteModel, path: String, threads: Int = 1, identicalInputChannels: Bool = false) throws(ModelError) {
        let threads = max(1, threads)
        self.threads = threads
        let model = identicalInputChannels ? Planner.foldingIdenticalInputChannels(model) : model
        var planner = Planner(model: model, path: path, lagging: threads > 1)
        let plan = try planner.plan()
        let memory = Memory(plan: plan)
        arena = memory.arena
        constants = memory.constants
        let steps = plan.steps.map { $0.resolve(memory.pointer) }
        let groups = StepGroup.groups(of: plan.steps, steps: steps)
        let units = groups + steps.indices.map { StepGroup(members: $0 ..< $0 + 1, rows: 0, steps: steps) }
        self.steps = steps
        self.units = units
        groupCount = groups.count
        let shared = groups.map { Self.isShared($0, threads: threads) }
        chains = groups.indices.reduce(into: [Range<Int>]()) { chains, unit in
            if let last = chains.last, last.upperBound == unit, shared[unit], shared[unit - 1] {
                chains[chains.count - 1] = last.lowerBound ..< unit + 1
            } else {
                chains.append(unit ..< unit + 1)
            }
        }
        inputPointer = memory.pointer(plan.input)
        outputPointers = plan.outputs.map(memory.pointer)
        inputShape = model.tensors[model.inputs[0]].shape
        outputShapes = model.outputs.map { model.tensors[$0].shape }
        memoryBytes = 4 * (plan.arenaSize + plan.constants.count)
        // Safe to share: the parts of a step read the same inputs and write disjoint rows.
        nonisolated(unsafe) let sharedSteps = steps
        let partCounts = units.map { min($0.parallelRows, Self.partsPerStep) }
        let sharedUnits = units.indices.map { unit in
            WorkerPool.SharedUnit(parts: partCounts[unit],
                                  needs: unit == 0 || unit >= groups.count ? [] : units[unit].needs(
                                      parts: partCounts[unit], after: units[unit - 1], cutInto: partCounts[unit - 1], steps: steps))
        }
        pool = threads > 1 ? WorkerPool(helpers: threads - 1, units: sharedUnits) { unit, parts, count in
            units[unit].run(parts: parts, of: count, in: sharedSteps)
        } : nil
    }

    /// The two allocations behind every place.
    private struct Memory {
        let arena: UnsafeMutablePointer<Float>
        let constants: UnsafeMutablePointer<Float>

        /// Floats after the arena and after the constants that a kernel's last
        /// vector load may reach into (a channel tail read eight lanes wide).
        static let slack = 8

        /// Where both start: a cache line. The planner places tensors and weight blocks
        /// at multiples of 32 bytes from the start, so an aligned start keeps every
        /// eight-float load within one line. glibc's malloc starts a large block 16 bytes
        /// into a page, which split every other load: the full-range network at one
        /// thread took 1.08-1.10x as long as with this alignment.
        static let alignment = 64

        init(plan: Planner.Plan) {
            arena = Self.allocate(plan.arenaSize + Self.slack)
            constants = Self.allocate(plan.constants.count + Self.slack)
            for (index, value) in plan.constants.enumerated() { constants[index] = value }
        }

        /// `count` zeros, cache-line aligned.
        private static func allocate(_ count: Int) -> UnsafeMutablePointer<Float> {
            let floats = UnsafeMutableRawPointer.allocate(byteCount: count * MemoryLayout<Float>.stride, alignment: alignment)
                .bindMemory(to: Float.self, capacity: count)
            floats.initialize(repeating: 0, count: count)
            return floats
        }

        func pointer(_ place: Place) -> UnsafeMutablePointer<Float> {
            switch place {
            case .arena(let offset): arena + offset
            case .constant(let offset): constants + offset
            }
        }
    }

    deinit {
        pool?.stop()
        UnsafeMutableRawPointer(arena).deallocate()
        UnsafeMutableRawPointer(constants).deallocate()
    }

    /// The input tensor, to be filled before `invoke()`.
    public var input: UnsafeMutableBufferPointer<Float> {
        UnsafeMutableBufferPointer(start: inputPointer, count: inputShape.reduce(1, *))
    }

    /// Output tensor `index`, valid until the next `invoke()`.
    public func output(_ index: Int) -> UnsafeBufferPointer<Float> {
        UnsafeBufferPointer(start: outputPointers[index], count: outputShapes[index].reduce(1, *))
    }

    /// Steps with fewer multiply-adds than this (~10 µs of work) run on one
    /// thread: handing a part to a helper and waiting for it cost about as much.
    static let splitWork = 30_000

    /// Parts a split step is cut into (fewer if it has fewer rows). The threads
    /// claim a share of what is left each time (see `WorkerPool`): at two threads
    /// some six claims each, the last ones a single part, so neither waits long
    /// for the other at the end of a step. 32 parts were 6% faster at two threads
    /// than eight equal chunks; 64, the smaller last parts, took 0.4-2.0% less CPU
    /// per run than 32 (74 of 100 rounds, in turns in one process 10 ms apart) for
    /// the same time back to back (16: no change).
    static let partsPerStep = 64

    /// Steps whose output has fewer pixels than this (the 6x6 maps near the end of
    /// the full-range network, the short range's 8x8 ones) run on the caller alone,
    /// the helpers resting until the next larger step. Shared, each cost 1.2-2.3x its
    /// one-thread CPU: its parts are a few channel blocks or rows, every thread reads
    /// the whole input, half of it written on the other core, and the threads meet
    /// at nearly every step. One- and two-thread interpreters and one sharing every
    /// step, in turns 10 ms apart in one process (six times 20 rounds of 30 runs):
    /// two threads 1.14-1.29x -> 1.09-1.21x one thread's CPU per run, lower in 113 of
    /// the 120 rounds, for 2-6% more time per run (e.g. 2.04 -> 2.15 ms). At 64 (the
    /// short range's 8x8 maps shared), its two threads took 1.24-1.35x one thread's
    /// CPU, at 144 1.20-1.28x (lower in 17-20 of 20 rounds, six runs), for 0.40-0.45
    /// -> 0.46-0.50 ms per run back to back; the full range has no map in between.
    static let smallestSharedOutput = 144

    /// Runs every operator once over the current input. With more than one
    /// thread, the convolutions, pools, resizes and sums are shared out (see
    /// `parallelRows`, and `smallestSharedOutput` for the steps that are not):
    /// a step left to the caller alone would also let the helpers park, and
    /// waking them costs tens of microseconds. The helpers park as soon as the
    /// run is over: the next frame is milliseconds away.
    public func invoke() { invoke(resting: true) }

    /// `resting: false` keeps the helpers looking for the next run for a while, as
    /// `runSeconds` wants, running the network back to back (and as LiteRT's threads
    /// do in the reference it is compared with).
    private func invoke(resting: Bool) {
        for chain in chains { run(chain) }
        if resting { restHelpers() }
    }

    /// Runs `units[chain]`: shared out as one chain if its first unit is (then all
    /// are), else its one unit on the caller.
    private func run(_ chain: Range<Int>) {
        let unit = chain.lowerBound, group = units[unit]
        if let pool, Self.isShared(group, threads: threads) {
            helpersResting = false
            return pool.run(units: chain)
        }
        if let pool, Self.worthSplitting(group, threads: threads) {  // but on a small map
            restHelpers()
            // The last step before a shared one: woken now, the helpers are up when it is
            // offered (woken then, they joined it a third done): 1-4% faster back to back, the same CPU.
            if unit + 1 < groupCount, Self.isShared(units[unit + 1], threads: threads) { pool.wakeAhead() }
        }
        for index in group.members { steps[index].run() }
    }

    /// Whether `group` has the work and the parts to pay for handing parts to helpers.
    private static func worthSplitting(_ group: StepGroup, threads: Int) -> Bool {
        group.parallelRows >= 2 * threads && group.work >= splitWork
    }

    /// Whether `group` is shared out between the threads.
    private static func isShared(_ group: StepGroup, threads: Int) -> Bool {
        threads > 1 && worthSplitting(group, threads: threads) && group.outputPixels >= smallestSharedOutput
    }

    /// Whether the helpers were last sent to rest (and not offered a step since).
    private var helpersResting = false

    /// Sends the helpers to park, once until they are offered a step again.
    private func restHelpers() {
        guard let pool, !helpersResting else { return }
        pool.rest()
        helpersResting = true
    }

    /// One step of a network run, timed (`sentry bench --profile`).
    public struct StepTiming: Sendable {
        /// The operator as TFLite names it, with its window, e.g. "DEPTHWISE_CONV_2D 3x3/2".
        public let operation: String
        /// Multiply-adds, or as many operations of another kind (0 for steps that only move values).
        public let work: Int
        /// The fastest of the runs.
        public let seconds: Double
    }

    /// The whole network `runs` times back to back on the current input, in
    /// seconds per run (benchmarks: timed as LiteRT's reference times its own).
    public func runSeconds(runs: Int) -> [Double] {
        var seconds: [Double] = []
        repeatOnKeptInput(runs: runs) { seconds.append(Self.seconds { self.invoke(resting: false) }) }
        return seconds
    }

    /// Each step's fastest time over `runs` runs of the whole network on the
    /// current input: where the time goes.
    public func stepTimings(runs: Int) -> [StepTiming] {
        var fastest = [Double](repeating: .infinity, count: steps.count)
        repeatOnKeptInput(runs: max(runs, 1)) {
            for index in steps.indices { fastest[index] = min(fastest[index], Self.seconds { run(groupCount + index ..< groupCount + index + 1) }) }
        }
        return steps.indices.map { StepTiming(operation: steps[$0].operation, work: steps[$0].work, seconds: fastest[$0]) }
    }

    /// Runs `body` `runs` times, the input put back before each time and after
    /// the last: the arena reuses the input's space for later tensors.
    private func repeatOnKeptInput(runs: Int, _ body: () -> Void) {
        let kept = Array(input)
        for _ in 0..<runs {
            _ = input.update(fromContentsOf: kept)
            body()
        }
        _ = input.update(fromContentsOf: kept)
    }

    private static func seconds(_ work: () -> Void) -> Double {
        let elapsed = ContinuousClock().measure(work)
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    }
}

/// Where a tensor lives: in the activation arena or among the constants.
enum Place: Equatable {
    case arena(Int)
    case constant(Int)
}

/// One prepared operator with its places resolved to pointers.
struct Step {
    enum Kind {
        /// A 1x1 convolution; with `residualChannels` > 0, also a fused ADD of `inputs[1]` (see `Planner.fusingAdds`).
        case pointwise(pixels: Int, inputChannels: Int, paddedOutputChannels: Int, outputChannels: Int, residualChannels: Int)
        case convolution(WindowGeometry, inputChannels: Int, paddedOutputChannels: Int, outputChannels: Int)
        case depthwise(WindowGeometry, channels: Int)
        case depthwiseMultiplier(WindowGeometry, inputChannels: Int, multiplier: Int)
        case maxPool(WindowGeometry, channels: Int)
        case add(count: Int)
        case clamp(count: Int)
        case copy(count: Int)
        /// Zero padding: the output is cleared, then each input row of `rowLength` floats is copied.
        case pad(inputShape: [Int], outputShape: [Int], before: [Int])
        /// Bilinear resize; with a second input, also a fused ADD of it (see `Planner.fusingAdds`).
        case resize(inputWidth: Int, inputHeight: Int, channels: Int, outputWidth: Int, outputHeight: Int,
                    alignCorners: Bool, halfPixelCenters: Bool)
        /// Concatenation: `outer` blocks, each the inputs' slices of the given lengths in turn.
        case concatenate(outer: Int, slices: [Int])
    }

    var kind: Kind
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
    var written: Range<UnsafeMutablePointer<Float>> { output ..< output + outputCount }

    /// How many parts (rows, pixels, blocks of 16 output channels or of `addBlock` values) the
    /// step can be split into for threads; 1 if it cannot.
    var parallelRows: Int {
        switch kind {
        case let .pointwise(pixels, _, _, outputChannels, _):
            Self.splitsChannels(pixels: pixels, outputChannels: outputChannels) ? (outputChannels + 15) / 16 : pixels
        case let .convolution(geometry, _, _, _), let .depthwise(geometry, _), let .maxPool(geometry, _): geometry.outputHeight
        case let .resize(_, _, _, _, outputHeight, _, _): outputHeight
        case let .add(count): max(1, count / Self.addBlock)
        default: 1
        }
    }

    /// Pixels of the output map, for the kernels that split by rows or pixels (`Int.max` for the others).
    var outputPixels: Int {
        switch kind {
        case let .pointwise(pixels, _, _, _, _): pixels
        case let .convolution(geometry, _, _, _), let .depthwise(geometry, _), let .depthwiseMultiplier(geometry, _, _),
             let .maxPool(geometry, _):
            geometry.outputWidth * geometry.outputHeight
        case let .resize(_, _, _, outputWidth, outputHeight, _, _): outputWidth * outputHeight
        default: .max
        }
    }

    /// Values of an ADD per part when threads share it.
    static let addBlock = 1024

    /// Whether threads share a 1x1 convolution by output channels (sixteen at a time)
    /// rather than by pixels: when it has more channels than pixels (the deep layers),
    /// so that each thread reads only its channels' weights and runs whole pixel tiles.
    static func splitsChannels(pixels: Int, outputChannels: Int) -> Bool { outputChannels >= pixels }

    /// The operator as TFLite names it, with its window and what was folded into it.
    var operation: String {
        switch kind {
        case let .pointwise(_, _, _, _, residualChannels): residualChannels > 0 ? "CONV_2D 1x1 + ADD" : "CONV_2D 1x1"
        case let .convolution(g, _, _, _): "CONV_2D \(g.window.width)x\(g.window.height)/\(g.window.strideX)"
        case let .depthwise(g, _), let .depthwiseMultiplier(g, _, _):
            "DEPTHWISE_CONV_2D \(g.window.width)x\(g.window.height)/\(g.window.strideX)"
        case .maxPool: "MAX_POOL_2D"
        case .add: "ADD"
        case .clamp: "RELU"
        case .copy: "RESHAPE"
        case .pad: "PAD"
        case .resize: inputs.count > 1 ? "RESIZE_BILINEAR + ADD" : "RESIZE_BILINEAR"
        case .concatenate: "CONCATENATION"
        }
    }

    /// Multiply-adds the step does (or as many other operations), to judge whether splitting it pays for the hand-over.
    var work: Int {
        switch kind {
        case let .pointwise(pixels, inputChannels, _, outputChannels, _): pixels * inputChannels * outputChannels
        case let .convolution(g, inputChannels, _, outputChannels):
            g.outputWidth * g.outputHeight * g.window.width * g.window.height * inputChannels * outputChannels
        case let .depthwise(g, channels), let .maxPool(g, channels):
            g.outputWidth * g.outputHeight * g.window.width * g.window.height * channels
        // Not multiply-adds but as costly: four taps per value, one sum per value.
        case let .resize(_, _, channels, outputWidth, outputHeight, _, _): outputWidth * outputHeight * channels * 4
        case let .add(count): count
        default: 0
        }
    }

    /// Runs parts `parts` of the `count` the step is cut into: a share of its
    /// rows for the kernels that split, the whole step (part 0 only) for the others.
    func run(parts: Range<Int> = 0..<1, of count: Int = 1) {
        guard parallelRows > 1 || parts.lowerBound == 0 else { return }
        run(share: Self.share(of: parallelRows, parts: parts, count: count))
    }

    /// What parts `parts` of `count` cover of `total` rows (or pixels, blocks): the one
    /// cut that running a part and reasoning about what it reads or writes both use.
    static func share(of total: Int, parts: Range<Int>, count: Int) -> Range<Int> {
        parts.lowerBound * total / count ..< parts.upperBound * total / count
    }

    /// Runs output rows `rows` of `height`, as a member of a `StepGroup` (a 1x1
    /// convolution split by pixels takes those rows' pixels).
    func run(rows: Range<Int>, of height: Int) {
        let perRow = parallelRows / height
        run(share: rows.lowerBound * perRow ..< rows.upperBound * perRow)
    }

    /// Runs `share` of the step's `parallelRows`.
    private func run(share: Range<Int>) {
        let rows = parallelRows
        switch kind {
        case let .pointwise(pixels, inputChannels, padded, outputChannels, residualChannels):
            let byChannels = Self.splitsChannels(pixels: pixels, outputChannels: outputChannels)
            Kernels.pointwiseConvolution(input: inputs[0], pixels: byChannels ? 0..<pixels : share,
                                         channels: byChannels ? share.lowerBound * 16 ..< min(share.upperBound * 16, outputChannels) : nil,
                                         inputChannels: inputChannels, weights: weights!,
                                         bias: bias!, paddedOutputChannels: padded, output: output,
                                         outputChannels: outputChannels, bounds: bounds,
                                         residual: residualChannels > 0 ? inputs[1] : nil, residualChannels: residualChannels)
        case let .convolution(geometry, inputChannels, padded, outputChannels):
            Kernels.convolution(input: inputs[0], inputChannels: inputChannels, geometry: geometry, rows: share, weights: weights!,
                                bias: bias!, paddedOutputChannels: padded, output: output,
                                outputChannels: outputChannels, bounds: bounds)
        case let .depthwise(geometry, channels):
            Kernels.depthwiseConvolution(input: inputs[0], channels: channels, geometry: geometry, rows: share, weights: weights!,
                                         bias: bias!, output: output, bounds: bounds)
        case let .depthwiseMultiplier(geometry, inputChannels, multiplier):
            Kernels.depthwiseConvolution(input: inputs[0], inputChannels: inputChannels, multiplier: multiplier,
                                         geometry: geometry, weights: weights!, bias: bias!, output: output, bounds: bounds)
        case let .maxPool(geometry, channels):
            Kernels.maxPool(input: inputs[0], channels: channels, geometry: geometry, rows: share, output: output, bounds: bounds)
        case let .add(count):
            // Parts of whole blocks (the last takes the rest), so each starts on a vector.
            let start = share.lowerBound * Self.addBlock, end = share.upperBound == rows ? count : share.upperBound * Self.addBlock
            Kernels.add(inputs[0] + start, inputs[1] + start, count: end - start, output: output + start, bounds: bounds)
        case let .clamp(count):
            Kernels.clamp(inputs[0], count: count, output: output, bounds: bounds)
        case let .copy(count):
            if output != inputs[0] { output.update(from: inputs[0], count: count) }
        case let .pad(inputShape, outputShape, before):
            output.update(repeating: 0, count: outputShape.reduce(1, *))
            Self.pad(input: inputs[0], inputShape: inputShape, output: output, outputShape: outputShape, before: before)
        case let .resize(inputWidth, inputHeight, channels, outputWidth, outputHeight, alignCorners, halfPixelCenters):
            Kernels.resizeBilinear(input: inputs[0], inputWidth: inputWidth, inputHeight: inputHeight, channels: channels,
                                   output: output, addend: inputs.count > 1 ? inputs[1] : nil,
                                   outputWidth: outputWidth, outputHeight: outputHeight, rows: share,
                                   alignCorners: alignCorners, halfPixelCenters: halfPixelCenters)
        case let .concatenate(outer, slices):
            var out = output
            for block in 0..<outer {
                for (input, length) in zip(inputs, slices) {
                    out.update(from: input + block * length, count: length)
                    out += length
                }
            }
        }
    }

    /// The rows of `input` that output rows `rows` read, run as a member of a `StepGroup`;
    /// nil where it reads all of it, or cannot say.
    func inputRows(_ rows: Range<Int>, of input: UnsafeMutablePointer<Float>) -> Range<Int>? {
        switch kind {
        case let .convolution(g, _, _, _), let .depthwise(g, _), let .maxPool(g, _):
            guard input == inputs[0] else { return nil }
            let first = rows.lowerBound * g.window.strideY - g.padTop
            let end = (rows.upperBound - 1) * g.window.strideY - g.padTop + g.window.height
            let start = min(max(first, 0), g.inputHeight)
            return start ..< max(start, min(end, g.inputHeight))
        case let .pointwise(pixels, _, _, outputChannels, _):
            // Split by pixels, a member reads its own rows of its input and residual.
            return Self.splitsChannels(pixels: pixels, outputChannels: outputChannels) ? nil : rows
        case let .resize(_, inputHeight, _, _, outputHeight, alignCorners, halfPixelCenters):
            guard input == inputs[0] else { return rows }  // the addend, at its own rows
            let scale = Kernels.resizeScale(inputHeight, outputHeight, alignCorners: alignCorners)
            let first = Kernels.resizeSample(rows.lowerBound, scale, inputHeight, halfPixelCenters: halfPixelCenters)
            let last = Kernels.resizeSample(rows.upperBound - 1, scale, inputHeight, halfPixelCenters: halfPixelCenters)
            return first.lower ..< last.upper + 1
        default: return nil
        }
    }

    /// Copies the input into the (already zeroed) output at offset `before`, one innermost row at a time.
    private static func pad(input: UnsafePointer<Float>, inputShape: [Int], output: UnsafeMutablePointer<Float>,
                            outputShape: [Int], before: [Int]) {
        let rank = inputShape.count
        let rowLength = inputShape[rank - 1]
        let rows = inputShape.dropLast().reduce(1, *)
        for row in 0..<rows {
            var remainder = row, outputOffset = before[rank - 1], span = outputShape[rank - 1]
            for dimension in stride(from: rank - 2, through: 0, by: -1) {
                let index = remainder % inputShape[dimension]
                remainder /= inputShape[dimension]
                outputOffset += (index + before[dimension]) * span
                span *= outputShape[dimension]
            }
            (output + outputOffset).update(from: input + row * rowLength, count: rowLength)
        }
    }
}

/// Consecutive steps that threads share by the same output rows: a thread runs
/// its part of the rows through every step of the group before it claims the next,
/// so there is no wait between them and each step reads rows its own thread has
/// just written (a depthwise convolution and the 1x1 after it, see
/// `Planner.rowSharing`). Most groups are one step, shared as that step splits.
struct StepGroup {
    let members: Range<Int>
    /// What it can be cut into: the output rows of a group of several steps, a lone
    /// step's own `parallelRows`.
    let parallelRows: Int
    /// Multiply-adds of all members.
    let work: Int
    /// Pixels of the last member's output.
    let outputPixels: Int

    /// `rows`: the members' output rows (ignored for one member).
    init(members: Range<Int>, rows: Int, steps: [Step]) {
        self.members = members
        parallelRows = members.count > 1 ? rows : steps[members.lowerBound].parallelRows
        work = members.reduce(0) { $0 + steps[$1].work }
        outputPixels = steps[members.upperBound - 1].outputPixels
    }

    /// The planned steps' groups, in order (see `PlannedStep.joinsPrevious`).
    static func groups(of planned: [PlannedStep], steps: [Step]) -> [StepGroup] {
        var starts = planned.indices.filter { !planned[$0].joinsPrevious }
        starts.append(planned.count)
        return zip(starts, starts.dropFirst()).map { StepGroup(members: $0 ..< $1, rows: planned[$0].outputRows, steps: steps) }
    }

    /// Whether its parts are output rows: a group of several steps, or a lone step split by rows.
    func splitsByRows(_ steps: [Step]) -> Bool {
        guard members.count == 1 else { return true }
        switch steps[members.lowerBound].kind {
        case .convolution, .depthwise, .maxPool, .resize: return true
        default: return false
        }
    }

    /// For each of its `parts`, the parts of `previous` (cut into `previousParts`) that it
    /// reads, as bits (see `WorkerPool.SharedUnit.needs`): the rows its windows cover of
    /// what `previous` wrote, or all of them where it cannot say.
    func needs(parts: Int, after previous: StepGroup, cutInto previousParts: Int, steps: [Step]) -> [UInt64] {
        let all = UInt64(parts: 0..<previousParts)
        let written = previous.members.map { steps[$0].written }
        guard splitsByRows(steps), previous.splitsByRows(steps) else {
            return [UInt64](repeating: all, count: parts)
        }
        return (0..<parts).map { part in
            let rows = Step.share(of: parallelRows, parts: part ..< part + 1, count: parts)
            var needed: UInt64 = 0
            for member in members {
                for (input, count) in zip(steps[member].inputs, steps[member].inputCounts)
                where written.contains(where: { $0.overlaps(input ..< input + count) }) {
                    // Rows only of a tensor the unit before wrote whole; a part of one, or more, is read whole.
                    guard written.contains(input ..< input + count),
                          let read = steps[member].inputRows(rows, of: input) else { return all }
                    for earlier in 0..<previousParts {
                        let wrote = Step.share(of: previous.parallelRows, parts: earlier ..< earlier + 1, count: previousParts)
                        if wrote.overlaps(read) { needed |= UInt64(parts: earlier ..< earlier + 1) }
                    }
                }
            }
            return needed
        }
    }

    /// Parts `parts` of `count`: those rows through every member in turn, or a lone step's own share.
    func run(parts: Range<Int>, of count: Int, in steps: [Step]) {
        guard members.count > 1 else { return steps[members.lowerBound].run(parts: parts, of: count) }
        let rows = Step.share(of: parallelRows, parts: parts, count: count)
        for index in members { steps[index].run(rows: rows, of: parallelRows) }
    }
}

/// A step before memory exists: tensors named by their places.
struct PlannedStep {
    var kind: Step.Kind
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
        Step(kind: kind, bounds: bounds, inputs: inputs.map(pointer), output: pointer(output),
             weights: weights.map(pointer), bias: bias.map(pointer), inputCounts: inputCounts, outputCount: outputCount)
    }
}
