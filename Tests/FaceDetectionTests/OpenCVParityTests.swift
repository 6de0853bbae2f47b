import FaceDetection
import Geometry
import Testing

@Suite("Cascade detection matches OpenCV's detectMultiScale")
struct OpenCVParityTests {
    @Test("same faces as OpenCV: same count, every box matched at IoU >= 0.8", arguments: try Fixtures.openCVDetections())
    func sameFacesAsOpenCV(_ reference: Fixtures.DetectionCase) throws {
        let cascade = try Fixtures.haarCascade(reference.cascade)
        let detector = CascadeDetector(
            cascade: cascade,
            parameters: CascadeParameters(scaleFactor: reference.scaleFactor, minNeighbors: reference.minNeighbors, minSize: reference.minSize)
        )
        let found = detector.detectFaces(in: try Fixtures.grayImage(Fixtures.photo(reference.photo)))
        let expected = reference.boxes.map { Box(x: $0[0], y: $0[1], width: $0[2], height: $0[3]) }
        #expect(found.count == expected.count, "found \(found), OpenCV \(expected)")
        if reference.minNeighbors == 0 {
            // Ungrouped: every raw window, pixel for pixel.
            #expect(Set(found) == Set(expected))
        }
        for box in expected {
            let best = found.map { $0.intersectionOverUnion(box) }.max() ?? 0
            #expect(best >= 0.8, "OpenCV's \(box) matched only at IoU \(best) among \(found)")
        }
    }

    @Test("two threads find exactly the windows one thread finds", arguments: ["messi5.png", "astronaut.png"])
    func threadsAgree(photo: String) throws {
        let cascade = try Fixtures.haarCascade("haarcascade_frontalface_default.xml")
        let image = try Fixtures.grayImage(Fixtures.photo(photo))
        let one = CascadeDetector(cascade: cascade).rawDetections(in: image)
        let two = CascadeDetector(cascade: cascade, threads: 2).rawDetections(in: image)
        #expect(!one.isEmpty && one == two)
    }
}
