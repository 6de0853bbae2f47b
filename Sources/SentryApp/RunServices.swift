/// The parts of a run that own a thread, a device or a connection (the
/// simulated servo, the link, the console, the camera, hot-plug, the hook
/// runners, the event writer, MQTT): each is registered here as it starts,
/// and this one owner stops them in the reverse order, however the run ends
/// (its end, a signal, an error thrown anywhere in `Runner.run`). A part is
/// therefore stopped before what it was started on and uses: the event
/// writer, which publishes each face to MQTT and the console, before either.
final class RunServices {
    private var stops: [() -> Void] = []

    /// A part has started; `stop` ends it (its threads joined, its queue written).
    func started(stop: @escaping () -> Void) { stops.append(stop) }

    /// Stops every part, the last started first; a second call does nothing.
    func stopAll() {
        while let stop = stops.popLast() { stop() }
    }
}
