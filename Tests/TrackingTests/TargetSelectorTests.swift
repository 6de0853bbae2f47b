import Geometry
import Testing
import Tracking

@Suite("Target selection (SPEC §1.3)")
struct TargetSelectorTests {
    @Test("the largest box wins")
    func largest() {
        var selector = TargetSelector()
        let big = Box(x: 300, y: 10, width: 80, height: 80)
        #expect(selector.select(from: [Box(x: 0, y: 0, width: 40, height: 40), big, Box(x: 500, y: 0, width: 79, height: 80)]) == big)
    }

    @Test("among equal areas the box nearest the previous target wins")
    func tieNearestPrevious() {
        var selector = TargetSelector()
        _ = selector.select(from: [Box(x: 500, y: 100, width: 50, height: 50)])
        let left = Box(x: 10, y: 100, width: 40, height: 40), right = Box(x: 480, y: 110, width: 40, height: 40)
        #expect(selector.select(from: [left, right]) == right)
    }

    @Test("without a previous target the first of equal boxes wins")
    func tieFirst() {
        var selector = TargetSelector()
        let first = Box(x: 400, y: 0, width: 40, height: 40), second = Box(x: 10, y: 0, width: 40, height: 40)
        #expect(selector.select(from: [first, second]) == first)
    }

    @Test("equally near boxes fall back to the first")
    func tieEquallyNear() {
        var selector = TargetSelector()
        _ = selector.select(from: [Box(x: 100, y: 0, width: 20, height: 20)])
        let a = Box(x: 50, y: 0, width: 20, height: 20), b = Box(x: 150, y: 0, width: 20, height: 20)
        #expect(selector.select(from: [b, a]) == b)
    }

    @Test("no boxes forgets the previous target")
    func noBoxes() {
        var selector = TargetSelector()
        _ = selector.select(from: [Box(x: 500, y: 100, width: 50, height: 50)])
        #expect(selector.select(from: []) == nil)
        #expect(selector.previous == nil)
    }
}
