/// Consecutive steps that threads share by the same output rows: a thread runs
/// its part of the rows through every step of the group before it claims the next,
/// so there is no wait between them and each step reads rows its own thread has
/// just written (a depthwise convolution and the 1x1 after it, see
/// `Planner.rowSharing`). Most groups are one step, shared as that step splits.
struct StepGroup {
    let members: Range<Int>
    /// What it can be cut into: the output rows of a group of several steps, a lone
    /// step's own `partCount`.
    let partCount: Int
    /// Multiply-adds of all members.
    let work: Int
    /// Pixels of the last member's output.
    let outputPixels: Int

    /// `rows`: the members' output rows (ignored for one member).
    init(members: Range<Int>, rows: Int, steps: [Step]) {
        self.members = members
        partCount = members.count > 1 ? rows : steps[members.lowerBound].partCount
        work = members.reduce(0) { $0 + steps[$1].work }
        outputPixels = steps[members.upperBound - 1].outputPixels
    }

    /// The planned steps' groups, in order (see `PlannedStep.joinsPrevious`).
    static func groups(of planned: [PlannedStep], steps: [Step]) -> [StepGroup] {
        var starts = planned.indices.filter { !planned[$0].joinsPrevious }
        starts.append(planned.count)
        return zip(starts, starts.dropFirst()).map { StepGroup(members: $0..<$1, rows: planned[$0].outputRows, steps: steps) }
    }

    /// Whether its parts are output rows: a group of several steps, or a lone step split by rows.
    func splitsByRows(_ steps: [Step]) -> Bool {
        members.count > 1 || steps[members.lowerBound].kernel.splitsByRows
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
            let rows = Step.share(of: partCount, parts: part..<part + 1, count: parts)
            var needed: UInt64 = 0
            for member in members {
                for (input, count) in zip(steps[member].inputs, steps[member].inputCounts)
                where written.contains(where: { $0.overlaps(input..<input + count) }) {
                    // Rows only of a tensor the unit before wrote whole; a part of one, or more, is read whole.
                    guard written.contains(input..<input + count),
                        let read = steps[member].inputRows(rows, of: input)
                    else { return all }
                    for earlier in 0..<previousParts {
                        let wrote = Step.share(of: previous.partCount, parts: earlier..<earlier + 1, count: previousParts)
                        if wrote.overlaps(read) { needed |= UInt64(parts: earlier..<earlier + 1) }
                    }
                }
            }
            return needed
        }
    }

    /// Parts `parts` of `count`: those rows through every member in turn, or a lone step's own share.
    func run(parts: Range<Int>, of count: Int, in steps: [Step]) {
        guard members.count > 1 else { return steps[members.lowerBound].run(parts: parts, of: count) }
        let rows = Step.share(of: partCount, parts: parts, count: count)
        for index in members { steps[index].run(rows: rows, of: partCount) }
    }
}
