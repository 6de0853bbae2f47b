import Expressions
import FaceDetection
import Geometry
import Imaging

/// The followed face on one frame: its points, where it is, what they read, its states.
public struct FollowedFace: Sendable {
    public var landmarks: FaceLandmarks
    /// Its box among the frame's faces (the mesh's bounds).
    public var box: Box
    /// The face is the tracker's target.
    public var isTarget: Bool
    public var reading: FaceReading
    public var states: Set<ExpressionState>
}

/// Reads the followed face's expression on every frame the detector found
/// its landmarks, keeping the states' hysteresis from frame to frame. The
/// pipeline owns it, so `--spare`, the hooks and the console see one reading.
struct ExpressionReader {
    private var states = ExpressionStates()

    /// The reading of `face` (nil, and every state over, when no face was followed).
    mutating func read(_ face: LandmarkedFace?, in image: GrayImage, target: Box?, at time: Double) -> FollowedFace? {
        guard let face else {
            forget()
            return nil
        }
        let reading = FaceReading(face.landmarks, in: image)
        let active = states.update(reading.scores, at: time)
        return FollowedFace(landmarks: face.landmarks, box: face.box, isTarget: target == face.box, reading: reading, states: active)
    }

    /// No face: every state ends, and every hold starts over.
    mutating func forget() {
        states = ExpressionStates()
    }
}
