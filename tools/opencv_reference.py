#!/usr/bin/env python3
"""OpenCV as the reference for sentry's pure-Swift cascade detector.

  fixtures  run cv2.CascadeClassifier.detectMultiScale on the photos in
            Tests/Fixtures/photos with several cascades and write the boxes
            to Tests/Fixtures/opencv-detections.json (the Swift tests compare
            sentry's boxes with these).
  bench     time detectMultiScale on raw gray frames (as sentry bench writes
            them) and print one JSON line: median and p99 ms per frame.

Needs `pip install "opencv-python-headless<5"` (OpenCV 5 has no
CascadeClassifier in its main module) and Debian's opencv-data cascades.
"""
import argparse
import json
import pathlib
import statistics
import sys
import time

try:
    import cv2
    import numpy as np
except ImportError:
    sys.exit('opencv_reference: OpenCV is missing; run `make setup` (pip install "opencv-python-headless<5")')

CASCADES = pathlib.Path("/usr/share/opencv4/haarcascades")
ROOT = pathlib.Path(__file__).resolve().parent.parent
PHOTOS = ROOT / "Tests/Fixtures/photos"

# (cascade file, photos): the default face cascade everywhere, a tree cascade,
# a cascade with tilted features on the cat, and LBP cascades.
CASES = [
    ("haarcascade_frontalface_default.xml", ["astronaut", "messi5", "camera", "coffee", "chelsea"]),
    ("haarcascade_frontalface_alt2.xml", ["astronaut", "messi5", "camera"]),
    ("haarcascade_frontalcatface_extended.xml", ["chelsea", "messi5", "astronaut"]),
    ("haarcascade_profileface.xml", ["astronaut", "camera"]),
    ("haarcascade_eye.xml", ["astronaut", "messi5"]),
    ("../lbpcascades/lbpcascade_frontalface_improved.xml", ["astronaut", "messi5", "camera", "coffee"]),
    ("../lbpcascades/lbpcascade_frontalcatface.xml", ["chelsea"]),
]


def detect(classifier, image, scale_factor, min_neighbors, min_size):
    boxes = classifier.detectMultiScale(image, scaleFactor=scale_factor, minNeighbors=min_neighbors,
                                        minSize=(min_size, min_size))
    return sorted([int(v) for v in box] for box in boxes)


def fixtures(args):
    cv2.setNumThreads(1)
    cases = []
    for cascade_name, photos in CASES:
        classifier = cv2.CascadeClassifier(str(CASCADES / cascade_name))
        if classifier.empty():
            sys.exit(f"opencv_reference: cannot load {CASCADES / cascade_name}; install opencv-data")
        # Every raw window (no grouping) as well, pixel for pixel: for LBP cascades, which find
        # few faces here, and for the default face cascade, which sentry scans four windows at a time.
        raw = "lbp" in cascade_name or cascade_name == "haarcascade_frontalface_default.xml"
        for photo in photos:
            image = cv2.imread(str(PHOTOS / f"{photo}.png"), cv2.IMREAD_GRAYSCALE)
            for neighbors in ([3, 0] if raw else [3]):
                cases.append({
                    "photo": f"{photo}.png", "cascade": cascade_name,
                    "scaleFactor": 1.1, "minNeighbors": neighbors, "minSize": 30,
                    "boxes": detect(classifier, image, 1.1, neighbors, 30),
                })
    out = {"generator": "tools/opencv_reference.py fixtures", "opencv": cv2.__version__, "cases": cases}
    pathlib.Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {len(cases)} cases to {args.out}")


def bench(args):
    cv2.setNumThreads(args.threads)
    classifier = cv2.CascadeClassifier(args.cascade)
    if classifier.empty():
        sys.exit(f"opencv_reference: cannot load cascade {args.cascade}")
    raw = np.fromfile(args.frames, dtype=np.uint8)
    frame_bytes = args.width * args.height
    count = raw.size // frame_bytes
    if count == 0:
        sys.exit(f"opencv_reference: {args.frames} holds no {args.width}x{args.height} frame")
    frames = raw[: count * frame_bytes].reshape(count, args.height, args.width)
    times, faces = [], []
    for frame in frames:
        start = time.perf_counter()
        boxes = detect(classifier, frame, args.scale_factor, args.min_neighbors, args.min_size)
        times.append((time.perf_counter() - start) * 1000)
        faces.append(boxes)
    times.sort()
    p99 = times[min(len(times) - 1, int(round(0.99 * (len(times) - 1))))]
    print(json.dumps({"frames": count, "threads": args.threads, "median_ms": statistics.median(times),
                      "p99_ms": p99, "boxes": faces}))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    f = sub.add_parser("fixtures")
    f.add_argument("--out", default=str(ROOT / "Tests/Fixtures/opencv-detections.json"))
    b = sub.add_parser("bench")
    b.add_argument("--frames", required=True)
    b.add_argument("--width", type=int, required=True)
    b.add_argument("--height", type=int, required=True)
    b.add_argument("--cascade", default=str(CASCADES / "haarcascade_frontalface_default.xml"))
    b.add_argument("--scale-factor", type=float, default=1.1)
    b.add_argument("--min-neighbors", type=int, default=3)
    b.add_argument("--min-size", type=int, default=30)
    b.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    {"fixtures": fixtures, "bench": bench}[args.command](args)


if __name__ == "__main__":
    main()
