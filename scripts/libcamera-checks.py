#!/usr/bin/env python3
"""camctl and camd on a libcamera camera, inside the test VM (run by scripts/libcamera-guest.sh).

vimc (the kernel's virtual media-controller camera, built for the guest kernel by
scripts/test-libcamera) is loaded; libcamera's vimc pipeline handler offers one camera,
"Sensor B", in RGB888/BGR888 only, and its video nodes are parts of a media pipeline,
not cameras on their own. Its picture is 75% colour bars (v4l2-tpg) under a text line.
Prints PASS/FAIL lines and a final "N passed, N failed" line.

usage: libcamera-checks.py REPO RESULTS_DIR
"""
import grp
import io
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from PIL import Image, ImageStat  # noqa: E402
from pictures import bars, bars_ok  # noqa: E402
from camdclient import Suite, call, camera_status, read_stream, start_camd, stop_camd, wait_for, write_config  # noqa: E402

REPO, RESULTS = sys.argv[1], sys.argv[2]
CAMD = os.path.join(REPO, ".build/debug/camd")
CAMCTL = os.path.join(REPO, ".build/debug/camctl")
SOCK = "/run/camd-libcamera.sock"
WORK = tempfile.mkdtemp(prefix="camd-libcamera-")
os.chmod(WORK, 0o1777)  # uid 65534 writes its snapshots here
NOBODY = 65534
VIMC = "/sys/bus/platform/drivers/vimc"
ASKED = "640x480"
ADJUSTED = None  # set from the libcamera version camctl names, below
TOLERANCE = 8

suite = Suite(os.path.join(RESULTS, "libcamera-checks.log"))
T0 = time.time()


def check(name, ok, detail=""):
    print(f"# +{time.time() - T0:.0f}s", flush=True)
    return suite.check(name, ok, detail)


def camctl(*args, timeout=120):
    return subprocess.run([CAMCTL, *args], capture_output=True, text=True, timeout=timeout)


def save(name, data):
    with open(os.path.join(RESULTS, name), "wb") as f:
        f.write(data)


def picture_ok(name, jpeg):
    """The JPEG has the adjusted size and vimc's bars within TOLERANCE; (ok, detail)."""
    try:
        size, colours = bars(jpeg)
    except Exception as error:  # noqa: BLE001 - any decode failure is the finding
        return False, f"not a picture PIL reads: {error}"
    save(name, jpeg)
    return size == ADJUSTED and bars_ok(colours, TOLERANCE), f"size {size[0]}x{size[1]}, bars {colours}"


# ---------------------------------------------------------------- discovery
listing = camctl("devices")
print(listing.stdout + listing.stderr)
# libcamera 0.0.3's vimc pipeline snaps 640x480 to 636x480 (libcamera says Adjusted); 0.7.1's
# keeps it (the versions checked: Debian 12's, and Raspberry Pi's built with PKG_CONFIG_PATH).
VERSION = next(iter(re.findall(r"libcamera v(\d+\.\d+\.\d+)", listing.stdout)), "unknown")
ADJUSTED = (636, 480) if VERSION.startswith("0.0.") else (640, 480)
print(f"libcamera {VERSION}: 640x480 is expected as {ADJUSTED[0]}x{ADJUSTED[1]}", flush=True)
check("camctl devices lists libcamera:0 (Sensor B) with BGR3, libcamera's RGB888",
      listing.returncode == 0 and "libcamera:0" in listing.stdout and "Sensor B" in listing.stdout
      and "RGB888" in listing.stdout, listing.stdout.strip()[-300:])
check("camctl devices no longer offers vimc's /dev/video nodes as cameras",
      "/dev/video" not in listing.stdout, listing.stdout.strip()[:300])
every = camctl("devices", "--all")
check("camctl devices --all says why vimc's nodes are not cameras (media pipeline, libcamera)",
      "part of a media pipeline" in every.stdout, every.stdout.strip()[:400])
as_json = camctl("devices", "--json")
try:
    entries = json.loads(as_json.stdout)
except ValueError:
    entries = []
lib = [e for e in entries if e.get("path") == "libcamera:0"]
check("camctl devices --json: libcamera:0 with formats BGR3 and RGB3",
      lib and {f["fourcc"] for f in lib[0]["formats"]} >= {"BGR3", "RGB3"}, json.dumps(lib)[:300])

# ---------------------------------------------------------------- camctl snapshot
out = os.path.join(WORK, "snap.jpg")
snap = camctl("snapshot", "-d", "libcamera:0", "--size", ASKED, "-o", out)
data = open(out, "rb").read() if os.path.exists(out) else b""
ok, detail = picture_ok("camctl-snapshot.jpg", data) if data else (False, snap.stderr.strip()[-300:])
check(f"camctl snapshot -d libcamera:0 --size {ASKED}: a {ADJUSTED[0]}x{ADJUSTED[1]} JPEG with the bars within ±{TOLERANCE}", ok, detail)

for fourcc in ("RGB3", "BGR3"):
    out = os.path.join(WORK, f"snap-{fourcc}.jpg")
    snap = camctl("snapshot", "-d", "libcamera:0", "--size", ASKED, "--format", fourcc, "-o", out)
    data = open(out, "rb").read() if os.path.exists(out) else b""
    ok, detail = picture_ok(f"camctl-snapshot-{fourcc}.jpg", data) if data else (False, snap.stderr.strip()[-300:])
    check(f"camctl snapshot --format {fourcc} (libcamera {'BGR888' if fourcc == 'RGB3' else 'RGB888'}): the bars in their order", ok, detail)

raw = camctl("snapshot", "-d", "/dev/video0", "-o", os.path.join(WORK, "raw.jpg"), "--timeout", "5")
check("camctl snapshot -d /dev/video0 (a node inside vimc's pipeline) fails and names the pipeline and libcamera:0",
      raw.returncode != 0 and "media pipeline" in raw.stderr and "libcamera:0" in raw.stderr, raw.stderr.strip()[-400:])

# ---------------------------------------------------------------- permissions
# libcamera skips a media graph it cannot open: the camera must still be explained.
as_nobody = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}"]
out = os.path.join(WORK, "nobody.jpg")
denied = subprocess.run(as_nobody + ["--clear-groups", CAMCTL, "snapshot", "-d", "libcamera:0", "--size", ASKED, "-o", out],
                        capture_output=True, text=True, timeout=120)
check(f"camctl snapshot -d libcamera:0 as uid {NOBODY} without groups fails naming /dev/media0 and group video",
      denied.returncode != 0 and "/dev/media0" in denied.stderr and "video" in denied.stderr and not os.path.exists(out),
      f"exit {denied.returncode}: {denied.stderr.strip()[-400:]}")
video_gid = grp.getgrnam("video").gr_gid
allowed = subprocess.run(as_nobody + [f"--groups={video_gid}", CAMCTL, "snapshot", "-d", "libcamera:0", "--size", ASKED, "-o", out],
                         capture_output=True, text=True, timeout=120)
data = open(out, "rb").read() if os.path.exists(out) else b""
ok, detail = picture_ok("nobody-video.jpg", data) if data else (False, f"exit {allowed.returncode}: {allowed.stderr.strip()[-300:]}")
check(f"camctl snapshot -d libcamera:0 as uid {NOBODY} in group video works", ok, detail)

def luma(jpeg):
    """The picture's mean brightness, 0...255 (None when it does not decode)."""
    try:
        return ImageStat.Stat(Image.open(io.BytesIO(jpeg)).convert("L")).mean[0]
    except Exception:  # noqa: BLE001 - a picture that does not decode has none
        return None


def fresh_luma():
    status, _, body = call(SOCK, "GET", "/v1/cameras/vimc/snapshot?max_age_ms=0", timeout=60)
    return luma(body) if status == 200 else None


def check_controls():
    """libcamera's controls through camd: listed as libcamera has them (Brightness a real
    number, -1...1), checked before they are set, seen in the picture, kept across a restart."""
    status, _, body = call(SOCK, "GET", "/v1/cameras/vimc/controls", timeout=60)
    controls = json.loads(body) if status == 200 else []
    brightness = next((c for c in controls if isinstance(c, dict) and c.get("name") == "brightness"), None) or {}
    check("GET controls lists libcamera's Brightness: a float from -1 to 1, default 0",
          brightness.get("type") == "float" and brightness.get("minimum") == -1 and brightness.get("maximum") == 1
          and brightness.get("default") == 0,
          f"HTTP {status}: {json.dumps([(c.get('name'), c.get('type'), c.get('minimum'), c.get('maximum')) for c in controls])[:500]}")
    status, _, body = call(SOCK, "PUT", "/v1/cameras/vimc/controls", {"brightness": 1.5}, timeout=60)
    check("PUT brightness 1.5 is refused with the range", status == 400 and b"between -1.0 and 1.0" in body,
          f"HTTP {status} {body[:200]!r}")
    before = fresh_luma()
    status, _, body = call(SOCK, "PUT", "/v1/cameras/vimc/controls", {"brightness": 0.6}, timeout=60)
    answer = json.loads(body) if status == 200 else []
    brighter = wait_for(lambda: (fresh_luma() or 0) > (before or 255) + 20, 20, 0.5)
    after = fresh_luma()
    check("PUT brightness 0.6: answered with the new value, and the picture gets brighter",
          status == 200 and answer and answer[0].get("value") == 0.6 and brighter,
          f"HTTP {status} {json.dumps(answer)[:200]}; mean luma {before} -> {after}")
    listed = subprocess.run([CAMCTL, "controls", "--socket", SOCK, "-d", "vimc"], capture_output=True, text=True, timeout=120)
    line = next((l for l in listed.stdout.splitlines() if l.startswith("brightness")), "")
    check("camctl controls through camd shows brightness (float) = 0.6 with its range", "(float) = 0.6" in line and "-1" in line,
          line or listed.stderr.strip()[-300:])
    call(SOCK, "POST", "/v1/cameras/vimc/stop", timeout=60)
    call(SOCK, "POST", "/v1/cameras/vimc/start", timeout=60)
    wait_for(lambda: camera_status(SOCK, "vimc").get("state") == "running", 60)
    kept = wait_for(lambda: (fresh_luma() or 0) > (before or 255) + 20, 20, 0.5)
    status, _, body = call(SOCK, "GET", "/v1/cameras/vimc/controls", timeout=60)
    value = next((c.get("value") for c in (json.loads(body) if status == 200 else []) if c.get("name") == "brightness"), None)
    check("brightness 0.6 is kept across a stop and start (the setting, the value, the picture)",
          kept and value == 0.6, f"value {value}; mean luma {fresh_luma()} (before the change {before})")


# ---------------------------------------------------------------- controls without camd
direct = camctl("controls", "-d", "libcamera:0", "--no-daemon")
check("camctl controls -d libcamera:0 lists libcamera's controls, brightness a float from -1 to 1",
      direct.returncode == 0 and any(l.startswith("brightness (float) = 0") and "[-1.0 to 1.0" in l for l in direct.stdout.splitlines()),
      (direct.stdout + direct.stderr).strip()[-400:])
refused = camctl("controls", "-d", "libcamera:0", "--no-daemon", "brightness=0.5")
check("camctl controls -d libcamera:0 brightness=0.5 without camd says to set it through camd (nothing would keep it)",
      refused.returncode != 0 and "through camd" in refused.stderr, f"exit {refused.returncode}: {refused.stderr.strip()[-300:]}")

# ---------------------------------------------------------------- camd
config = write_config(os.path.join(WORK, "camd.toml"), f"""
[daemon]
socket = "{SOCK}"
socket_group = ""

[[camera]]
id = "vimc"
device = "libcamera:0"
size = "{ASKED}"
""")
photos = os.path.join(WORK, "photos")
CAMD_LOG = os.path.join(RESULTS, "camd.log")


def supervisor_socket(path="/run/camd-libcamera-notify.sock"):
    """systemd's part, played by the test: a notify socket (NOTIFY_SOCKET tells camd that
    systemd supervises it and will start it again after it exits 75), read all the time so
    camd's sd_notify never blocks on a full queue; returns the path and the messages read."""
    if os.path.exists(path):
        os.unlink(path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    listener.bind(path)
    messages = []

    def drain():
        while True:
            messages.append(listener.recv(4096).decode(errors="replace"))

    threading.Thread(target=drain, daemon=True).start()
    return path, messages


NOTIFY, notified = supervisor_socket()
SUPERVISED = {"NOTIFY_SOCKET": NOTIFY}
camd = start_camd(CAMD, config, photos, CAMD_LOG, extra_env=SUPERVISED)
try:
    running = wait_for(lambda: camera_status(SOCK, "vimc").get("state") == "running"
                       and camera_status(SOCK, "vimc").get("frames_captured", 0) > 3, 90)
    st = camera_status(SOCK, "vimc") if running else {}
    check(f"camd runs libcamera:0: status running, size is the adjusted {ADJUSTED[0]}x{ADJUSTED[1]}, format RGB3 or BGR3",
          running and st.get("size") == f"{ADJUSTED[0]}x{ADJUSTED[1]}" and st.get("format") in ("RGB3", "BGR3"),
          json.dumps({k: st.get(k) for k in ("state", "size", "format", "source", "reason")}))
    status, _, body = call(SOCK, "GET", "/v1/cameras/vimc/snapshot", timeout=60)
    ok, detail = picture_ok("camd-snapshot.jpg", body) if status == 200 else (False, f"HTTP {status}")
    check(f"camd snapshot: a {ADJUSTED[0]}x{ADJUSTED[1]} JPEG with the bars", ok, detail)
    _, _, parts = read_stream(SOCK, "/v1/cameras/vimc/stream", seconds=4)
    check("camd MJPEG stream for 4 s: at least 5 JPEG parts", len(parts) >= 5, f"{len(parts)} parts")
    status, _, body = call(SOCK, "GET", "/v1/devices", timeout=60)
    devices = json.loads(body) if status == 200 else []
    check("GET /v1/devices lists libcamera:0", any(d.get("path") == "libcamera:0" for d in devices),
          json.dumps([d.get("path") for d in devices]))
    check_controls()
    # Unplugged: vimc unbound from its driver while camd streams (rmmod cannot: libcamera holds its
    # nodes open). libcamera 0.0.3 aborts a process that stops such a camera before it has marked
    # it disconnected (and does not always mark it), and one that still holds it when it comes
    # back (it registers the camera again under the same id). So camd leaves it, and under
    # systemd exits 75 at once; camd.service's RestartForceExitStatus=75 starts it again, and
    # the new camd takes the camera when it is back. Here the test plays systemd.
    with open(f"{VIMC}/unbind", "w") as f:
        f.write("vimc.0")
    t0 = time.time()
    left = wait_for(lambda: camera_status(SOCK, "vimc").get("state") not in ("running", None), 30, 0.1)
    took = time.time() - t0
    status, _, body = call(SOCK, "GET", "/v1/cameras/vimc/snapshot", timeout=30) if left else (None, None, b"")
    st = camera_status(SOCK, "vimc") if left else {}
    check("vimc unbound while streaming: within 3 s the camera is waiting for its device and a snapshot is a 503",
          left and took <= 3 and st.get("state") == "waiting-for-device" and status == 503,
          f"after {took:.1f}s: {json.dumps({k: st.get(k) for k in ('state', 'reason')})}; snapshot HTTP {status}")
    exited = wait_for(lambda: camd.poll() is not None, 90, 0.5)
    with open(CAMD_LOG, errors="replace") as f:
        said = next((line.strip() for line in f if "went away while streaming" in line and "exiting so systemd restarts camd" in line), "")
    check("vimc unbound while streaming: camd exits 75 within 90 s (not aborted by libcamera) and says why",
          exited and camd.returncode == 75 and said != "",
          f"after {time.time() - t0:.1f}s: exit {camd.returncode}; {said or 'no line saying why'}")
    if camd.poll() is None:
        stop_camd(camd)
    camd = start_camd(CAMD, config, photos, CAMD_LOG, extra_env=SUPERVISED)  # as camd.service would
    waiting = wait_for(lambda: camera_status(SOCK, "vimc").get("state") == "waiting-for-device", 90)
    st = camera_status(SOCK, "vimc") if waiting else {}
    check("the new camd waits for the camera while it is away",
          waiting and "libcamera" in (st.get("reason") or ""), json.dumps({k: st.get(k) for k in ("state", "reason")}))
    with open(f"{VIMC}/bind", "w") as f:
        f.write("vimc.0")
    t0 = time.time()
    back = wait_for(lambda: camera_status(SOCK, "vimc").get("state") == "running"
                    and camera_status(SOCK, "vimc").get("frames_captured", 0) > 3, 90)
    took = time.time() - t0
    status, _, body = call(SOCK, "GET", "/v1/cameras/vimc/snapshot", timeout=60) if back else (None, None, b"")
    ok, detail = picture_ok("camd-snapshot-back.jpg", body) if status == 200 else (False, f"HTTP {status}")
    check("vimc bound again: the camera runs again and a snapshot has the bars, camd still up",
          back and ok and camd.poll() is None,
          f"after {took:.1f}s: {json.dumps({k: camera_status(SOCK, 'vimc').get(k) for k in ('state', 'reason')})}; {detail}"
          + ("" if camd.poll() is None else f"; camd exited {camd.returncode}"))
    check("camd told its supervisor it was ready, as under systemd", sum("READY=1" in m for m in notified) >= 2,
          f"{sum('READY=1' in m for m in notified)} READY=1 of {len(notified)} messages")
finally:
    stop_camd(camd)

sys.exit(suite.finish())
