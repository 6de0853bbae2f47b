import FaceDetection
import Geometry
import Imaging
import SentryApp
import Serial
import Testing
import Tracking
import TurretLinks
import TurretProtocol
import Video

/// Records what the pipeline writes.
final class RecordingOutput: CommandOutput {
    var sent: [Command] = []
    var bytesWritten: Int { sent.map(\.description).joined().utf8.count }
    var state: LinkState { .ok }
    func send(_ commands: [Command]) throws(LinkError) { sent += commands }
    func flush(timeout: Double) throws(LinkError) {}
    func takeReconnected() -> Bool { false }
}

/// One face at a fixed place in every frame.
final class FixedFaces: FaceDetector {
    var faces: [Box]
    init(_ faces: [Box]) { self.faces = faces }
    func detectFaces(in image: GrayImage, into boxes: inout [Box]) { boxes = faces }
}
