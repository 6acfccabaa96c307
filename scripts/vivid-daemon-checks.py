#!/usr/bin/env python3
"""camd end to end on vivid, inside the test VM (run by scripts/vivid-guest.sh).

Starts the real camd on /dev/video0 and drives it over its Unix socket as
curl would: status, snapshot colours, MJPEG stream rate, configure while
running, image options (issue 5) read back pixel by pixel, contact sheets, controls,
photos, metrics, stop releasing the device, disconnect and recovery, socket
activation, READY=1 and WATCHDOG=1 on a NOTIFY_SOCKET, and a camera with
[camera.image] defaults, a location and a stream overlay.
Prints PASS/FAIL lines and a final "N passed, N failed" line.

usage: vivid-daemon-checks.py REPO RESULTS_DIR
"""
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from camdtest import (Image, NotifyListener, Suite, UnixHTTP, bars, bars_ok, call as call_on, camera_status,  # noqa: E402
                      mean_level, read_stream, start_camd as launch, stop_camd, vivid_config, wait_for)

REPO, RESULTS = sys.argv[1], sys.argv[2]
CAMD = os.path.join(REPO, ".build/debug/camd")
CAMCTL = os.path.join(REPO, ".build/debug/camctl")
SOCK = "/run/camd-test.sock"
NOTIFY = "/run/camd-notify.sock"
WORK = tempfile.mkdtemp(prefix="camd-daemon-")
PHOTOS = os.path.join(WORK, "photos")
BARS = [(191, 191, 191), (191, 191, 0), (0, 191, 191), (0, 191, 0), (191, 0, 191), (191, 0, 0), (0, 0, 191), (0, 0, 0)]

suite = Suite(RESULTS, "daemon-checks")
check = suite.check


def call(method, path, body=None, sock=SOCK, timeout=60):
    return call_on(sock, method, path, body, timeout)


def status(camera="vivid"):
    return camera_status(SOCK, camera)


def start_camd(config, extra_env=None, args=()):
    return launch(CAMD, config, PHOTOS, os.path.join(RESULTS, "camd-daemon.log"), extra_env, args)


def fetch(path, method="GET", sock=SOCK):
    """(the decoded RGB image, its EXIF, "") for a JPEG answer; (None, {}, what came instead) otherwise."""
    code, _, data = call(method, path, sock=sock)
    if code != 200 or data[:2] != b"\xff\xd8":
        return None, {}, f"HTTP {code} {data[:120].decode(errors='replace')}"
    image = Image.open(io.BytesIO(data))
    return image.convert("RGB"), image.getexif(), ""


def sample(image, points):
    """The average colour of a 7x7 patch around each point."""
    colours = []
    for cx, cy in points:
        pixels = [image.getpixel((x, y)) for x in range(cx - 3, cx + 4) for y in range(cy - 3, cy + 4)]
        colours.append(tuple(sum(p[i] for p in pixels) // len(pixels) for i in range(3)))
    return colours


def bars_across(image):
    """The eight bars from left to right, on a row below vivid's text (as bars() reads a JPEG)."""
    w, h = image.size
    return sample(image, [((2 * bar + 1) * w // 16, h * 3 // 5) for bar in range(8)])


def bars_down(image, column):
    """The eight bars from top to bottom along x = column, for a picture turned a quarter."""
    w, h = image.size
    return sample(image, [(column, (2 * bar + 1) * h // 16) for bar in range(8)])


def dark_pixels(image, box):
    """How many pixels in box (x0, y0, x1, y1) have a luma below 100: vivid's text on its white bar."""
    grey = image.convert("L").crop(box)
    return sum(1 for value in grey.getdata() if value < 100)


def primary(colour):
    """The name of a colour that is clearly red, green or blue; else the colour itself."""
    for name, index in (("red", 0), ("green", 1), ("blue", 2)):
        if colour[index] > 150 and all(colour[i] < 80 for i in range(3) if i != index):
            return name
    return colour


def gps_degrees(ifd, value_tag, ref_tag):
    """A GPS IFD coordinate as signed degrees (south and west negative)."""
    d, m, s = (float(v) for v in ifd[value_tag])
    return (d + m / 60 + s / 3600) * (-1 if ifd.get(ref_tag) in ("S", "W") else 1)


def stream_frames(sock, count, timeout=60):
    """The first `count` parts of the vivid camera's MJPEG stream, decoded."""
    _, _, parts = read_stream(sock, "/v1/cameras/vivid/stream", seconds=timeout, count=count)
    return [Image.open(io.BytesIO(body)).convert("RGB") for _, body, _ in parts]


config = vivid_config(os.path.join(WORK, "camd.toml"), SOCK, daemon_extra='log_level = "debug"')

notify = NotifyListener(NOTIFY)
notify.start()
started = time.time()
camd = start_camd(config, {"NOTIFY_SOCKET": NOTIFY, "WATCHDOG_USEC": "2000000"})
ready = wait_for(lambda: notify.has("READY=1"), 90)
check("camd sends READY=1 once its socket is bound and the camera started", ready,
      f"{time.time() - started:.1f} s after start")
check("the socket is srw-rw---- group video", oct(os.stat(SOCK).st_mode & 0o777) == "0o660" and os.stat(SOCK).st_gid == 44)

try:
    s = status()
    check("status: the vivid camera is running", s["state"] == "running", s.get("reason", ""))
    check("status: 640x480 YUYV at 25 fps configured", s.get("size") == "640x480" and s.get("format") == "YUYV"
          and s.get("configured_fps") == 25, f"{s.get('size')} {s.get('format')} {s.get('configured_fps')}")
    time.sleep(3)
    s = status()
    check("status: measured capture rate is about 25 fps", 20 <= s["measured_fps"] <= 30, f"{s['measured_fps']} fps")

    code, headers, jpeg = call("GET", "/v1/cameras/vivid/snapshot")
    size, colours = bars(jpeg)
    check("GET snapshot: a 640x480 JPEG", code == 200 and size == (640, 480), f"HTTP {code}, {size}")
    check("GET snapshot: the eight bars have vivid's colours, black near 0", bars_ok(colours) and max(colours[7]) <= 6, str(colours))
    check("GET snapshot: frame headers", "X-Frame-Sequence" in headers and headers.get("X-Frame-Size") == "640x480")

    requested = time.time()
    code, headers, jpeg = call("GET", "/v1/cameras/vivid/snapshot?max_age_ms=0")
    check("max_age_ms=0 gives a frame captured after the request",
          code == 200 and float(headers.get("X-Capture-Time", "0")) >= requested - 0.05,
          f"captured {float(headers.get('X-Capture-Time', '0')) - requested:+.3f} s")

    # The MJPEG stream, thinned to 5 fps, for 6 seconds.
    conn = UnixHTTP(SOCK, 30)
    conn.request("GET", "/v1/cameras/vivid/stream?fps=5")
    response = conn.getresponse()
    boundary = b"--camdframe"
    received, frames, t0 = b"", 0, time.time()
    while time.time() - t0 < 6:
        received += response.read1(65536)
    conn.close()
    frames = received.count(boundary)
    check("stream: multipart/x-mixed-replace at the asked rate (about 5 fps)",
          response.getheader("Content-Type", "").startswith("multipart/x-mixed-replace") and 22 <= frames <= 38,
          f"{frames} frames in 6 s")
    first = received.find(b"\xff\xd8")
    end = received.find(boundary, first)
    part_ok = first > 0 and Image.open(io.BytesIO(received[first:end - 2])).size == (640, 480)
    check("stream: each part is a whole 640x480 JPEG", part_ok)

    code, _, data = call("POST", "/v1/cameras/vivid/configure", {"size": "1280x720", "fps": 10})
    body = json.loads(data)
    check("configure while running: 1280x720 at 10 fps", code == 200 and body.get("size") == "1280x720"
          and body.get("state") == "running", f"HTTP {code} {body.get('size')} {body.get('state')}")
    code, _, jpeg = call("GET", "/v1/cameras/vivid/snapshot?max_age_ms=0")
    size = bars(jpeg)[0] if code == 200 else None
    check("configure while running: snapshots now 1280x720", size == (1280, 720),
          f"HTTP {code} {size or jpeg[:160].decode(errors='replace')}")
    code, _, data = call("POST", "/v1/cameras/vivid/configure", {"size": "640x480", "fps": 25})
    check("configure back to 640x480", code == 200)
    code, _, data = call("POST", "/v1/cameras/vivid/configure", {"fps": "fast"})
    check("configure with a bad value: 400 naming the field, settings kept",
          code == 400 and "fps" in json.loads(data)["error"]["message"] and status()["size"] == "640x480")

    # Image options (issue 5) on real frames.
    code, _, jpeg = call("GET", "/v1/cameras/vivid/snapshot?width=240&height=240&fit=cover")
    size, colours = bars(jpeg) if code == 200 else (None, [])
    square = Image.open(io.BytesIO(jpeg)).convert("RGB") if code == 200 else None
    # The centre 480x480 of 640x480 is kept: source x 80..560, so green at x=100, yellow (not white) at the left edge.
    green, left = (square.getpixel((100, 150)), square.getpixel((4, 150))) if square else (None, None)
    check("fit=cover into a square: exactly 240x240, centre bars kept, outer bars cropped", size == (240, 240)
          and green[1] > 150 and green[0] < 40 and left[0] > 150 and left[1] > 150 and left[2] < 40, f"{size} {green} {left}")
    code, _, jpeg = call("GET", "/v1/cameras/vivid/snapshot?rotate=90&max=320")
    image = Image.open(io.BytesIO(jpeg)).convert("RGB") if code == 200 else None
    down = [image.getpixel((image.width // 2, y)) for y in range(10, image.height - 10, image.height // 8)] if image else []
    across = [image.getpixel((x, image.height * 3 // 4)) for x in range(10, image.width - 10, image.width // 6)] if image else []
    spread = lambda pixels: max(max(p) - min(p) for p in zip(*pixels)) if pixels else 0
    check("rotate=90 turns the bars horizontal: colour changes down a column, not along a row",
          image is not None and image.size == (240, 320) and spread(down) > 150 and spread(across) < 40,
          f"{image.size if image else code}, down {spread(down)}, across {spread(across)}")
    # A thumbnail of a raw (YUYV) camera is drawn from the raw frame's box-reduced planes:
    # with nobody streaming, no full-size JPEG is encoded for it.
    time.sleep(1)  # any encode for an earlier request has finished
    before = status()["frames_encoded"]
    thumbs = [call("GET", "/v1/cameras/vivid/snapshot?max=160") for _ in range(3)]
    after = status()["frames_encoded"]
    size, colours = bars(thumbs[-1][2]) if thumbs[-1][0] == 200 else (None, [])
    check("a thumbnail from the raw frame: 160x120, vivid's bars, black near 0, no full-size encode",
          size == (160, 120) and bars_ok(colours, 12) and max(colours[7]) <= 8 and after == before,
          f"{size} {colours} frames_encoded {before} -> {after}")
    plain = Image.open(io.BytesIO(call("GET", "/v1/cameras/vivid/snapshot?max=320&max_age_ms=0")[2])).convert("L")
    _, _, jpeg = call("GET", "/v1/cameras/vivid/snapshot?max=320&overlay=%25H:%25M:%25S%20%7Bcamera%7D&overlay_corner=bottom-right")
    labelled = Image.open(io.BytesIO(jpeg)).convert("L")
    # Rows below vivid's own OSD text (time and frame counters, top-left), which differs between any two frames.
    changed = [(x, y) for y in range(60, 240, 2) for x in range(0, 320, 2)
               if abs(plain.getpixel((x, y)) - labelled.getpixel((x, y))) > 40]
    inside = all(x >= 160 and y >= 200 for x, y in changed)
    check("overlay: pixels change only in its box in the chosen corner", changed and inside,
          f"{len(changed)} changed, box {min(changed)[0] if changed else '-'}..{max(changed)[0] if changed else '-'}")
    for query, parameter in [("width=0", "width"), ("crop=9000,0,10,10", "crop"), ("rotate=45", "rotate")]:
        code, _, data = call("GET", f"/v1/cameras/vivid/snapshot?{query}")
        check(f"{query} is a 400 naming {parameter}", code == 400 and parameter in data.decode(), data.decode()[:100])
    for _ in range(4):
        call("POST", "/v1/cameras/vivid/snapshot")
    code, _, jpeg = call("GET", "/v1/photos/contact-sheet?camera=vivid&cols=2&cell=96")
    sheet = Image.open(io.BytesIO(jpeg)) if code == 200 else None
    check("contact sheet: 4 photos in 2 columns make a 2x2 grid", sheet is not None and 2 * 96 < sheet.width < 3 * 96
          and 2 * 96 < sheet.height < 3 * 96 + 60, f"{sheet.size if sheet else code}")
    _, _, listing = call("GET", "/v1/photos?camera=vivid&limit=1")
    newest = json.loads(listing)[0]["name"]
    code, _, jpeg = call("GET", f"/v1/photos/{newest}?max=160")
    check("a saved photo's thumbnail: max=160", code == 200 and Image.open(io.BytesIO(jpeg)).size == (160, 120))
    code, _, jpeg = call("GET", f"/v1/photos/{newest}")
    exif = Image.open(io.BytesIO(jpeg)).getexif()
    exif_ifd = exif.get_ifd(0x8769)
    check("saved photos carry EXIF: camera, DateTimeOriginal with sub-seconds and offset",
          exif.get(0x010F) == "vivid" and len(exif_ifd.get(0x9003, "")) == 19 and len(exif_ifd.get(0x9291, "")) == 6
          and exif_ifd.get(0x9011, "").startswith(("+", "-")), f"{dict(exif)} {dict(exif_ifd)}")
    for photo in json.loads(call("GET", "/v1/photos?camera=vivid")[2]):
        call("DELETE", f"/v1/photos/{photo['name']}")

    # Each image option on real frames, read back pixel by pixel. vivid's bars left to right:
    # white, yellow, cyan, green, magenta, red, blue, black (80 pixels each at 640 wide), with
    # its text (white on black) in the top-left rows, on the white bar.
    snapshot = "/v1/cameras/vivid/snapshot"
    image, _, why = fetch(f"{snapshot}?width=200&height=200&fit=contain")
    check("fit=contain into 200x200: 200x150, the whole frame with its aspect, no bars added",
          image is not None and image.size == (200, 150) and bars_ok(bars_across(image), 12),
          why or f"{image.size} {bars_across(image)}")
    image, _, why = fetch(f"{snapshot}?width=200&height=200&fit=contain&pad=black")
    # The 200x150 picture sits in the middle: black rows 0..24 and 175..199 (looked at away from the seams).
    edges = (dark_pixels(image, (0, 0, 200, 16)), dark_pixels(image, (0, 184, 200, 200))) if image else (0, 0)
    check("fit=contain&pad=black: exactly 200x200, black bars top and bottom, the bars between them",
          image is not None and image.size == (200, 200) and edges == (200 * 16, 200 * 16)
          and bars_ok(sample(image, [((2 * bar + 1) * 200 // 16, 25 + 90) for bar in range(8)]), 12),
          why or f"{image.size}, dark pixels in the top/bottom 16 rows {edges} of {200 * 16}")
    image, _, why = fetch(f"{snapshot}?width=200&height=100&fit=stretch")
    check("fit=stretch into 200x100: exactly 200x100, all eight bars still there in order",
          image is not None and image.size == (200, 100) and bars_ok(bars_across(image), 12),
          why or f"{image.size} {bars_across(image)}")
    image, _, why = fetch(f"{snapshot}?crop=160,0,160,480")
    check("crop=160,0,160,480: 160x480 holding the cyan and green bars (the 3rd and 4th)",
          image is not None and image.size == (160, 480)
          and all(abs(a - b) <= 12 for got, want in zip(sample(image, [(40, 288), (120, 288)]), BARS[2:4])
                  for a, b in zip(got, want)),
          why or f"{image.size} {sample(image, [(40, 288), (120, 288)])}")
    image, _, why = fetch(f"{snapshot}?flip=h")
    # Mirrored: the text moves to the top-right, on the white bar, now at x 560..639.
    text_top, text_bottom = (dark_pixels(image, (564, 0, 636, 120)), dark_pixels(image, (564, 360, 636, 480))) if image else (0, 0)
    check("flip=h: the bars reversed (black left, white right), vivid's text top-right",
          image is not None and image.size == (640, 480) and bars_ok(bars_across(image)[::-1], 12)
          and text_top > 200 and text_bottom == 0,
          why or f"{bars_across(image)}, dark pixels top-right {text_top}, bottom-right {text_bottom}")
    image, _, why = fetch(f"{snapshot}?rotate=180")
    text_top, text_bottom = (dark_pixels(image, (564, 0, 636, 120)), dark_pixels(image, (564, 360, 636, 480))) if image else (0, 0)
    check("rotate=180: the bars reversed too, and vivid's text moves to the bottom-right",
          image is not None and image.size == (640, 480) and bars_ok(bars_across(image)[::-1], 12)
          and text_bottom > 200 and text_top == 0,
          why or f"{bars_across(image)}, dark pixels top-right {text_top}, bottom-right {text_bottom}")
    # Clockwise: rotate=90 takes the left edge (white) to the top, rotate=270 to the bottom. The
    # columns read (x 144 for 270, x 96 for 90) are the frame's row 288 or so, below vivid's text.
    image, _, why = fetch(f"{snapshot}?rotate=270&max=320")
    check("rotate=270&max=320: 240x320, the bars horizontal, white at the bottom, black at the top",
          image is not None and image.size == (240, 320) and bars_ok(bars_down(image, 144)[::-1], 12),
          why or f"{image.size}, top to bottom {bars_down(image, 144)}")
    image, _, why = fetch(f"{snapshot}?rotate=90&max=320")
    check("rotate=90&max=320: white at the top, black at the bottom",
          image is not None and image.size == (240, 320) and bars_ok(bars_down(image, 96), 12),
          why or f"{image.size}, top to bottom {bars_down(image, 96)}")
    for interpolation in ("nearest", "bilinear"):
        image, _, why = fetch(f"{snapshot}?max=160&interpolation={interpolation}")
        check(f"interpolation={interpolation}&max=160: 160x120, the bars in order",
              image is not None and image.size == (160, 120) and bars_ok(bars_across(image), 12),
              why or f"{image.size} {bars_across(image)}")
    image, exif, why = fetch(f"{snapshot}?rotate=exif")
    check("rotate=exif with no rotation configured: pixels as captured (640x480, bars upright), Orientation 1 or none",
          image is not None and image.size == (640, 480) and bars_ok(bars_across(image), 12) and exif.get(0x0112) in (None, 1),
          why or f"{image.size} Orientation {exif.get(0x0112)} {bars_across(image)}")
    image, exif, why = fetch(f"{snapshot}?rotate=exif&flip=h")
    check("rotate=exif&flip=h: pixels not mirrored, EXIF Orientation 2 (mirrored) for the viewer",
          image is not None and image.size == (640, 480) and bars_ok(bars_across(image), 12) and exif.get(0x0112) == 2,
          why or f"{image.size} Orientation {exif.get(0x0112)} {bars_across(image)}")

    # A photo saved with rotate=exif&flip=h: its copies keep the tag, the contact sheet turns it.
    code, _, data = call("POST", f"{snapshot}?rotate=exif&flip=h")
    mirrored = json.loads(data) if code == 201 else {}
    name = mirrored.get("name", "-")
    image, exif, why = fetch(f"/v1/photos/{name}")
    check("a photo saved with rotate=exif&flip=h: 640x480, pixels as captured, Orientation 2, Make and Model vivid",
          image is not None and image.size == (640, 480) and bars_ok(bars_across(image), 12) and exif.get(0x0112) == 2
          and exif.get(0x010F) == "vivid" and exif.get(0x0110) == "vivid",
          why or f"{image.size} Orientation {exif.get(0x0112)} Make {exif.get(0x010F)!r} Model {exif.get(0x0110)!r}")
    image, exif, why = fetch(f"/v1/photos/{name}?max=160")
    check("that photo's thumbnail (max=160): 160x120, still Orientation 2, pixels still as captured",
          image is not None and image.size == (160, 120) and exif.get(0x0112) == 2 and bars_ok(bars_across(image), 12),
          why or f"{image.size} Orientation {exif.get(0x0112)} {bars_across(image)}")
    taken = mirrored.get("capture_time", 0)
    image, _, why = fetch(f"/v1/photos/contact-sheet?camera=vivid&since={taken - 0.001:.6f}&until={taken + 0.001:.6f}"
                          f"&cols=3&cell=96")
    # One cell at (4, 4), 96x96: the centre 480x480 of the frame (yellow .. blue, 16 pixels a bar),
    # turned as a viewer turns it, so blue on the left and yellow on the right.
    ends = sample(image, [(4 + 8, 4 + 60), (4 + 88, 4 + 60)]) if image else []
    blue_left = bool(ends) and ends[0][2] > 120 and max(ends[0][:2]) < 60
    yellow_right = bool(ends) and min(ends[1][:2]) > 120 and ends[1][2] < 60
    check("the contact sheet of that photo alone shows it mirrored (blue bar left, yellow right in its cell)",
          image is not None and image.width < 2 * 96 and blue_left and yellow_right,
          why or f"{image.size}, cell left {ends[0]}, right {ends[1]}")
    call("DELETE", f"/v1/photos/{name}")

    # Three photos of vivid's solid test patterns, so each cell says which photo it is.
    def test_pattern(number):
        return subprocess.run(["v4l2-ctl", "-d", "/dev/video0", "--set-ctrl", f"test_pattern={number}"],
                              capture_output=True, timeout=30).returncode == 0
    shots, seen, switched = [], [], True
    try:
        for number in (7, 8, 9):  # 100% red, green, blue
            switched = test_pattern(number) and switched
            time.sleep(0.3)
            call("GET", f"{snapshot}?max=160&max_age_ms=0")  # a frame of the new pattern has been captured
            code, _, data = call("POST", snapshot)
            shots.append(json.loads(data) if code == 201 else {"name": "-", "capture_time": 0})
            image, _, _ = fetch(f"/v1/photos/{shots[-1]['name']}?max=160")
            seen.append(primary(sample(image, [(80, 80)])[0]) if image else None)
    finally:
        test_pattern(0)
    since = f"{shots[0]['capture_time'] - 0.001:.6f}"
    sheet_path = f"/v1/photos/contact-sheet?camera=vivid&since={since}&cols=3&cell=96"
    image, _, why = fetch(sheet_path)
    # cell=96 makes 4-pixel gaps and 12-pixel labels: cells at x 4, 104, 204; one row is 116 high.
    cells = [primary(c) for c in sample(image, [(4 + 48 + 100 * i, 4 + 56) for i in range(3)])] if image else []
    check("contact sheet: 3 photos with cols=3&cell=96 are one row of 3 cells, oldest first",
          switched and seen == ["red", "green", "blue"] and image is not None
          and 3 * 96 < image.width < 4 * 96 and 96 < image.height < 2 * 96 and cells == ["red", "green", "blue"],
          why or f"photos {seen} (test_pattern set: {switched}); sheet {image.size}, cells left to right {cells}")
    api_sheet = image.size if image else None
    out = subprocess.run([CAMCTL, "contact-sheet", "--camera", "vivid", "--since", since, "--cols", "3", "--cell", "96",
                          "-o", os.path.join(WORK, "sheet.jpg")],
                         capture_output=True, env=dict(os.environ, CAMD_SOCKET=SOCK), timeout=90)
    sheet = Image.open(os.path.join(WORK, "sheet.jpg")).convert("RGB") if out.returncode == 0 else None
    cells = [primary(c) for c in sample(sheet, [(4 + 48 + 100 * i, 4 + 56) for i in range(3)])] if sheet else []
    check("camctl contact-sheet through camd writes a JPEG of the asked grid (1 row of 3, in order)",
          sheet is not None and sheet.size == api_sheet and cells == ["red", "green", "blue"],
          f"exit {out.returncode}, {sheet.size if sheet else '-'} (API {api_sheet}), cells {cells}; "
          f"{out.stderr.decode()[-160:]}")
    for shot in shots:
        call("DELETE", f"/v1/photos/{shot['name']}")

    image, exif, why = fetch(f"{snapshot}?max=160")
    exif_ifd = exif.get_ifd(0x8769) if image else {}
    check("a thumbnail snapshot's EXIF: Make and Model vivid, ExifImageWidth/Height 160x120",
          image is not None and exif.get(0x010F) == "vivid" and exif.get(0x0110) == "vivid"
          and (exif_ifd.get(0xA002), exif_ifd.get(0xA003)) == (160, 120),
          why or f"Make {exif.get(0x010F)!r} Model {exif.get(0x0110)!r} "
                 f"size tags {exif_ifd.get(0xA002)}x{exif_ifd.get(0xA003)}")

    code, _, data = call("GET", "/v1/cameras/vivid/controls")
    names = [c["name"] for c in json.loads(data)] if code == 200 else []
    check("GET controls lists brightness and vivid's fault controls", "brightness" in names and "disconnect" in names)
    dark = mean_level(call("GET", "/v1/cameras/vivid/snapshot?max_age_ms=0")[2])
    code, _, _ = call("PUT", "/v1/cameras/vivid/controls", {"brightness": 220})
    time.sleep(0.5)
    bright = mean_level(call("GET", "/v1/cameras/vivid/snapshot?max_age_ms=0")[2])
    check("PUT controls brightness=220 brightens the image", code == 200 and bright > dark + 20, f"{dark:.0f} → {bright:.0f}")
    code, _, data = call("PUT", "/v1/cameras/vivid/controls", {"brightness": 300})
    check("PUT controls out of range: 400 that states the range", code == 400 and "0 and 255" in data.decode(), data.decode()[:120])
    call("PUT", "/v1/cameras/vivid/controls", {"brightness": 128})

    code, _, data = call("POST", "/v1/cameras/vivid/snapshot")
    record = json.loads(data)
    check("POST snapshot saves a photo", code == 201 and os.path.exists(os.path.join(PHOTOS, "vivid", record.get("name", "-"))),
          record.get("name", data.decode()[:100]))
    code, _, data = call("GET", "/v1/photos?camera=vivid")
    check("GET photos lists it", code == 200 and record["name"] in [p["name"] for p in json.loads(data)])
    code, headers, jpeg = call("GET", f"/v1/photos/{record['name']}")
    check("GET photos/{name} serves the JPEG", code == 200 and jpeg[:2] == b"\xff\xd8")
    code, _, data = call("GET", "/v1/photos/..%2F..%2Fetc%2Fpasswd")
    check("a photo name escaping the folder is refused", code in (400, 404) and b"error" in data)
    code, _, _ = call("DELETE", f"/v1/photos/{record['name']}")
    check("DELETE photos/{name}", code == 204 and call("GET", f"/v1/photos/{record['name']}")[0] == 404)

    code, _, data = call("GET", "/v1/devices")
    devices = {d["path"]: d for d in json.loads(data)} if code == 200 else {}
    video0, video1 = devices.get("/dev/video0", {}), devices.get("/dev/video1", {})
    check("GET devices: video0 a camera camd may open, with YUYV among its formats; video1 not a camera",
          video0.get("camera") is True and video0.get("accessible") is True
          and "YUYV" in [f["fourcc"] for f in video0.get("formats", [])] and video1.get("camera") is False,
          f"HTTP {code}; video0 {video0.get('camera')}/{video0.get('accessible')}, video1 {video1.get('camera')}")
    code, _, data = call("GET", "/v1/cameras")
    listed = {c["id"]: c["state"] for c in json.loads(data)} if code == 200 else {}
    check("GET cameras: vivid, running", listed == {"vivid": "running"}, f"HTTP {code} {listed}")

    # camctl through the daemon: status, stop, start, controls.
    env = dict(os.environ, CAMD_SOCKET=SOCK)
    def camctl(*args):
        return subprocess.run([CAMCTL, *args], capture_output=True, env=env, timeout=90)
    out = camctl("status")
    check("camctl status shows the vivid camera running", out.returncode == 0 and b"vivid" in out.stdout
          and b"running" in out.stdout, (out.stdout + out.stderr).decode()[-200:])
    out = camctl("stop", "vivid")
    check("camctl stop vivid: idle", out.returncode == 0 and status()["state"] == "idle", (out.stdout + out.stderr).decode()[-200:])
    out = camctl("start", "vivid")
    check("camctl start vivid: running", out.returncode == 0 and status()["state"] == "running", (out.stdout + out.stderr).decode()[-200:])
    out = camctl("controls", "contrast=100")
    _, _, data = call("GET", "/v1/cameras/vivid/controls")
    contrast = next((c.get("value") for c in json.loads(data) if c["name"] == "contrast"), None)
    check("camctl controls contrast=100 sets it through the daemon", out.returncode == 0 and contrast == 100,
          f"exit {out.returncode}, contrast {contrast}; {out.stderr.decode()[-160:]}")
    camctl("controls", "contrast=128")

    code, _, data = call("GET", "/metrics")
    text = data.decode()
    samples = [l for l in text.splitlines() if l and not l.startswith("#")]
    parsed = all(len(l.rsplit(" ", 1)) == 2 and float(l.rsplit(" ", 1)[1]) >= 0 for l in samples)
    check("/metrics parses as Prometheus text", code == 200 and parsed and 'camd_frames_captured_total{camera="vivid"}' in text,
          f"{len(samples)} samples")

    code, _, data = call("POST", "/v1/cameras/vivid/stop")
    check("POST stop: idle", code == 200 and json.loads(data)["state"] == "idle")
    grab = subprocess.run(["v4l2-ctl", "-d", "/dev/video0", "--stream-mmap", "--stream-count=3", "--stream-to=/dev/null"],
                          capture_output=True, timeout=60)
    check("after stop another program can stream the device (v4l2-ctl)", grab.returncode == 0, grab.stderr.decode()[-200:])
    code, _, data = call("POST", "/v1/cameras/vivid/start")
    check("POST start: running again", code == 200 and json.loads(data)["state"] == "running")

    watchdogs = notify.count("WATCHDOG=1")
    check("WATCHDOG=1 keeps coming while healthy (WATCHDOG_USEC=2 s)", watchdogs >= 5, f"{watchdogs} pings")
    check("STATUS= summarises the cameras", notify.has("STATUS=vivid running"))

    env = dict(os.environ, CAMD_SOCKET=SOCK)
    shot = subprocess.run([CAMCTL, "snapshot", "-o", os.path.join(WORK, "via-daemon.jpg")], capture_output=True, env=env, timeout=60)
    check("camctl snapshot goes through the running daemon", shot.returncode == 0 and b"camd camera vivid" in shot.stderr,
          shot.stderr.decode()[-200:])

    # Disconnect: the device vanishes; camd waits, answers 503 at once, and comes back by itself.
    subprocess.run(["v4l2-ctl", "-d", "/dev/video0", "-c", "disconnect=1"], capture_output=True, timeout=30)
    waiting = wait_for(lambda: status()["state"] == "waiting-for-device", 20)
    check("disconnect: status says waiting-for-device with the reason", waiting, status().get("reason", ""))
    t0 = time.time()
    code, _, data = call("GET", "/v1/cameras/vivid/snapshot")
    check("disconnect: snapshot gives 503 at once", code == 503 and time.time() - t0 < 3,
          f"HTTP {code} after {time.time() - t0:.2f} s")
    back = wait_for(lambda: status()["state"] == "running", 60)
    check("disconnect: capture resumes by itself when the node is back", back, status().get("state"))
    code, _, jpeg = call("GET", "/v1/cameras/vivid/snapshot?max_age_ms=0")
    check("after reconnect snapshots work again", code == 200 and jpeg[:2] == b"\xff\xd8")
finally:
    elapsed = stop_camd(camd)
    check("SIGTERM: camd exits within 5 s", elapsed is not None and elapsed < 5, f"{elapsed}")
    check("SIGTERM: the socket file is removed", not os.path.exists(SOCK))

# Socket activation with systemd's own tool.
activated_sock = "/run/camd-activated.sock"
env = dict(os.environ)
sa = subprocess.Popen(["systemd-socket-activate", "-l", activated_sock, CAMD, "--config", config, "--photos", PHOTOS],
                      stdout=open(os.path.join(RESULTS, "camd-activated.log"), "w"), stderr=subprocess.STDOUT, env=env)
try:
    up = wait_for(lambda: os.path.exists(activated_sock), 20)
    ok = False
    if up:
        try:
            code, _, data = call("GET", "/v1/status", sock=activated_sock, timeout=90)
            ok = code == 200 and json.loads(data)["cameras"][0]["id"] == "vivid"
        except Exception as error:
            data = str(error).encode()
    check("socket activation: systemd-socket-activate starts camd on the first request, which serves it", ok, data[:100])
    activated_log = open(os.path.join(RESULTS, "camd-activated.log")).read()
    check("socket activation: camd used the passed socket", "the socket systemd passed" in activated_log)
finally:
    sa.send_signal(signal.SIGTERM)
    try:
        sa.wait(15)
    except subprocess.TimeoutExpired:
        sa.kill()

# A camera with image defaults ([camera.image]) and a location: a camd of its own.
IMAGE_SOCK = "/run/camd-image.sock"
image_config = vivid_config(os.path.join(WORK, "camd-image.toml"), IMAGE_SOCK, camera_extra="""
location = { latitude = 51.5, longitude = -0.12 }

[camera.image]
max = 320
overlay = "%H:%M:%S {camera}"
overlay_corner = "bottom-right"
stream_overlay = true
""")
camd_image = launch(CAMD, image_config, os.path.join(WORK, "photos-image"), os.path.join(RESULTS, "camd-image.log"))
try:
    up = wait_for(lambda: camera_status(IMAGE_SOCK, "vivid")["state"] == "running", 90)
    check("camd with [camera.image] (max, overlay, stream_overlay) and a location: running", up,
          open(os.path.join(RESULTS, "camd-image.log")).read()[-300:] if not up else "")
    if up:  # else the check above failed and nothing below can answer
        image, exif, why = fetch("/v1/cameras/vivid/snapshot", sock=IMAGE_SOCK)
        check("[camera.image] max = 320: a snapshot with no query is 320x240, vivid's bars",
              image is not None and image.size == (320, 240) and bars_ok(bars_across(image), 12),
              why or f"{image.size} {bars_across(image)}")
        snapshot_gps = exif.get_ifd(0x8825) if image else {}
        code, _, data = call("POST", "/v1/cameras/vivid/snapshot", sock=IMAGE_SOCK)
        record = json.loads(data) if code == 201 else {}
        image, exif, why = fetch(f"/v1/photos/{record.get('name', '-')}", sock=IMAGE_SOCK)
        gps = exif.get_ifd(0x8825) if image else {}
        try:
            where = [(gps_degrees(ifd, 2, 1), gps_degrees(ifd, 4, 3), ifd.get(1), ifd.get(3)) for ifd in (gps, snapshot_gps)]
        except Exception as error:  # a tag missing or malformed
            where = f"{type(error).__name__}: {error}; photo GPS {dict(gps)}, snapshot GPS {dict(snapshot_gps)}"
        check("location: a saved photo (320x240) and a snapshot carry GPS 51.5 N, 0.12 W (PIL's get_ifd(0x8825))",
              image is not None and image.size == (320, 240) and isinstance(where, list)
              and all(abs(lat - 51.5) < 1e-4 and abs(lon + 0.12) < 1e-4 and (ns, ew) == ("N", "W") for lat, lon, ns, ew in where),
              why or f"{image.size} {where}")
        # The stream is full size, with the overlay drawn on every frame; snapshots come from the plain frame.
        _, _, plain_jpeg = call("GET", "/v1/cameras/vivid/snapshot?max=640&overlay=", sock=IMAGE_SOCK)
        plain = Image.open(io.BytesIO(plain_jpeg)).convert("L") if plain_jpeg[:2] == b"\xff\xd8" else None
        findings, counts = [], []
        try:
            frames = [frame.convert("L") for frame in stream_frames(IMAGE_SOCK, 3)]
        except Exception as error:  # a stalled or broken stream
            frames, findings = [], [f"reading the stream: {type(error).__name__}: {error}"]
        for index, frame in enumerate(frames):
            if plain is None or frame.size != (640, 480) or plain.size != (640, 480):
                findings.append(f"frame {index}: {frame.size} against {plain.size if plain else 'no snapshot'}")
                continue
            # Rows below vivid's own text, which changes from frame to frame.
            changed = [(x, y) for y in range(130, 480, 2) for x in range(0, 640, 2)
                       if abs(plain.getpixel((x, y)) - frame.getpixel((x, y))) > 40]
            counts.append(len(changed))
            if not changed or not all(x >= 320 and y >= 400 for x, y in changed):
                findings.append(f"frame {index}: {len(changed)} pixels differ, x {min(changed)[0] if changed else '-'}.."
                                f"{max(changed)[0] if changed else '-'}, y from {min(y for _, y in changed) if changed else '-'}")
        check("stream_overlay: each of the first 3 stream frames (640x480) differs from the plain snapshot only in the "
              "bottom-right overlay", len(frames) == 3 and not findings,
              f"{len(frames)} frames, pixels changed {counts}" + "".join(f"; {finding}" for finding in findings))
finally:
    stop_camd(camd_image)

sys.exit(suite.finish())
