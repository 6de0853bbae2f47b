import Logging
import SentryApp
import TestClips
import Tracking
import Turret

extension Clips {
    /// Runs `clip` against the simulated servo with the tracking `configure` sets.
    static func run(_ clip: String, _ configure: (inout TrackingSettings) -> Void, onExit: ExitCommand = .none) throws -> Runner.Summary {
        var options = RunOptions(camera: clip, serial: simulatedSerialName)
        options.showStatus = false
        options.keepResults = true
        options.onExit = onExit
        var tracking = TrackingSettings()
        configure(&tracking)
        options.settings = PipelineSettings(tracking: tracking)
        return try Runner.run(options, logger: Logger(label: "test"))
    }
}
