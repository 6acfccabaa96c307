#!/usr/bin/env python3
"""Seeds for scripts/fuzz-jpeg: what cameras send, good and broken (needs python3-pil).

usage: make-corpus.py FOLDER
"""
import io
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from pictures import strip_dht  # noqa: E402
from PIL import Image  # noqa: E402

out = sys.argv[1]
image = Image.radial_gradient("L").convert("RGB").resize((160, 120))
for quality in (50, 90):
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=quality)
    jpeg = buffer.getvalue()
    seeds = {"whole": jpeg, "truncated": jpeg[: len(jpeg) // 2], "padded": jpeg + b"\0" * 64, "no-huffman": strip_dht(jpeg)}
    for name, data in seeds.items():
        with open(os.path.join(out, f"{name}-q{quality}.jpg"), "wb") as f:
            f.write(data)
