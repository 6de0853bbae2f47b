import Testing
@testable import FaceDetection

@Suite("Cascade files: numbers read as OpenCV writes them, anything else refused")
struct CascadeFileTests {
    /// A one-stage, one-tree, one-feature cascade with `threshold` as the tree node's threshold.
    static func cascade(threshold: String, leaves: String = "-1. 1.") -> [UInt8] {
        Array(
            """
            <?xml version="1.0"?>
            <opencv_storage><cascade><featureType>HAAR</featureType><width>24</width><height>24</height>
            <stages><_><stageThreshold>-1.5e+00</stageThreshold><weakClassifiers>
              <_><internalNodes>
                0 -1 0\t\(threshold)</internalNodes>
                <leafValues>\(leaves)</leafValues></_></weakClassifiers></_></stages>
            <features><_><rects><_>0 0 2 2 -1.</_><_>1 1 1 1 2.</_></rects></_></features></cascade></opencv_storage>
            """.utf8)
    }

    @Test("numbers in exponent, fraction and integer forms, split by any whitespace, are read exactly")
    func numbers() throws {
        let cascade = try HaarCascade(xml: Self.cascade(threshold: "-3.1511999666690826e-02", leaves: "\n  2.0875380635261536e-01 -1 "))
        let node = try #require(cascade.stages.first?.trees.first?.nodes.first)
        #expect(node.threshold == Float(-3.1511999666690826e-02))
        #expect(cascade.stages[0].trees[0].leaves == [Float(2.0875380635261536e-01), -1])
        #expect(cascade.stages[0].threshold == Float(-1.5) - HaarCascade.thresholdEpsilon)
        #expect(cascade.features[0].rects.map(\.weight) == [-1, 2])
    }

    @Test(
        "a token that is not wholly a number, or not finite, is an error naming it",
        arguments: ["0.5x", "x", "1e999", "inf", "nan", "0.5.5", "--1"])
    func notNumbers(token: String) {
        #expect(throws: CascadeFormatError("stage 0, tree 0: '\(token)' in <internalNodes> is not a number")) {
            try HaarCascade(xml: Self.cascade(threshold: token))
        }
    }

    @Test("a NUL byte inside a list of numbers is an error, not the end of the list")
    func nulByte() {
        #expect(throws: CascadeFormatError("stage 0, tree 0: 'NUL' in <internalNodes> is not a number")) {
            try HaarCascade(xml: Self.cascade(threshold: "0.5\u{0}7"))
        }
    }
}
