/// The arithmetic of one prepared operator: what it is, how threads can cut it,
/// what it reads, how it runs.
///
/// Every operator the interpreter runs is one file in `Operators/`, named as
/// TFLite names it: one or more types conforming to this protocol, and a
/// `plan` function that checks the operator's shapes against the file and takes
/// what it needs from the `Planner` (constants, repacked weights). `Planner.prepare`
/// is the one place that maps the model's operations to those files; adding an
/// operator is adding a file and a line there.
protocol Kernel {
    /// The operator as TFLite names it, with its window and what was folded into it.
    var operation: String { get }
    /// Multiply-adds (or as many operations of another kind; 0 for kernels that
    /// only move values), to judge whether splitting it pays for the hand-over.
    var work: Int { get }
    /// How many parts (rows, pixels, blocks of channels or values) it can be cut
    /// into for threads; 1 if it cannot.
    var partCount: Int { get }
    /// Pixels of the output map, for kernels that split by rows or pixels (`Int.max` for the others).
    var outputPixels: Int { get }
    /// Whether its parts are output rows: what lets a `StepGroup` reason about which
    /// rows of the step before it reads.
    var splitsByRows: Bool { get }
    /// Whether and how it may share rows with the steps before it (see `RowSharing`);
    /// nil: it runs as a step of its own.
    var rowSharing: RowSharing? { get }
    /// Runs parts `share` of its `partCount`, on `step`'s tensors.
    func run(_ share: Range<Int>, _ step: Step)
    /// The rows of input `input` (an index into `step.inputs`) that output rows `rows`
    /// read; nil where it reads all of it, or cannot say. No default: a `StepGroup`
    /// waits for the rows named here, so a kernel that forgot it would race.
    func inputRows(_ rows: Range<Int>, ofInput input: Int) -> Range<Int>?
}

extension Kernel {
    var work: Int { 0 }
    var partCount: Int { 1 }
    var outputPixels: Int { .max }
    var splitsByRows: Bool { false }
    var rowSharing: RowSharing? { nil }
}

/// How a kernel shares rows with the steps before it: threads then run one part
/// of the rows through all of them before the next part (`StepGroup`), with no
/// wait between them, each thread reading rows it wrote itself. A kernel can when
/// it is split by output rows (or pixels, a row's worth at a time) and reads what
/// the group wrote only at the positions it writes. Each kernel declares it; the
/// planner forms the groups from it.
struct RowSharing: Equatable {
    /// Its output rows: steps share a group only with as many.
    var rows: Int
    /// The inputs (indices into its reads, `Step.inputs`) it reads only at the
    /// positions it writes: these may come from the group itself.
    var pointwiseReads: [Int] = []
}

/// A kernel that slides a window down its input (convolutions, pools): it is cut
/// by output rows, and a part reads the input rows its windows cover.
protocol WindowedKernel: Kernel {
    var geometry: WindowGeometry { get }
}

extension WindowedKernel {
    var partCount: Int { geometry.outputHeight }
    var outputPixels: Int { geometry.outputPixels }
    var splitsByRows: Bool { true }
    var rowSharing: RowSharing? { RowSharing(rows: geometry.outputHeight) }
    func inputRows(_ rows: Range<Int>, ofInput input: Int) -> Range<Int>? { input == 0 ? geometry.inputRows(rows) : nil }
}

/// What an operator's `plan` gives the planner: its kernel, the activation it
/// clamps to, its packed weights, and the tensors the kernel reads (in the order
/// of `Step.inputs`; weights, paddings and sizes were taken while planning).
struct PreparedOperator {
    var kernel: any Kernel
    var bounds = Bounds(.none)
    var weights: Place? = nil
    var bias: Place? = nil
    var reads: [Int]
}
