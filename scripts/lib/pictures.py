"""Pictures for the checks that run camd as a process (needs PIL: python3-pil): vivid's
colour bars read back from a JPEG, and a JPEG's header segments walked (the one
walker the scripts share: mjpeg-checks.py, scripts/fuzz/make-corpus.py).

The Swift tests read bars the same way (Tests/VividTests/VividSupport.swift's
Vivid.barColours).
"""
import io

from PIL import Image

# vivid's 75% bars as full-range RGB, left to right: white, yellow, cyan, green, magenta, red, blue, black.
BARS = [(191, 191, 191), (191, 191, 0), (0, 191, 191), (0, 191, 0), (191, 0, 191), (191, 0, 0), (0, 0, 191), (0, 0, 0)]


def bars(jpeg):
    """(size, the average colour of each of the eight bars on a row below vivid's text)."""
    image = Image.open(io.BytesIO(jpeg)).convert("RGB")
    w, h = image.size
    row = h * 3 // 5
    colours = []
    for bar in range(8):
        cx = (2 * bar + 1) * w // 16
        pixels = [image.getpixel((x, y)) for x in range(cx - 3, cx + 4) for y in range(row - 3, row + 4)]
        colours.append(tuple(sum(p[i] for p in pixels) // len(pixels) for i in range(3)))
    return image.size, colours


def bars_ok(colours, tolerance=10):
    return all(abs(a - b) <= tolerance for got, want in zip(colours, BARS) for a, b in zip(got, want))


def decode(data):
    """(size, "") if PIL decodes every pixel, else (None, why)."""
    try:
        image = Image.open(io.BytesIO(data))
        image.load()
        return image.size, ""
    except Exception as error:  # PIL raises OSError, SyntaxError, ValueError...
        return None, f"{type(error).__name__}: {error}"


def segments(data):
    """(marker, offset) of each header segment up to and including SOS; stops at a malformed one."""
    found, offset = [], 2
    while offset + 4 <= len(data) and data[offset] == 0xFF:
        marker = data[offset + 1]
        if marker == 0xFF:
            offset += 1
            continue
        found.append((marker, offset))
        if marker == 0xDA:
            break
        offset += 2 + (data[offset + 2] << 8 | data[offset + 3])
    return found


def scan(data):
    """The bytes from the SOS marker to the end of the file (b"" if there is no SOS)."""
    for marker, offset in segments(data):
        if marker == 0xDA:
            return data[offset:]
    return b""


def has_dht(data):
    return any(marker == 0xC4 for marker, _ in segments(data))


def strip_dht(data):
    """The JPEG without its Huffman tables (DHT segments), as UVC cameras send MJPEG."""
    out, last = bytearray(data[:2]), 2
    for marker, offset in segments(data):
        if marker == 0xDA:
            break
        end = offset + 2 + (data[offset + 2] << 8 | data[offset + 3])
        if marker != 0xC4:
            out += data[offset:end]
        last = end
    return bytes(out + data[last:])
