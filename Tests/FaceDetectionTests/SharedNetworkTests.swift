import FaceDetection
import Foundation
import Testing
import Waiting

@testable import TFLite

/// BlazeFace's networks run on several threads as chains of units (see `WorkerPool`),
/// with no wait at each unit's end: what that relies on, checked on the real models.
@Suite("BlazeFace's networks on several threads")
struct SharedNetworkTests {
    /// The plan's steps with places turned into addresses (never read), and its units.
    static func units(of variant: BlazeFaceDetector.Variant, lagging: Bool) throws -> (steps: [Step], units: [StepGroup]) {
        let path = try Fixtures.blazeFaceModel(variant)
        var planner = Planner(model: try TFLiteModel.load(path: path), path: path, lagging: lagging)
        let plan = try planner.plan()
        let steps = plan.steps.map { step in
            step.resolve { place in
                switch place {
                case .arena(let offset): UnsafeMutablePointer(bitPattern: 0x1000_0000 + 4 * offset)!
                case .constant(let offset): UnsafeMutablePointer(bitPattern: 0x4000_0000_0000 + 4 * offset)!
                }
            }
        }
        return (steps, StepGroup.groups(of: plan.steps, steps: steps))
    }

    /// Units that write where the unit just before them reads.
    static func overwrites(_ steps: [Step], _ units: [StepGroup]) -> [Int] {
        units.indices.dropFirst().filter { unit in
            units[unit].members.contains { writer in
                units[unit - 1].members.contains { reader in
                    zip(steps[reader].inputs, steps[reader].inputCounts).contains { steps[writer].written.overlaps($0..<$0 + $1) }
                }
            }
        }
    }

    @Test(
        "planned for threads, no unit writes where the unit before it reads, so a thread may run one unit ahead; planned for one, some do",
        arguments: [BlazeFaceDetector.Variant.fullRange, .shortRange])
    func unitsKeepTheirInputs(variant: BlazeFaceDetector.Variant) throws {
        let lagging = try Self.units(of: variant, lagging: true)
        #expect(Self.overwrites(lagging.steps, lagging.units).isEmpty)
        let tight = try Self.units(of: variant, lagging: false)
        #expect(!Self.overwrites(tight.steps, tight.units).isEmpty)
    }

    @Test(
        "a part of a unit is named to wait for every part of the unit before that wrote a row its windows read",
        arguments: [BlazeFaceDetector.Variant.fullRange, .shortRange])
    func needsCoverTheWindows(variant: BlazeFaceDetector.Variant) throws {
        let (steps, units) = try Self.units(of: variant, lagging: true)
        var windowed = 0
        for unit in units.indices.dropFirst() {
            let parts = min(units[unit].partCount, Interpreter.partsPerStep)
            let previousParts = min(units[unit - 1].partCount, Interpreter.partsPerStep)
            let needs = units[unit].needs(parts: parts, after: units[unit - 1], cutInto: previousParts, steps: steps)
            #expect(needs.count == parts)
            let all = UInt64(parts: 0..<previousParts)
            guard needs.contains(where: { $0 != all }) else { continue }
            windowed += 1
            // A 3x3 window over rows the unit before wrote: each part needs the parts holding its rows and the rows around them.
            for part in 0..<parts {
                let rows = Step.share(of: units[unit].partCount, parts: part..<part + 1, count: parts)
                for member in units[unit].members {
                    guard let geometry = (steps[member].kernel as? DepthwiseConv2D)?.geometry,
                        units[unit - 1].members.contains(where: { steps[$0].output == steps[member].inputs[0] })
                    else { continue }
                    let first = max(rows.lowerBound * geometry.window.strideY - geometry.padTop, 0)
                    let last = min((rows.upperBound - 1) * geometry.window.strideY - geometry.padTop + geometry.window.height - 1, geometry.inputHeight - 1)
                    for row in [first, last] {
                        let writer = (0..<previousParts).first {
                            Step.share(of: units[unit - 1].partCount, parts: $0..<$0 + 1, count: previousParts).contains(row)
                        }!
                        #expect(needs[part] >> UInt64(writer) & 1 == 1, "unit \(unit) part \(part) reads row \(row) of part \(writer)")
                    }
                }
            }
        }
        #expect(windowed > 5)
    }

    @Test("on 2, 3 and 4 threads the full-range network gives one thread's outputs bit for bit, run after run on changing inputs")
    func sameOutputsOnEveryThreadCount() throws {
        let path = try Fixtures.blazeFaceModel(.fullRange)
        let model = try TFLiteModel.load(path: path)
        let one = try Interpreter(model: model, path: path)
        let shared = try [2, 3, 4].map { try Interpreter(model: model, path: path, threads: $0) }
        var seed: UInt32 = 1
        for run in 0..<60 {
            let input = one.input.indices.map { _ in
                seed = seed &* 1_664_525 &+ 1_013_904_223
                return Float(seed >> 8) / Float(1 << 24) * 2 - 1
            }
            // Each interpreter is given the input afresh: a run reuses its space.
            _ = one.input.update(fromContentsOf: input)
            one.invoke()
            for interpreter in shared {
                _ = interpreter.input.update(fromContentsOf: input)
                interpreter.invoke()
                for output in one.outputShapes.indices {
                    // The first value that differs, if any (comparing whole arrays, a failure would print thousands).
                    let differs = zip(interpreter.output(output), one.output(output)).enumerated().first { $0.element.0 != $0.element.1 }
                    #expect(
                        differs == nil,
                        "\(interpreter.threads) threads, run \(run), output \(output): value \(differs.map { "\($0.offset): \($0.element)" } ?? "")")
                }
            }
            // Now and then a frame's gap: until every helper has spun out and parked; the next run wakes them.
            if run % 10 == 0 { #expect(eventually { shared.allSatisfy { $0.pool.map { $0.parkedHelpers == $0.helpers } ?? false } }) }
        }
    }
}
