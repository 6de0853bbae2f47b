import FaceDetection
import FoundationEssentials
import Glibc
import Geometry
import Imaging
import MonotonicTime

extension Bench {
    /// What a second detector thread costs in CPU when frames come at a camera's pace.
    struct ThreadCost {
        /// CPU seconds of this process per frame, detecting with one thread and with more.
        var oneThread: Double, moreThreads: Double
        /// Each round's CPU with more threads over its CPU with one.
        var roundRatios: [Double]

        var ratio: Double { moreThreads / oneThread }
    }

    /// Rounds of the paced comparison, and frames per detector in each.
    static let costRounds = 8, costFramesPerRound = 8

    /// A one-thread detector and one with more threads taking turns frame by frame,
    /// one detection every 1/30 s, this process's CPU over each frame's whole period
    /// (the helpers' parking included). The pipeline's own figure (`tools/cpu-bench`,
    /// one process per mode, seconds apart) moves by a fifth from run to run on this
    /// virtual machine, whose two cores run at different speeds for seconds at a
    /// time; here both detectors meet the same phases. Neither is pinned to a core,
    /// as in the pipeline: pinning the one-thread detector to each core in turn cost
    /// it 6-38% more CPU per detection (its data moving between cores, or the slower
    /// core) and flattered the ratio.
    static func threadCost(one: any FaceDetector, more: any FaceDetector, image: GrayImage) -> ThreadCost {
        var boxes: [Box] = []
        var oneTotal = 0.0, moreTotal = 0.0, roundRatios: [Double] = []
        var deadline = monotonicSeconds()
        for _ in 0..<costRounds {
            var cpu = [0.0, 0.0]
            for _ in 0..<costFramesPerRound {
                for (index, detector) in [one, more].enumerated() {
                    let start = processCPUSeconds()
                    detector.detectFaces(in: image, into: &boxes)
                    deadline += 1.0 / 30
                    let rest = deadline - monotonicSeconds()
                    if rest > 0 { usleep(UInt32(rest * 1e6)) } else { deadline = monotonicSeconds() }
                    cpu[index] += processCPUSeconds() - start
                }
            }
            oneTotal += cpu[0]
            moreTotal += cpu[1]
            roundRatios.append(cpu[1] / cpu[0])
        }
        let frames = Double(costRounds * costFramesPerRound)
        return ThreadCost(oneThread: oneTotal / frames, moreThreads: moreTotal / frames, roundRatios: roundRatios)
    }

    /// CPU time of every thread of this process so far.
    private static func processCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
