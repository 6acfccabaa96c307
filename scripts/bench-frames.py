#!/usr/bin/env python3
"""Makes the benchmark's input frames from a natural photograph.

Colour bars compress unrealistically well, so the encoder benchmark uses a
photograph: scikit-image's wheel on PyPI carries `motorcycle_left.png`
(741x500). It is fetched with `pip download` (not installed), scaled to each
benchmark size with Lanczos, and converted to limited-range BT.601 YUYV, as a
webcam sends it. Scaling up makes the large frames smoother than a native 4K
photo; camd's path and the floor it is compared with see the same frames.

usage: bench-frames.py OUT_DIR  → OUT_DIR/motorcycle-WxH.yuyv
"""
import glob
import io
import os
import subprocess
import sys
import zipfile

from PIL import Image

SIZES = [(640, 480), (1280, 720), (1920, 1080), (3840, 2160)]
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
if all(os.path.exists(os.path.join(out, f"motorcycle-{w}x{h}.yuyv")) for w, h in SIZES):
    sys.exit(0)

wheels = glob.glob(os.path.join(out, "scikit_image-*.whl"))
if not wheels:
    python = "python3"
    subprocess.run([python, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", "-d", out, "scikit-image"],
                   check=True)
    wheels = glob.glob(os.path.join(out, "scikit_image-*.whl"))
photo = Image.open(io.BytesIO(zipfile.ZipFile(wheels[0]).read("skimage/data/motorcycle_left.png"))).convert("RGB")

for width, height in SIZES:
    # Fill the frame (crop the photo's aspect to the frame's), then convert.
    scale = max(width / photo.width, height / photo.height)
    resized = photo.resize((round(photo.width * scale), round(photo.height * scale)), Image.LANCZOS)
    left, top = (resized.width - width) // 2, (resized.height - height) // 2
    frame = resized.crop((left, top, left + width, top + height))
    ycc = frame.convert("YCbCr")  # BT.601, full range
    y, cb, cr = (list(band.getdata()) for band in ycc.split())
    limit_y = bytes(round(16 + v * 219 / 255) for v in range(256))
    limit_c = bytes(round(16 + v * 224 / 255) for v in range(256))
    data = bytearray(width * height * 2)
    for i in range(0, width * height, 2):
        o = i * 2
        data[o] = limit_y[y[i]]
        data[o + 1] = limit_c[(cb[i] + cb[i + 1]) // 2]
        data[o + 2] = limit_y[y[i + 1]]
        data[o + 3] = limit_c[(cr[i] + cr[i + 1]) // 2]
    with open(os.path.join(out, f"motorcycle-{width}x{height}.yuyv"), "wb") as f:
        f.write(data)
    print(f"bench-frames: motorcycle-{width}x{height}.yuyv", file=sys.stderr)
