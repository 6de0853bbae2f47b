#!/usr/bin/env python3
"""OpenCV's Y'CbCr to RGB as the reference for sentry's colour conversion.

  colour_reference.py FORMAT WIDTH HEIGHT INPUT OUTPUT

reads one raw frame INPUT and writes its RGB (three bytes a pixel) to OUTPUT.
FORMAT is a V4L2 fourcc in BT.601 limited range, converted by OpenCV's own
code for it (each chroma sample over the pixels it covers): YUYV, YU12, YV12,
NV12; or J444, J422, J420: full-range planes (Y, Cb, Cr, as JPEG stores
them), the chroma repeated over its pixels, converted by OpenCV's YCrCb
(JPEG's equations).
"""
import sys

try:
    import cv2
    import numpy as np
except ImportError:
    sys.exit("colour_reference: OpenCV is missing; run tools/setup")

LIMITED = {"YUYV": cv2.COLOR_YUV2RGB_YUYV, "YU12": cv2.COLOR_YUV2RGB_I420,
           "YV12": cv2.COLOR_YUV2RGB_YV12, "NV12": cv2.COLOR_YUV2RGB_NV12}
FULL = {"J444": (1, 1), "J422": (2, 1), "J420": (2, 2)}


def main():
    if len(sys.argv) != 6 or sys.argv[1] not in {**LIMITED, **FULL}:
        sys.exit(__doc__)
    fourcc, width, height, source, target = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
    data = np.fromfile(source, np.uint8)
    if fourcc == "YUYV":
        rgb = cv2.cvtColor(data.reshape(height, width, 2), LIMITED[fourcc])
    elif fourcc in LIMITED:
        rgb = cv2.cvtColor(data.reshape(height * 3 // 2, width), LIMITED[fourcc])
    else:
        across, down = FULL[fourcc]
        chroma = (-(-width // across), -(-height // down))
        luma = data[:width * height].reshape(height, width)
        planes = data[width * height:].reshape(2, chroma[1], chroma[0])
        cb, cr = (np.repeat(np.repeat(plane, down, axis=0), across, axis=1)[:height, :width] for plane in planes)
        rgb = cv2.cvtColor(np.dstack([luma, cr, cb]), cv2.COLOR_YCrCb2RGB)
    rgb.astype(np.uint8).tofile(target)


main()
