import ArgumentParser
import Detectors
import FoundationEssentials
import SentryApp
import Tracking
import Turret
import TextOutput

extension ExitCommand: ExpressibleByArgument {}
extension Mount: ExpressibleByArgument {}
extension SearchPolicy: ExpressibleByArgument {}
extension DetectorOptions.Kind: ExpressibleByArgument {}

/// `--detect-fps`: a rate, or every frame in full.
enum DetectRate: ExpressibleByArgument, Equatable, CustomStringConvertible {
    case every
    case perSecond(Double)

    init?(argument: String) {
        if argument == "every" {
            self = .every
        } else if let rate = Double(argument) {
            self = .perSecond(rate)
        } else {
            return nil
        }
    }

    var perSecond: Double? {
        if case .perSecond(let rate) = self { rate } else { nil }
    }

    var description: String {
        switch self {
        case .every: "every"
        // %g, not Int(rate): "inf" and 1e300 are values a user can type, and Int() of them traps.
        case .perSecond(let rate): String(printf: "%g", rate)
        }
    }

    static let range = 0.5...240
}

/// `on` or `off`.
enum Switch: String, ExpressibleByArgument, CaseIterable {
    case on, off
}

/// Refuses `value` outside `range`, naming the flag and its unit.
func checkRange(_ value: Double, _ flag: String, _ range: ClosedRange<Double>, _ unit: String) throws(ValidationError) {
    guard value.isFinite, range.contains(value) else {
        throw ValidationError(
            "--\(flag) \(String(printf: "%g", value)) must be between \(String(printf: "%g", range.lowerBound)) and \(String(printf: "%g", range.upperBound))\(unit)")
    }
}
