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
        let units = groups + steps.indices.map { StepGroup(members: $0..<$0 + 1, rows: 0, steps: steps) }
        self.steps = steps
        self.units = units
        groupCount = groups.count
        let shared = groups.map { Self.isShared($0, threads: threads) }
        chains = groups.indices.reduce(into: [Range<Int>]()) { chains, unit in
            if let last = chains.last, last.upperBound == unit, shared[unit], shared[unit - 1] {
                chains[chains.count - 1] = last.lowerBound..<unit + 1
            } else {
                chains.append(unit..<unit + 1)
            }
        }
        inputPointer = memory.pointer(plan.input)
        outputPointers = plan.outputs.map(memory.pointer)
        inputShape = model.tensors[model.inputs[0]].shape
        outputShapes = model.outputs.map { model.tensors[$0].shape }
        memoryBytes = 4 * (plan.arenaSize + plan.constants.count)
        // Safe to share: the parts of a step read the same inputs and write disjoint rows.
        nonisolated(unsafe) let sharedSteps = steps
        let partCounts = units.map { min($0.partCount, Self.partsPerStep) }
        let sharedUnits = units.indices.map { unit in
            WorkerPool.SharedUnit(
                parts: partCounts[unit],
                needs: unit == 0 || unit >= groups.count
                    ? []
                    : units[unit].needs(
                        parts: partCounts[unit], after: units[unit - 1], cutInto: partCounts[unit - 1], steps: steps))
        }
        pool =
            threads > 1
            ? WorkerPool(helpers: threads - 1, units: sharedUnits) { unit, parts, count in
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
        /// eight-float load within one line; glibc's malloc starts a large block 16 bytes
        /// into a page, which would split every other load across two lines.
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
    /// for the other at the end of a step (the counts tried: docs/PERFORMANCE.md).
    static let partsPerStep = 64

    /// Steps whose output has fewer pixels than this (the 6x6 maps near the end of
    /// the full-range network, the short range's 8x8 ones) run on the caller alone,
    /// the helpers resting until the next larger step. Shared, such a step costs more
    /// CPU than it saves time: its parts are a few channel blocks or rows, every
    /// thread reads the whole input, half of it written on the other core, and the
    /// threads meet at nearly every step (the thresholds tried: docs/PERFORMANCE.md).
    static let smallestSharedOutput = 144

    /// Runs every operator once over the current input. With more than one
    /// thread, the convolutions, pools, resizes and sums are shared out (see
    /// `partCount`, and `smallestSharedOutput` for the steps that are not):
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
            // offered, rather than joining it a third done.
            if unit + 1 < groupCount, Self.isShared(units[unit + 1], threads: threads) { pool.wakeAhead() }
        }
        for index in group.members { steps[index].run() }
    }

    /// Whether `group` has the work and the parts to pay for handing parts to helpers.
    private static func worthSplitting(_ group: StepGroup, threads: Int) -> Bool {
        group.partCount >= 2 * threads && group.work >= splitWork
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
            for index in steps.indices { fastest[index] = min(fastest[index], Self.seconds { run(groupCount + index..<groupCount + index + 1) }) }
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
