import Geometry

/// OpenCV's `groupRectangles`: clusters similar boxes, averages each cluster,
/// keeps clusters with more than `minNeighbors` members, and drops a small
/// cluster lying inside a larger, better supported one.
struct RectangleGrouping {
    /// OpenCV's `GROUP_EPS`: how much two boxes may differ and still be similar.
    static let epsilon = 0.2

    // Kept between calls so that grouping allocates nothing once warm.
    private var parent: [Int] = []
    private var labels: [Int] = []
    private var labelOfRoot: [Int] = []
    private var sums: [(x: Int, y: Int, width: Int, height: Int)] = []
    private var counts: [Int] = []
    private var averages: [Box] = []

    /// Appends the groups of `boxes` with more than `minNeighbors` members to `result`.
    mutating func group(_ boxes: [Box], minNeighbors: Int, epsilon: Double = epsilon, into result: inout [Box]) {
        guard minNeighbors > 0, !boxes.isEmpty else {
            result.append(contentsOf: boxes)
            return
        }
        let classCount = partition(boxes, epsilon: epsilon)
        sums.removeAll(keepingCapacity: true)
        for _ in 0..<classCount { sums.append((0, 0, 0, 0)) }
        counts.removeAll(keepingCapacity: true)
        counts.append(contentsOf: repeatElement(0, count: classCount))
        for (box, label) in zip(boxes, labels) {
            sums[label].x += box.x
            sums[label].y += box.y
            sums[label].width += box.width
            sums[label].height += box.height
            counts[label] += 1
        }
        averages.removeAll(keepingCapacity: true)
        for (sum, count) in zip(sums, counts) {
            let scale = 1 / Float(count)
            func average(_ total: Int) -> Int { Int((Float(total) * scale).rounded(.toNearestOrEven)) }
            averages.append(Box(x: average(sum.x), y: average(sum.y), width: average(sum.width), height: average(sum.height)))
        }
        for i in 0..<classCount where counts[i] > minNeighbors {
            let r1 = averages[i], n1 = counts[i]
            let swallowed = (0..<classCount).contains { j in
                guard j != i, counts[j] > minNeighbors else { return false }
                let r2 = averages[j], n2 = counts[j]
                let dx = Int((Double(r2.width) * epsilon).rounded(.toNearestOrEven))
                let dy = Int((Double(r2.height) * epsilon).rounded(.toNearestOrEven))
                return r1.x >= r2.x - dx && r1.y >= r2.y - dy
                    && r1.x + r1.width <= r2.x + r2.width + dx && r1.y + r1.height <= r2.y + r2.height + dy
                    && (n2 > max(3, n1) || n1 < 3)
            }
            if !swallowed { result.append(r1) }
        }
    }

    /// OpenCV's `SimilarRects`: every edge within `epsilon` of the mean size.
    static func similar(_ a: Box, _ b: Box, epsilon: Double) -> Bool {
        let delta = epsilon * Double(min(a.width, b.width) + min(a.height, b.height)) * 0.5
        return Double(abs(a.x - b.x)) <= delta && Double(abs(a.y - b.y)) <= delta
            && Double(abs(a.x + a.width - b.x - b.width)) <= delta
            && Double(abs(a.y + a.height - b.y - b.height)) <= delta
    }

    /// Labels the equivalence classes of the transitive closure of `similar`
    /// into `labels`, numbered in order of each class's first member; returns
    /// how many classes there are.
    private mutating func partition(_ boxes: [Box], epsilon: Double) -> Int {
        parent.removeAll(keepingCapacity: true)
        parent.append(contentsOf: boxes.indices)
        func root(_ i: Int) -> Int {
            var r = i
            while parent[r] != r { r = parent[r] }
            var j = i
            while parent[j] != r { (j, parent[j]) = (parent[j], r) }
            return r
        }
        for i in boxes.indices {
            for j in boxes.indices where j < i && Self.similar(boxes[i], boxes[j], epsilon: epsilon) {
                let (a, b) = (root(i), root(j))
                if a != b { parent[max(a, b)] = min(a, b) }
            }
        }
        labelOfRoot.removeAll(keepingCapacity: true)
        labelOfRoot.append(contentsOf: repeatElement(-1, count: boxes.count))
        labels.removeAll(keepingCapacity: true)
        var classCount = 0
        for i in boxes.indices {
            let r = root(i)
            if labelOfRoot[r] < 0 {
                labelOfRoot[r] = classCount
                classCount += 1
            }
            labels.append(labelOfRoot[r])
        }
        return classCount
    }
}
