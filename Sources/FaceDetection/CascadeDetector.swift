import Dispatch
import Geometry
import Imaging

/// Detection parameters with the defaults of OpenCV's `detectMultiScale`
/// as sentry uses it (SPEC §1.2).
public struct CascadeParameters: Sendable, Equatable {
    /// How much the window grows from one scale to the next (> 1).
    public var scaleFactor: Double
    /// A face needs more than this many overlapping raw detections.
    public var minNeighbors: Int
    /// The smallest face, in pixels (both sides).
    public var minSize: Int
    /// The largest face, in pixels; `nil` for the frame size.
    public var maxSize: Int?

    public init(scaleFactor: Double = 1.1, minNeighbors: Int = 3, minSize: Int = 30, maxSize: Int? = nil) {
        self.scaleFactor = scaleFactor
        self.minNeighbors = minNeighbors
        self.minSize = minSize
        self.maxSize = maxSize
    }
}

/// Finds faces with a Haar cascade the way OpenCV's `detectMultiScale` does:
/// the frame is shrunk once per scale (bilinear, bit-exact with OpenCV), the
/// cascade's window slides over each shrunken frame (step 2 pixels below
/// scale 2, else 1; one more step after a first-stage rejection), and the
/// raw hits are grouped with `groupRectangles`.
public final class CascadeDetector: RegionFaceDetector {
    public let cascade: HaarCascade
    public let parameters: CascadeParameters

    private let stages: [(threshold: Float, treeCount: Int)]
    private let isStumpCascade: Bool
    /// A one-node tree, packed so that the hot loop reads one element per tree.
    private struct Stump {
        var feature: Int32
        var threshold: Float
        var below: Float
        var above: Float
    }
    /// Every tree as a stump when the cascade has only stumps (the usual case), else empty.
    private let stumps: [Stump]
    /// LBP: each stump's 256-bit set of codes that take its first leaf (8 words per stump).
    private let categories: [Int32]
    // Flattened trees: every node's feature, threshold and children; leaves.
    private let nodeFeature: [Int32]
    private let nodeThreshold: [Float]
    private let nodeLeft: [Int32]
    private let nodeRight: [Int32]
    private let treeNodeStart: [Int32]
    private let treeLeafStart: [Int32]
    private let leaves: [Float]
    private let featureWeights: [Float]
    private let featureTilted: [Bool]
    // The four corners of each feature rectangle in window pixels (12 per
    // feature); the offsets for a scale's tables follow from its row stride.
    private let cornerX: [Int32]
    private let cornerY: [Int32]
    /// Threads the scales are shared between.
    public let threads: Int
    // Scratch space reused across frames, one per thread.
    private let scratch: [Scratch]

    /// One thread's buffers: the shrunken frame, its tables, and the feature
    /// rectangles as corner offsets into those tables.
    final class Scratch {
        var scaled: [UInt8] = []
        var resize = LinearResize()
        var tables = IntegralImages()
        var featureOffsets: [Int32]
        /// This thread's hits for all its scales, in scale order, with each scale's index.
        var hits: [(scale: Int, box: Box)] = []
        init(offsetCount: Int) { featureOffsets = [Int32](repeating: 0, count: offsetCount) }
    }

    // Per-frame state kept between frames so that steady state allocates nothing.
    private var scalesSize = (width: 0, height: 0)
    private var cachedScales: [Float] = []
    private var raw: [Box] = []
    private var cursors: [Int] = []
    private var grouping = RectangleGrouping()
    /// The region of the last `detectFaces(in:region:into:)`, copied out.
    private var regionPixels: [UInt8] = []

    /// `threads` splits the scales between that many threads (the boxes do not change).
    public init(cascade: HaarCascade, parameters: CascadeParameters = CascadeParameters(), threads: Int = 1) {
        self.cascade = cascade
        self.parameters = parameters
        self.threads = max(1, threads)
        scratch = (0..<max(1, threads)).map { _ in Scratch(offsetCount: cascade.features.count * (cascade.isLBP ? 16 : 12)) }
        stages = cascade.stages.map { ($0.threshold, $0.trees.count) }
        let trees = cascade.stages.flatMap(\.trees)
        isStumpCascade = trees.allSatisfy { $0.nodes.count == 1 && $0.leaves.count == 2 }
        stumps =
            isStumpCascade
            ? trees.map { Stump(feature: Int32($0.nodes[0].featureIndex), threshold: $0.nodes[0].threshold, below: $0.leaves[0], above: $0.leaves[1]) }
            : []
        categories = cascade.isLBP ? trees.flatMap { $0.nodes[0].categories } : []
        var nodeStart: [Int32] = [], leafStart: [Int32] = []
        var nodeCount: Int32 = 0, leafCount: Int32 = 0
        for tree in trees {
            nodeStart.append(nodeCount)
            leafStart.append(leafCount)
            nodeCount += Int32(tree.nodes.count)
            leafCount += Int32(tree.leaves.count)
        }
        let nodes = trees.flatMap(\.nodes)
        nodeFeature = nodes.map { Int32($0.featureIndex) }
        nodeThreshold = nodes.map(\.threshold)
        nodeLeft = nodes.map { Int32($0.left) }
        nodeRight = nodes.map { Int32($0.right) }
        treeNodeStart = nodeStart
        treeLeafStart = leafStart
        leaves = trees.flatMap(\.leaves)
        featureWeights = cascade.features.flatMap { f in (0..<3).map { $0 < f.rects.count ? f.rects[$0].weight : 0 } }
        featureTilted = cascade.features.map(\.tilted)
        let points = cascade.isLBP ? 16 : 12
        var xs = [Int32](repeating: 0, count: cascade.features.count * points), ys = xs
        for (index, feature) in cascade.features.enumerated() {
            if cascade.isLBP {
                // The 4x4 grid of corners of the 3x3 blocks, row by row.
                let rect = feature.rects[0]
                for j in 0..<4 {
                    for i in 0..<4 {
                        xs[index * 16 + j * 4 + i] = Int32(rect.x + i * rect.width)
                        ys[index * 16 + j * 4 + i] = Int32(rect.y + j * rect.height)
                    }
                }
                continue
            }
            for (r, rect) in feature.rects.enumerated() {
                let corners: [(x: Int, y: Int)] =
                    feature.tilted
                    ? [
                        (rect.x, rect.y), (rect.x - rect.height, rect.y + rect.height),
                        (rect.x + rect.width, rect.y + rect.width),
                        (rect.x + rect.width - rect.height, rect.y + rect.width + rect.height),
                    ]
                    : [
                        (rect.x, rect.y), (rect.x + rect.width, rect.y),
                        (rect.x, rect.y + rect.height), (rect.x + rect.width, rect.y + rect.height),
                    ]
                for (c, corner) in corners.enumerated() {
                    xs[index * 12 + r * 4 + c] = Int32(corner.x)
                    ys[index * 12 + r * 4 + c] = Int32(corner.y)
                }
            }
        }
        cornerX = xs
        cornerY = ys
    }

    /// The scales OpenCV tries for an image of this size: window sizes from
    /// the cascade's own up to the image, skipping those outside min/max size.
    private func scales(width: Int, height: Int, into scales: inout [Float]) {
        let windowWidth = cascade.windowWidth, windowHeight = cascade.windowHeight
        let maxWidth = parameters.maxSize ?? width, maxHeight = parameters.maxSize ?? height
        scales.removeAll(keepingCapacity: true)
        var factor = 1.0
        while true {
            let w = Int((Double(windowWidth) * factor).rounded(.toNearestOrEven))
            let h = Int((Double(windowHeight) * factor).rounded(.toNearestOrEven))
            if w > width || h > height { break }
            let scale = Float(factor)
            factor *= parameters.scaleFactor
            let sw = Int((Float(windowWidth) * scale).rounded(.toNearestOrEven))
            let sh = Int((Float(windowHeight) * scale).rounded(.toNearestOrEven))
            if sw > maxWidth || sh > maxHeight { break }
            if sw < parameters.minSize || sh < parameters.minSize { continue }
            scales.append(scale)
        }
    }

    public func detectFaces(in image: GrayImage, into faces: inout [Box]) {
        faces.removeAll(keepingCapacity: true)
        collectRawDetections(in: image)
        grouping.group(raw, minNeighbors: parameters.minNeighbors, into: &faces)
    }

    /// Runs the cascade on a copy of `region` alone, so the windows it slides
    /// and the scales it tries are the region's.
    public func detectFaces(in image: GrayImage, region: Box, into faces: inout [Box]) {
        regionPixels.removeAll(keepingCapacity: true)
        image.pixels.withUnsafeBufferPointer { pixels in
            for row in region.y..<region.y + region.height {
                regionPixels.append(
                    contentsOf: UnsafeBufferPointer(rebasing: pixels[row * image.width + region.x..<row * image.width + region.x + region.width]))
            }
        }
        let part = GrayImage(width: region.width, height: region.height, pixels: regionPixels)
        detectFaces(in: part, into: &faces)
        for index in faces.indices {
            faces[index].x += region.x
            faces[index].y += region.y
        }
    }

    /// Every window the cascade accepts, before grouping, in scale order.
    public func rawDetections(in image: GrayImage) -> [Box] {
        collectRawDetections(in: image)
        return raw
    }

    /// Fills `raw` with the accepted windows of every scale, in scale order.
    private func collectRawDetections(in image: GrayImage) {
        raw.removeAll(keepingCapacity: true)
        guard image.width >= cascade.windowWidth, image.height >= cascade.windowHeight else { return }
        if scalesSize != (image.width, image.height) {
            scales(width: image.width, height: image.height, into: &cachedScales)
            scalesSize = (image.width, image.height)
        }
        let scales = cachedScales
        if threads == 1 {
            scratch[0].hits.removeAll(keepingCapacity: true)
            for (index, scale) in scales.enumerated() { detect(in: image, scale: scale, index: index, using: scratch[0]) }
            for hit in scratch[0].hits { raw.append(hit.box) }
            return
        }
        // Thread t takes scales t, t + threads, …: the big first scales are spread out.
        // Safe to share: the cascade is read-only, each thread writes only its own scratch.
        nonisolated(unsafe) let detector = self
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            detector.scratch[thread].hits.removeAll(keepingCapacity: true)
            for index in Swift.stride(from: thread, to: scales.count, by: detector.threads) {
                detector.detect(in: image, scale: scales[index], index: index, using: detector.scratch[thread])
            }
        }
        // Merge in scale order: scale i's hits are at the cursor of thread i % threads.
        cursors.removeAll(keepingCapacity: true)
        cursors.append(contentsOf: repeatElement(0, count: threads))
        for index in scales.indices {
            let thread = index % threads
            let hits = scratch[thread].hits
            while cursors[thread] < hits.count, hits[cursors[thread]].scale == index {
                raw.append(hits[cursors[thread]].box)
                cursors[thread] += 1
            }
        }
    }

    private func detect(in image: GrayImage, scale: Float, index: Int, using scratch: Scratch) {
        let width = Int((Float(image.width) / scale).rounded(.toNearestOrEven))
        let height = Int((Float(image.height) / scale).rounded(.toNearestOrEven))
        if scratch.scaled.count < width * height { scratch.scaled = [UInt8](repeating: 0, count: width * height) }
        image.pixels.withUnsafeBufferPointer { source in
            scratch.scaled.withUnsafeMutableBufferPointer { destination in
                scratch.resize.resize(source, width: image.width, height: image.height, into: destination, width: width, height: height)
            }
        }
        scratch.scaled.withUnsafeBufferPointer { scratch.tables.compute($0, width: width, height: height, withTilted: cascade.hasTiltedFeatures) }
        prepareFeatureOffsets(scratch)
        scan(scale: scale, index: index, scratch: scratch)
    }

    /// Corner offsets of every feature rectangle relative to a window's origin.
    private func prepareFeatureOffsets(_ scratch: Scratch) {
        let stride = Int32(scratch.tables.stride), tiltedStride = Int32(scratch.tables.tiltedStride)
        let tilted = featureTilted
        cornerX.withUnsafeBufferPointer { x in
            cornerY.withUnsafeBufferPointer { y in
                scratch.featureOffsets.withUnsafeMutableBufferPointer { out in
                    let points = x.count / max(tilted.count, 1)
                    for feature in 0..<tilted.count {
                        let rowStride = tilted[feature] ? tiltedStride : stride
                        for i in feature * points..<feature * points + points { out[i] = y[i] &* rowStride &+ x[i] }
                    }
                }
            }
        }
    }

    /// A scale's windows on its tables: where they slide (step 2 pixels below scale 2,
    /// else 1), OpenCV's variance window (the cascade window less a one-pixel border)
    /// as offsets from a window's origin, and the frame box a hit stands for.
    private struct ScaleWindows {
        let scale: Float
        let index: Int
        let step: Int
        let columns: Int
        let rows: Int
        let normArea: Double
        let n0: Int, n1: Int, n2: Int, n3: Int
        let boxWidth: Int, boxHeight: Int

        init(windowWidth: Int, windowHeight: Int, tables: IntegralImages, scale: Float, index: Int) {
            self.scale = scale
            self.index = index
            step = scale >= 2 ? 1 : 2
            columns = tables.width + 1 - windowWidth
            rows = tables.height + 1 - windowHeight
            normArea = Double((windowWidth - 2) * (windowHeight - 2))
            let stride = tables.stride
            n0 = stride + 1
            n1 = stride + windowWidth - 1
            n2 = (windowHeight - 1) * stride + 1
            n3 = (windowHeight - 1) * stride + windowWidth - 1
            boxWidth = Int((Float(windowWidth) * scale).rounded(.toNearestOrEven))
            boxHeight = Int((Float(windowHeight) * scale).rounded(.toNearestOrEven))
        }

        /// The hit of the window at (x, y) of the shrunken frame: its box in the frame, with this scale's index.
        func hit(x: Int, y: Int) -> (scale: Int, box: Box) {
            (
                index,
                Box(
                    x: Int((Float(x) * scale).rounded(.toNearestOrEven)), y: Int((Float(y) * scale).rounded(.toNearestOrEven)),
                    width: boxWidth, height: boxHeight)
            )
        }
    }

    private func scan(scale: Float, index scaleIndex: Int, scratch: Scratch) {
        let tables = scratch.tables
        let windows = ScaleWindows(
            windowWidth: cascade.windowWidth, windowHeight: cascade.windowHeight, tables: tables, scale: scale, index: scaleIndex)
        guard windows.columns > 0, windows.rows > 0 else { return }
        let isStumps = isStumpCascade
        let anyTilted = cascade.hasTiltedFeatures
        let isLBP = cascade.isLBP
        if isStumps && !anyTilted && !isLBP {
            scanFourWide(windows, scratch: scratch)
            return
        }
        let step = windows.step, columns = windows.columns, rows = windows.rows
        let stride = tables.stride, tiltedStride = tables.tiltedStride, padding = tables.tiltedPadding
        let normArea = windows.normArea
        let n0 = windows.n0, n1 = windows.n1, n2 = windows.n2, n3 = windows.n3
        categories.withUnsafeBufferPointer { categories in
            stumps.withUnsafeBufferPointer { stumps in
                tables.sums.withUnsafeBufferPointer { sum in
                    tables.squares.withUnsafeBufferPointer { square in
                        tables.tilted.withUnsafeBufferPointer { tilted in
                            scratch.featureOffsets.withUnsafeBufferPointer { offsets in
                                featureWeights.withUnsafeBufferPointer { weights in
                                    featureTilted.withUnsafeBufferPointer { isTilted in
                                        nodeFeature.withUnsafeBufferPointer { nodeFeature in
                                            nodeThreshold.withUnsafeBufferPointer { nodeThreshold in
                                                nodeLeft.withUnsafeBufferPointer { nodeLeft in
                                                    nodeRight.withUnsafeBufferPointer { nodeRight in
                                                        treeNodeStart.withUnsafeBufferPointer { treeNodeStart in
                                                            treeLeafStart.withUnsafeBufferPointer { treeLeafStart in
                                                                leaves.withUnsafeBufferPointer { leaves in
                                                                    /// A feature's response at the window whose tables start at `base`/`tiltedBase`.
                                                                    @inline(__always) func feature(_ index: Int, _ base: Int, _ tiltedBase: Int) -> Float {
                                                                        let o = index &* 12
                                                                        let isTiltedFeature = anyTilted && isTilted[index]
                                                                        let table = isTiltedFeature ? tilted : sum
                                                                        let b = isTiltedFeature ? tiltedBase : base
                                                                        @inline(__always) func rect(_ r: Int) -> Float {
                                                                            let p = o &+ r &* 4
                                                                            return Float(
                                                                                table[b &+ Int(offsets[p])] &- table[b &+ Int(offsets[p &+ 1])]
                                                                                    &- table[b &+ Int(offsets[p &+ 2])] &+ table[b &+ Int(offsets[p &+ 3])])
                                                                        }
                                                                        let w = index &* 3
                                                                        var value = weights[w] * rect(0) + weights[w &+ 1] * rect(1)
                                                                        if weights[w &+ 2] != 0 { value += weights[w &+ 2] * rect(2) }
                                                                        return value
                                                                    }
                                                                    /// OpenCV's LBP code of a feature: its 3x3 blocks' sums, each of the eight
                                                                    /// around the centre compared with the centre, clockwise from the top left.
                                                                    @inline(__always) func lbpCode(_ index: Int, _ base: Int) -> Int {
                                                                        let o = index &* 16
                                                                        @inline(__always) func block(_ a: Int, _ b: Int, _ c: Int, _ d: Int) -> Int32 {
                                                                            sum[base &+ Int(offsets[o &+ a])] &- sum[base &+ Int(offsets[o &+ b])]
                                                                                &- sum[base &+ Int(offsets[o &+ c])] &+ sum[base &+ Int(offsets[o &+ d])]
                                                                        }
                                                                        let center = block(5, 6, 9, 10)
                                                                        var code = block(0, 1, 4, 5) >= center ? 128 : 0
                                                                        if block(1, 2, 5, 6) >= center { code |= 64 }
                                                                        if block(2, 3, 6, 7) >= center { code |= 32 }
                                                                        if block(6, 7, 10, 11) >= center { code |= 16 }
                                                                        if block(10, 11, 14, 15) >= center { code |= 8 }
                                                                        if block(9, 10, 13, 14) >= center { code |= 4 }
                                                                        if block(8, 9, 12, 13) >= center { code |= 2 }
                                                                        if block(4, 5, 8, 9) >= center { code |= 1 }
                                                                        return code
                                                                    }
                                                                    var y = 0
                                                                    while y < rows {
                                                                        var x = 0
                                                                        while x < columns {
                                                                            let base = y * stride + x
                                                                            let tiltedBase = y * tiltedStride + x + padding
                                                                            // OpenCV's setWindow: reject flat windows, else normalise by the deviation.
                                                                            let windowSum = sum[base + n0] &- sum[base + n1] &- sum[base + n2] &+ sum[base + n3]
                                                                            let windowSquares =
                                                                                square[base + n0] &- square[base + n1] &- square[base + n2] &+ square[base + n3]
                                                                            var result = -1
                                                                            let spread =
                                                                                normArea * Double(windowSquares) - Double(windowSum) * Double(windowSum)
                                                                            if isLBP {
                                                                                // OpenCV's predictCategoricalStump: no variance normalisation.
                                                                                result = 1
                                                                                var tree = 0
                                                                                for (stage, (threshold, treeCount)) in stages.enumerated() {
                                                                                    var total: Float = 0
                                                                                    for t in tree..<tree + treeCount {
                                                                                        let stump = stumps[t]
                                                                                        let code = lbpCode(Int(stump.feature), base)
                                                                                        let inSet =
                                                                                            categories[t &* 8 &+ (code >> 5)] & (1 << Int32(code & 31)) != 0
                                                                                        total += inSet ? stump.below : stump.above
                                                                                    }
                                                                                    tree += treeCount
                                                                                    if total < threshold {
                                                                                        result = -stage
                                                                                        break
                                                                                    }
                                                                                }
                                                                            } else if spread > 0 {
                                                                                let normalizer = Float(1 / spread.squareRoot())
                                                                                if normArea * Double(normalizer) < 0.1 {
                                                                                    result = 1
                                                                                    var tree = 0
                                                                                    for (stage, (threshold, treeCount)) in stages.enumerated() {
                                                                                        var total = 0.0
                                                                                        for t in tree..<tree + treeCount {
                                                                                            let nodeBase = Int(treeNodeStart[t])
                                                                                            if isStumps {
                                                                                                let stump = stumps[t]
                                                                                                let value =
                                                                                                    feature(Int(stump.feature), base, tiltedBase) * normalizer
                                                                                                total += Double(
                                                                                                    value < stump.threshold ? stump.below : stump.above)
                                                                                            } else {
                                                                                                var node: Int32 = 0
                                                                                                repeat {
                                                                                                    let n = nodeBase + Int(node)
                                                                                                    let value =
                                                                                                        feature(Int(nodeFeature[n]), base, tiltedBase)
                                                                                                        * normalizer
                                                                                                    node = value < nodeThreshold[n] ? nodeLeft[n] : nodeRight[n]
                                                                                                } while node > 0
                                                                                                total += Double(leaves[Int(treeLeafStart[t]) - Int(node)])
                                                                                            }
                                                                                        }
                                                                                        tree += treeCount
                                                                                        if total < Double(threshold) {
                                                                                            result = -stage
                                                                                            break
                                                                                        }
                                                                                    }
                                                                                }
                                                                            }
                                                                            if result > 0 { scratch.hits.append(windows.hit(x: x, y: y)) }
                                                                            x += result == 0 ? 2 * step : step
                                                                        }
                                                                        y += step
                                                                    }
                                                                }
                                                            }
                                                        }
                                                    }
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// `scan` for the usual cascade (stumps on upright features, Haar's default), four
    /// windows of a row at a time (x, x + step, x + 2·step, x + 3·step): each stage's
    /// stumps are summed for the four side by side, in the scalar scan's order of
    /// operations, so every window's verdict is bit for bit the same. The scalar scan
    /// skips the window after one the first stage rejects; that window is computed here
    /// and its verdict dropped, and the four stop once none of the windows kept is in.
    /// Four lanes, the width of the SSE registers every x86-64 has (this is the detector
    /// for machines without AVX2): eight spilled registers and were slower.
    private func scanFourWide(_ windows: ScaleWindows, scratch: Scratch) {
        typealias Lanes = SIMD4<Float>
        let tables = scratch.tables
        let step = windows.step, columns = windows.columns, rows = windows.rows
        let stride = tables.stride
        let normArea = windows.normArea
        let n0 = windows.n0, n1 = windows.n1, n2 = windows.n2, n3 = windows.n3
        let lane = SIMD4<Int64>(0, 1, 2, 3)
        stages.withUnsafeBufferPointer { stages in
            stumps.withUnsafeBufferPointer { stumps in
                tables.sums.withUnsafeBufferPointer { sum in
                    tables.squares.withUnsafeBufferPointer { square in
                        scratch.featureOffsets.withUnsafeBufferPointer { offsets in
                            featureWeights.withUnsafeBufferPointer { weights in
                                /// The four values of `table` at `index`, `index + step`, … (step 1 or 2).
                                @inline(__always) func four<T: SIMDScalar>(_ table: UnsafeBufferPointer<T>, _ index: Int) -> SIMD4<T> {
                                    let raw = UnsafeRawPointer(table.baseAddress! + index)
                                    return step == 1 ? raw.loadUnaligned(as: SIMD4<T>.self) : raw.loadUnaligned(as: SIMD8<T>.self).evenHalf
                                }
                                @inline(__always) func rect(_ p: Int, _ base: Int) -> Lanes {
                                    Lanes(
                                        four(sum, base &+ Int(offsets[p])) &- four(sum, base &+ Int(offsets[p &+ 1]))
                                            &- four(sum, base &+ Int(offsets[p &+ 2])) &+ four(sum, base &+ Int(offsets[p &+ 3])))
                                }
                                for y in Swift.stride(from: 0, to: rows, by: step) {
                                    var x = 0
                                    while x < columns {
                                        let base = y * stride + x
                                        // OpenCV's setWindow, as in `scan`.
                                        let windowSum = SIMD4<Double>(
                                            four(sum, base + n0) &- four(sum, base + n1) &- four(sum, base + n2) &+ four(sum, base + n3))
                                        let windowSquares = SIMD4<Double>(
                                            four(square, base + n0) &- four(square, base + n1) &- four(square, base + n2)
                                                &+ four(square, base + n3))
                                        let spread = normArea * windowSquares - windowSum * windowSum
                                        let normalizer = Lanes(1 / spread.squareRoot())
                                        let inside = Int64(x) &+ lane &* Int64(step) .< Int64(columns)
                                        let scored = inside .& (spread .> 0) .& (normArea * SIMD4<Double>(normalizer) .< 0.1)
                                        // Four flat windows (a wall, a blank frame's edge): each visited, none scored.
                                        if !any(scored) {
                                            x += 4 * step
                                            continue
                                        }
                                        // The windows still in: after the last stage, the hits.
                                        var live = scored
                                        var kept = SIMDMask<SIMD4<Int64>>(repeating: false)
                                        var next = 4
                                        var tree = 0
                                        // At least one window is in at the first stage, which decides the windows visited.
                                        for stage in 0..<stages.count {
                                            if !any(live) { break }
                                            let (threshold, treeCount) = stages[stage]
                                            var total = SIMD4<Double>(repeating: 0)
                                            for t in tree..<tree + treeCount {
                                                let stump = stumps[t]
                                                let o = Int(stump.feature) &* 12, w = Int(stump.feature) &* 3
                                                var value = weights[w] * rect(o, base) + weights[w &+ 1] * rect(o &+ 4, base)
                                                if weights[w &+ 2] != 0 { value += weights[w &+ 2] * rect(o &+ 8, base) }
                                                value *= normalizer
                                                total += SIMD4<Double>(Lanes(repeating: stump.above).replacing(with: stump.below, where: value .< stump.threshold))
                                            }
                                            tree += treeCount
                                            let rejected = live .& (total .< Double(threshold))
                                            live .&= .!rejected
                                            if stage == 0 {
                                                // The windows the scalar scan visits: one step on, two after a
                                                // first-stage rejection; the block ends where they leave it.
                                                var k = 0
                                                while k < 4 && x &+ k &* step < columns {
                                                    kept[k] = true
                                                    k += scored[k] && rejected[k] ? 2 : 1
                                                }
                                                next = k
                                                live .&= kept
                                            }
                                        }
                                        for k in 0..<4 where live[k] { scratch.hits.append(windows.hit(x: x &+ k &* step, y: y)) }
                                        x += next * step
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
