/// Offsets in a growing arena of floats, with freed blocks reused best-fit.
struct ArenaAllocator {
    /// The most the arena ever held: its size.
    private(set) var size = 0
    private var end = 0
    private var free: [(offset: Int, count: Int)] = []
    private var allocated: [Int: Int] = [:]

    mutating func allocate(_ count: Int) -> Int {
        let rounded = (count + 7) / 8 * 8
        let fitting = free.indices.filter { free[$0].count >= rounded }
        if let best = fitting.min(by: { free[$0].count < free[$1].count }) {
            let block = free[best]
            if block.count == rounded { free.remove(at: best) } else { free[best] = (block.offset + rounded, block.count - rounded) }
            allocated[block.offset] = rounded
            return block.offset
        }
        let offset = end
        end += rounded
        size = max(size, end)
        allocated[offset] = rounded
        return offset
    }

    mutating func free(_ offset: Int) {
        guard let count = allocated.removeValue(forKey: offset) else { return }
        free.append((offset, count))
        free.sort { $0.offset < $1.offset }
        var merged: [(offset: Int, count: Int)] = []
        for block in free {
            if let last = merged.last, last.offset + last.count == block.offset {
                merged[merged.count - 1].count += block.count
            } else {
                merged.append(block)
            }
        }
        if let last = merged.last, last.offset + last.count == end {
            end = last.offset
            merged.removeLast()
        }
        free = merged
    }
}
