"""Pictures for the checks that run camd as a process: vivid's colour bars read back from
a JPEG (needs PIL: python3-pil) or from a browser's PNG screenshot (standard library
only), and a JPEG's header segments walked (the one walker the scripts share:
mjpeg-checks.py, scripts/fuzz/make-corpus.py).

The Swift tests read bars the same way (Tests/VividTests/VividSupport.swift's
Vivid.barColours).
"""
import io
import struct
import zlib

# vivid's 75% bars as full-range RGB, left to right: white, yellow, cyan, green, magenta, red, blue, black.
# camd's synthetic source (testsrc) draws the same.
BARS = [(191, 191, 191), (191, 191, 0), (0, 191, 191), (0, 191, 0), (191, 0, 191), (191, 0, 0), (0, 0, 191), (0, 0, 0)]


def bar_colours(pixel, left, top, width, height):
    """The average colour of each of the eight bars of a picture drawn in the box
    (left, top, width, height), read by `pixel(x, y)` -> (r, g, b), on a row below vivid's
    text and above the synthetic source's moving square."""
    row = top + height * 3 // 5
    colours = []
    for bar in range(8):
        cx = left + (2 * bar + 1) * width // 16
        pixels = [pixel(x, y) for x in range(cx - 3, cx + 4) for y in range(row - 3, row + 4)]
        colours.append(tuple(sum(p[i] for p in pixels) // len(pixels) for i in range(3)))
    return colours


def bars(jpeg):
    """(size, the average colour of each of the eight bars on a row below vivid's text)."""
    from PIL import Image

    image = Image.open(io.BytesIO(jpeg)).convert("RGB")
    w, h = image.size
    return image.size, bar_colours(lambda x, y: image.getpixel((x, y)), 0, 0, w, h)


def bars_ok(colours, tolerance=10):
    return all(abs(a - b) <= tolerance for got, want in zip(colours, BARS) for a, b in zip(got, want))


class PNG:
    """An 8-bit RGB or RGBA PNG (what Chromium's screenshots are), decoded with zlib.
    `pixel(x, y)` is (r, g, b)."""

    def __init__(self, data):
        if data[:8] != b"\x89PNG\r\n\x1a\n":
            raise ValueError("not a PNG")
        offset, compressed, header = 8, [], None
        while offset < len(data):
            length, kind = struct.unpack(">I4s", data[offset:offset + 8])
            body = data[offset + 8:offset + 8 + length]
            if kind == b"IHDR":
                header = struct.unpack(">IIBBBBB", body)
            elif kind == b"IDAT":
                compressed.append(body)
            elif kind == b"IEND":
                break
            offset += 12 + length
        self.width, self.height, depth, colour, _, _, interlace = header
        if depth != 8 or colour not in (2, 6) or interlace:
            raise ValueError(f"PNG of depth {depth}, colour type {colour}, interlace {interlace}: only 8-bit RGB(A) is read")
        self.channels = 3 if colour == 2 else 4
        stride = self.width * self.channels
        raw = zlib.decompress(b"".join(compressed))
        rows, previous = [], bytearray(stride)
        for y in range(self.height):
            start = y * (stride + 1)
            kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
            self._unfilter(kind, line, previous, self.channels)
            rows.append(line)
            previous = line
        self.rows = rows

    @staticmethod
    def _unfilter(kind, line, previous, bpp):
        if kind == 0:
            return
        if kind == 1:      # Sub
            for i in range(bpp, len(line)):
                line[i] = (line[i] + line[i - bpp]) & 0xFF
        elif kind == 2:    # Up
            for i in range(len(line)):
                line[i] = (line[i] + previous[i]) & 0xFF
        elif kind == 3:    # Average
            for i in range(len(line)):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + previous[i]) >> 1)) & 0xFF
        elif kind == 4:    # Paeth
            for i in range(len(line)):
                a = line[i - bpp] if i >= bpp else 0
                b = previous[i]
                c = previous[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        else:
            raise ValueError(f"PNG row filter {kind}")

    def pixel(self, x, y):
        at = x * self.channels
        return tuple(self.rows[y][at:at + 3])

    def differing_pixels(self, other, left, top, width, height, threshold=24):
        """How many pixels of the box differ between two pictures of one size by more than
        `threshold` in some channel."""
        count = 0
        for y in range(top, top + height):
            a, b = self.rows[y], other.rows[y]
            for x in range(left, left + width):
                at = x * self.channels
                if max(abs(a[at] - b[at]), abs(a[at + 1] - b[at + 1]), abs(a[at + 2] - b[at + 2])) > threshold:
                    count += 1
        return count


def decode(data):
    """(size, "") if PIL decodes every pixel, else (None, why)."""
    from PIL import Image

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
