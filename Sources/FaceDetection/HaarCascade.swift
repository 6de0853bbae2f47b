import CNumberReading
import FoundationEssentials
import Glibc
import MiniXML
import TextOutput

/// A boosted Haar cascade read from an OpenCV `FileStorage` XML file (the
/// format of `/usr/share/opencv4/haarcascades/*.xml`).
///
/// The cascade is a list of stages; each stage sums the leaf values of its
/// decision trees (stumps are trees of one node) and rejects the window when
/// the sum falls below the stage threshold.
public struct HaarCascade: Sendable {
    /// One rectangle of a Haar feature, in window pixels, with its weight.
    public struct WeightedRect: Sendable, Equatable {
        public var x, y, width, height: Int
        public var weight: Float
    }

    /// A Haar feature: two or three weighted rectangles, upright or rotated 45°.
    /// An LBP feature: one rectangle, the size and origin of a 3x3 grid of blocks.
    public struct Feature: Sendable {
        public var rects: [WeightedRect]
        public var tilted: Bool
    }

    /// A decision tree node: compare a feature to `threshold`, go `left` if
    /// below; a child `> 0` is another node of the tree, `<= 0` the leaf `-child`.
    public struct Node: Sendable {
        public var featureIndex: Int
        public var threshold: Float
        public var left: Int
        public var right: Int
        /// LBP: the 256-bit set of codes that go left, as eight 32-bit words; empty for Haar.
        public var categories: [Int32] = []
    }

    public struct Tree: Sendable {
        public var nodes: [Node]
        public var leaves: [Float]
    }

    public struct Stage: Sendable {
        /// The stage threshold as OpenCV uses it (the file's value minus 1e-5).
        public var threshold: Float
        public var trees: [Tree]
    }

    /// The detection window the cascade was trained on.
    public var windowWidth: Int
    public var windowHeight: Int
    public var stages: [Stage]
    public var features: [Feature]
    /// Local binary pattern features and categorical stumps, instead of Haar features.
    public var isLBP = false

    public var hasTiltedFeatures: Bool { features.contains { $0.tilted } }

    /// OpenCV subtracts this from every stage threshold when it loads a cascade.
    static let thresholdEpsilon: Float = 1e-5
}

extension HaarCascade {
    /// Parses cascade XML text. Errors describe what is wrong with the content.
    public init(xml: [UInt8]) throws(CascadeFormatError) {
        let root: MiniXMLElement
        do {
            root = try MiniXML.parse(xml).root
        } catch {
            throw CascadeFormatError("not well-formed XML (\(error))")
        }
        guard root.name == "opencv_storage" else {
            throw CascadeFormatError("root element is <\(root.name)>, not <opencv_storage>")
        }
        guard let cascade = root.child("cascade") else {
            if root.children.count == 1, let only = root.children.first {
                throw CascadeFormatError("<\(only.name)> is an old-format cascade; only the OpenCV 2.4+ format (<cascade>) is supported")
            }
            throw CascadeFormatError("no <cascade> element")
        }
        let featureType = cascade.child("featureType")?.text.trimmed() ?? "HAAR"
        guard featureType == "HAAR" || featureType == "LBP" else {
            throw CascadeFormatError("feature type \(featureType) is not supported (only HAAR and LBP)")
        }
        isLBP = featureType == "LBP"
        windowWidth = try Self.integer(cascade, "width")
        windowHeight = try Self.integer(cascade, "height")
        guard (4...1024).contains(windowWidth), (4...1024).contains(windowHeight) else {
            throw CascadeFormatError("window size \(windowWidth)x\(windowHeight) is out of range")
        }
        features =
            isLBP
            ? try Self.lbpFeatures(cascade.child("features"), width: windowWidth, height: windowHeight)
            : try Self.features(cascade.child("features"), width: windowWidth, height: windowHeight)
        stages = try Self.stages(cascade.child("stages"), featureCount: features.count, categorical: isLBP)
    }

    private static func integer(_ parent: MiniXMLElement, _ name: String) throws(CascadeFormatError) -> Int {
        guard let element = parent.child(name) else { throw CascadeFormatError("missing <\(name)>") }
        guard let value = Int(element.text.trimmed()) else {
            throw CascadeFormatError("<\(name)> is not an integer")
        }
        return value
    }

    private static func numbers(_ element: MiniXMLElement?, _ name: String, context: String) throws(CascadeFormatError) -> [Double] {
        guard let element else { throw CascadeFormatError("\(context): missing <\(name)>") }
        var values: [Double] = []
        // strtod straight on the file's bytes (in the C locale, as Swift's Double(String) reads):
        // no String per element or token (those copies were most of the load time).
        let failure: String? = element.withText { text -> String? in
            guard var cursor = text.baseAddress else { return nil }
            let end = cursor + text.count
            values.reserveCapacity(text.count / 2 + 1)  // a number takes at least two bytes with its space
            while true {
                while cursor < end, MiniXML.isWhitespace(cursor.pointee) { cursor += 1 }
                if cursor == end { return nil }
                // A NUL byte in the file (which would hide what follows it from strtod).
                if cursor.pointee == 0 { return "NUL" }
                var stop: UnsafeMutablePointer<CChar>?
                let value = UnsafeRawPointer(cursor).withMemoryRebound(to: CChar.self, capacity: 1) { strtod_l($0, &stop, cLocale) }
                let next = UnsafeRawPointer(stop!).assumingMemoryBound(to: UInt8.self)
                let ended = next == end || next.pointee == 0 || MiniXML.isWhitespace(next.pointee)
                guard next > cursor, ended, value.isFinite else {
                    var tokenEnd = cursor
                    while tokenEnd < end, tokenEnd.pointee != 0, !MiniXML.isWhitespace(tokenEnd.pointee) { tokenEnd += 1 }
                    return String(decoding: UnsafeBufferPointer(start: cursor, count: tokenEnd - cursor), as: UTF8.self)
                }
                values.append(value)
                cursor = next
            }
        }
        if let token = failure {
            throw CascadeFormatError("\(context): '\(token.prefix(20))' in <\(name)> is not a number")
        }
        return values
    }

    /// The C locale, for reading numbers as the file writes them whatever the user's locale.
    nonisolated(unsafe) private static let cLocale = sentry_c_locale()

    private static func features(_ element: MiniXMLElement?, width: Int, height: Int) throws(CascadeFormatError) -> [Feature] {
        guard let element, !element.children.isEmpty else { throw CascadeFormatError("no <features>") }
        var features: [Feature] = []
        for (index, node) in element.children.enumerated() {
            let context = "feature \(index)"
            guard let rectsNode = node.child("rects"), (1...3).contains(rectsNode.children.count) else {
                throw CascadeFormatError("\(context): needs 1 to 3 <rects>")
            }
            let tilted = (node.child("tilted")?.text.trimmed() ?? "0") != "0"
            var rects: [WeightedRect] = []
            for rectNode in rectsNode.children {
                let v = try numbers(rectNode, "rects", context: context)
                guard v.count == 5, v[0...3].allSatisfy({ $0 == $0.rounded() && abs($0) <= 4096 }) else {
                    throw CascadeFormatError("\(context): a rectangle needs 'x y width height weight'")
                }
                let rect = WeightedRect(x: Int(v[0]), y: Int(v[1]), width: Int(v[2]), height: Int(v[3]), weight: Float(v[4]))
                let inside =
                    tilted
                    ? rect.width >= 0 && rect.height >= 0 && rect.x - rect.height >= 0 && rect.x + rect.width <= width
                        && rect.y >= 0 && rect.y + rect.width + rect.height <= height
                    : rect.x >= 0 && rect.y >= 0 && rect.width >= 0 && rect.height >= 0
                        && rect.x + rect.width <= width && rect.y + rect.height <= height
                guard inside else { throw CascadeFormatError("\(context): a rectangle lies outside the \(width)x\(height) window") }
                rects.append(rect)
            }
            features.append(Feature(rects: rects, tilted: tilted))
        }
        return features
    }

    /// LBP features: `<rect>x y width height</rect>`, a 3x3 grid of such blocks inside the window.
    private static func lbpFeatures(_ element: MiniXMLElement?, width: Int, height: Int) throws(CascadeFormatError) -> [Feature] {
        guard let element, !element.children.isEmpty else { throw CascadeFormatError("no <features>") }
        var features: [Feature] = []
        for (index, node) in element.children.enumerated() {
            let context = "feature \(index)"
            let v = try numbers(node.child("rect"), "rect", context: context)
            guard v.count == 4, v.allSatisfy({ $0 == $0.rounded() && abs($0) <= 4096 }) else {
                throw CascadeFormatError("\(context): an LBP <rect> needs 'x y width height'")
            }
            let rect = WeightedRect(x: Int(v[0]), y: Int(v[1]), width: Int(v[2]), height: Int(v[3]), weight: 0)
            guard rect.x >= 0, rect.y >= 0, rect.width > 0, rect.height > 0,
                rect.x + 3 * rect.width <= width, rect.y + 3 * rect.height <= height
            else {
                throw CascadeFormatError("\(context): the 3x3 blocks lie outside the \(width)x\(height) window")
            }
            features.append(Feature(rects: [rect], tilted: false))
        }
        return features
    }

    private static func stages(_ element: MiniXMLElement?, featureCount: Int, categorical: Bool) throws(CascadeFormatError) -> [Stage] {
        guard let element, !element.children.isEmpty else { throw CascadeFormatError("no <stages>") }
        var stages: [Stage] = []
        for (stageIndex, stageNode) in element.children.enumerated() {
            let context = "stage \(stageIndex)"
            let threshold = try numbers(stageNode.child("stageThreshold"), "stageThreshold", context: context)
            guard threshold.count == 1 else { throw CascadeFormatError("\(context): <stageThreshold> needs one number") }
            guard let weakNode = stageNode.child("weakClassifiers"), !weakNode.children.isEmpty else {
                throw CascadeFormatError("\(context): no <weakClassifiers>")
            }
            var trees: [Tree] = []
            for (treeIndex, treeNode) in weakNode.children.enumerated() {
                let treeContext = "\(context), tree \(treeIndex)"
                let splits = try numbers(treeNode.child("internalNodes"), "internalNodes", context: treeContext)
                let leaves = try numbers(treeNode.child("leafValues"), "leafValues", context: treeContext)
                if categorical {
                    trees.append(try lbpStump(splits, leaves, featureCount: featureCount, context: treeContext))
                    continue
                }
                guard !splits.isEmpty, splits.count % 4 == 0 else {
                    throw CascadeFormatError(
                        "\(treeContext): <internalNodes> needs groups of 'left right feature threshold' (categorical LBP splits are not supported)")
                }
                let nodeCount = splits.count / 4
                guard leaves.count == nodeCount + 1 else {
                    throw CascadeFormatError("\(treeContext): \(nodeCount) nodes need \(nodeCount + 1) <leafValues>, found \(leaves.count)")
                }
                var nodes: [Node] = []
                for n in 0..<nodeCount {
                    let v = splits[n * 4..<n * 4 + 4].map { $0 }
                    guard v[0...2].allSatisfy({ $0 == $0.rounded() && abs($0) < 1e6 }) else {
                        throw CascadeFormatError("\(treeContext): node indices must be integers")
                    }
                    let node = Node(featureIndex: Int(v[2]), threshold: Float(v[3]), left: Int(v[0]), right: Int(v[1]))
                    guard (0..<featureCount).contains(node.featureIndex) else {
                        throw CascadeFormatError("\(treeContext): feature \(node.featureIndex) does not exist (\(featureCount) features)")
                    }
                    // Children: a later node of this tree (so no cycles), or a leaf.
                    for child in [node.left, node.right] where child > 0 ? !(n + 1..<nodeCount).contains(child) : -child > nodeCount {
                        throw CascadeFormatError("\(treeContext): node \(n) points to a missing child \(child)")
                    }
                    nodes.append(node)
                }
                trees.append(Tree(nodes: nodes, leaves: leaves.map { Float($0) }))
            }
            stages.append(Stage(threshold: Float(threshold[0]) - thresholdEpsilon, trees: trees))
        }
        return stages
    }
}

extension HaarCascade {
    /// An LBP weak classifier: `left right feature` and eight category words, two leaves.
    private static func lbpStump(
        _ splits: [Double], _ leaves: [Double], featureCount: Int,
        context: String
    ) throws(CascadeFormatError) -> Tree {
        guard splits.count == 11, leaves.count == 2 else {
            throw CascadeFormatError("\(context): an LBP tree needs one node 'left right feature' + 8 category words, and 2 <leafValues>")
        }
        guard splits.allSatisfy({ $0 == $0.rounded() && abs($0) <= Double(UInt32.max) }) else {
            throw CascadeFormatError("\(context): LBP node values must be integers")
        }
        let feature = Int(splits[2])
        guard (0..<featureCount).contains(feature) else {
            throw CascadeFormatError("\(context): feature \(feature) does not exist (\(featureCount) features)")
        }
        let words = splits[3...].map { Int32(truncatingIfNeeded: Int64($0)) }
        return Tree(
            nodes: [Node(featureIndex: feature, threshold: 0, left: 0, right: -1, categories: words)],
            leaves: leaves.map { Float($0) })
    }
}

/// What is wrong inside cascade XML.
public struct CascadeFormatError: Error, CustomStringConvertible, Equatable {
    public var description: String
    init(_ description: String) { self.description = description }
}
