#!/usr/bin/env python3
"""camd end to end on vivid, inside the test VM (run by scripts/vivid-guest.sh).

Starts the real camd on /dev/video0 and drives it over its Unix socket as
curl would: status, snapshot colours, MJPEG stream rate, configure while
running, controls, photos, metrics, stop releasing the device, disconnect and
recovery, socket activation, READY=1 and WATCHDOG=1 on a NOTIFY_SOCKET.
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
                      mean_level, start_camd as launch, stop_camd, vivid_config, wait_for)

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

sys.exit(suite.finish())
