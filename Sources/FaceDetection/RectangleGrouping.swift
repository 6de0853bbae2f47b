import SentryCore

/// OpenCV's `groupRectangles`: clusters similar boxes, averages each cluster,
/// keeps clusters with more than `minNeighbors` members, and drops a small
/// cluster lying inside a larger, better supported one.
enum RectangleGrouping {
    /// OpenCV's `GROUP_EPS`: how much two boxes may differ and still be similar.
    static let epsilon = 0.2

    static func group(_ boxes: [Box], minNeighbors: Int, epsilon: Double = epsilon) -> [Box] {
        guard minNeighbors > 0, !boxes.isEmpty else { return boxes }
        let labels = partition(boxes) { similar($0, $1, epsilon: epsilon) }
        let classCount = (labels.max() ?? -1) + 1
        var sums = [(x: Int, y: Int, width: Int, height: Int)](repeating: (0, 0, 0, 0), count: classCount)
        var counts = [Int](repeating: 0, count: classCount)
        for (box, label) in zip(boxes, labels) {
            sums[label].x += box.x
            sums[label].y += box.y
            sums[label].width += box.width
            sums[label].height += box.height
            counts[label] += 1
        }
        let averages = zip(sums, counts).map { sum, count in
            let scale = 1 / Float(count)
            func average(_ total: Int) -> Int { Int((Float(total) * scale).rounded(.toNearestOrEven)) }
            return Box(x: average(sum.x), y: average(sum.y), width: average(sum.width), height: average(sum.height))
        }
        var result: [Box] = []
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
        return result
    }

    /// OpenCV's `SimilarRects`: every edge within `epsilon` of the mean size.
    static func similar(_ a: Box, _ b: Box, epsilon: Double) -> Bool {
        let delta = epsilon * Double(min(a.width, b.width) + min(a.height, b.height)) * 0.5
        return Double(abs(a.x - b.x)) <= delta && Double(abs(a.y - b.y)) <= delta
            && Double(abs(a.x + a.width - b.x - b.width)) <= delta
            && Double(abs(a.y + a.height - b.y - b.height)) <= delta
    }

    /// Equivalence classes of the transitive closure of `related`; labels are
    /// numbered in order of each class's first member.
    static func partition(_ boxes: [Box], related: (Box, Box) -> Bool) -> [Int] {
        var parent = Array(boxes.indices)
        func root(_ i: Int) -> Int {
            var r = i
            while parent[r] != r { r = parent[r] }
            var j = i
            while parent[j] != r { (j, parent[j]) = (parent[j], r) }
            return r
        }
        for i in boxes.indices {
            for j in boxes.indices where j < i && related(boxes[i], boxes[j]) {
                let (a, b) = (root(i), root(j))
                if a != b { parent[max(a, b)] = min(a, b) }
            }
        }
        var labelOfRoot: [Int: Int] = [:]
        return boxes.indices.map { i in
            let r = root(i)
            if let label = labelOfRoot[r] { return label }
            let label = labelOfRoot.count
            labelOfRoot[r] = label
            return label
        }
    }
}
