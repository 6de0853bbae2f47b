import Imaging
import Letterboxing
import MonotonicTime
import TextOutput

/// The letterbox in colour against gray (`sentry bench`'s "letterbox in turns").
extension Bench {
    /// The letterbox in colour and in gray on each of `frames` in turn, and again with
    /// the chroma as a YUYV camera's when the frames are 4:2:0.
    static func colourLetterboxReport(_ frames: [Frame], size: Int) {
        let (colour, gray) = letterboxTimesInTurns(frames, size: size)
        print(
            String(
                printf: "  letterbox in turns: colour %.3f ms, gray %.3f ms (%+.3f ms; medians, the two on each frame in turn)",
                colour.median, gray.median, colour.median - gray.median))
        print(
            String(
                printf: "  letterbox fastest: colour %.3f ms, gray %.3f ms (%+.3f ms)", colour.fastest, gray.fastest,
                colour.fastest - gray.fastest))
        // Files decode to 4:2:0; a YUYV camera's chroma is 4:2:2, twice the rows to shrink down.
        guard frames.first?.chroma?.layout == .halfBoth else { return }
        let yuyvLike = frames.map { frame in
            var frame = frame
            frame.chroma = frame.chroma.map { rowsDoubled($0, lumaWidth: frame.image.width, lumaHeight: frame.image.height) }
            return frame
        }
        let (colour422, gray422) = letterboxTimesInTurns(yuyvLike, size: size)
        print(
            String(
                printf: "  letterbox in turns, 4:2:2 (chroma rows doubled, as from YUYV): colour %.3f ms, gray %.3f ms (%+.3f ms)",
                colour422.median, gray422.median, colour422.median - gray422.median))
    }

    /// The letterbox of each frame in colour and in gray, in turns (so that both
    /// see the same caches and clock), three rounds. Which goes first alternates from
    /// frame to frame: the second finds the frame's luma in the cache.
    static func letterboxTimesInTurns(_ frames: [Frame], size: Int) -> (colour: Stats, gray: Stats) {
        var letterbox = Letterbox(size: size, channels: 3)
        var tensor = [Float](repeating: 0, count: size * size * 3)
        var colour: [Double] = [], gray: [Double] = []
        for turn in 0..<3 * frames.count {
            let frame = frames[turn % frames.count]
            tensor.withUnsafeMutableBufferPointer { tensor in
                func timed(inColour: Bool) -> Double {
                    let start = monotonicSeconds()
                    letterbox.fill(tensor, from: frame.image, chroma: inColour ? frame.chroma : nil)
                    return monotonicSeconds() - start
                }
                if turn.isMultiple(of: 2) {
                    colour.append(timed(inColour: true))
                    gray.append(timed(inColour: false))
                } else {
                    gray.append(timed(inColour: false))
                    colour.append(timed(inColour: true))
                }
            }
        }
        return (Stats(seconds: colour), Stats(seconds: gray))
    }

    /// 4:2:0 chroma as 4:2:2: each row twice.
    static func rowsDoubled(_ chroma: ChromaPlanes, lumaWidth: Int, lumaHeight: Int) -> ChromaPlanes {
        var doubled = ChromaPlanes(layout: .halfWidth, lumaWidth: lumaWidth, lumaHeight: lumaHeight, range: chroma.range)
        for y in 0..<doubled.height {
            let from = y / 2 * chroma.width, to = y * doubled.width
            doubled.u[to..<to + chroma.width] = chroma.u[from..<from + chroma.width]
            doubled.v[to..<to + chroma.width] = chroma.v[from..<from + chroma.width]
        }
        return doubled
    }
}
