import Geometry
import Imaging

/// Everything read from one face's points and the frame behind them: the measures,
/// the mouth's look, the six scores, the head's pose and the gaze. The one place
/// they are put together, for `sentry faces` and the run alike.
public struct FaceReading: Sendable {
    public var measures: FaceMeasures
    /// nil when the mouth is too small to read (the scores then take `.neutral`).
    public var appearance: MouthAppearance?
    public var scores: ExpressionScores
    public var pose: HeadPose
    public var gaze: Gaze

    public init(_ face: FaceLandmarks, in image: GrayImage, calibration: ExpressionCalibration = .standard) {
        measures = FaceMeasures(face)
        appearance = MouthAppearance(face, in: image)
        scores = ExpressionScores(measures, appearance: appearance ?? .neutral, calibration: calibration)
        pose = HeadPose(FaceFrame(face))
        gaze = Gaze(face)
    }
}
