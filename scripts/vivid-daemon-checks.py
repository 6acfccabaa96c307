#!/usr/bin/env python3
"""camd as a process on vivid, inside the test VM (run by scripts/vivid-guest.sh).

What only a running camd process can show: READY=1, WATCHDOG=1 and STATUS= on
a NOTIFY_SOCKET, the socket's mode and group, camctl talking to the daemon,
and SIGTERM removing the socket. The capture session on vivid (rate, colours,
stream, configure, stop releasing the device, the devices list) is
VividTests' (VividSessionTests.swift); image options, EXIF, photos, controls
and the JSON of each route are the host Swift tests' (ControlAPITests,
JPEGTests, CaptureSessionTests); disconnects, driver errors and signals are
vivid-fault-checks.py's.
Prints PASS/FAIL lines and a final "N passed, N failed" line.

usage: vivid-daemon-checks.py REPO RESULTS_DIR
"""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from pictures import decode  # noqa: E402
from camdclient import (NotifyListener, Suite, call as call_on, camera_status, start_camd, stop_camd,  # noqa: E402
                        vivid_config, wait_for)

REPO, RESULTS = sys.argv[1], sys.argv[2]
CAMD = os.path.join(REPO, ".build/debug/camd")
CAMCTL = os.path.join(REPO, ".build/debug/camctl")
SOCK = "/run/camd-test.sock"
NOTIFY = "/run/camd-notify.sock"
WORK = tempfile.mkdtemp(prefix="camd-daemon-")
PHOTOS = os.path.join(WORK, "photos")

suite = Suite(os.path.join(RESULTS, "daemon-checks.log"))
check = suite.check


def call(method, path, body=None, timeout=60):
    return call_on(SOCK, method, path, body, timeout)


def status():
    return camera_status(SOCK, "vivid")


def camctl(*args):
    """camctl as a process, talking to our camd."""
    out = subprocess.run([CAMCTL, *args], capture_output=True, env=dict(os.environ, CAMD_SOCKET=SOCK), timeout=90)
    return out.returncode, (out.stdout + out.stderr).decode(errors="replace")


config = vivid_config(os.path.join(WORK, "camd.toml"), SOCK, daemon_extra='log_level = "debug"')
notify = NotifyListener(NOTIFY)
notify.start()
started = time.time()
camd = start_camd(CAMD, config, PHOTOS, os.path.join(RESULTS, "camd-daemon.log"),
                  {"NOTIFY_SOCKET": NOTIFY, "WATCHDOG_USEC": "2000000"})
ready = wait_for(lambda: notify.has("READY=1"), 90)
check("camd sends READY=1 once its socket is bound and the camera started", ready,
      f"{time.time() - started:.1f} s after start")
check("the socket is srw-rw---- group video", oct(os.stat(SOCK).st_mode & 0o777) == "0o660" and os.stat(SOCK).st_gid == 44)

try:
    # camctl through the daemon.
    rc, out = camctl("status")
    check("camctl status shows the vivid camera running", rc == 0 and "vivid" in out and "running" in out, out[-200:])
    rc, out = camctl("stop", "vivid")
    check("camctl stop vivid: idle", rc == 0 and status()["state"] == "idle", out[-200:])
    rc, out = camctl("start", "vivid")
    check("camctl start vivid: running", rc == 0 and status()["state"] == "running", out[-200:])
    rc, out = camctl("controls", "contrast=100")
    _, _, data = call("GET", "/v1/cameras/vivid/controls")
    contrast = next((c.get("value") for c in json.loads(data) if c["name"] == "contrast"), None)
    check("camctl controls contrast=100 sets it through the daemon", rc == 0 and contrast == 100,
          f"exit {rc}, contrast {contrast}; {out[-160:]}")
    camctl("controls", "contrast=128")
    rc, out = camctl("snapshot", "-o", os.path.join(WORK, "via-daemon.jpg"))
    check("camctl snapshot goes through the running daemon", rc == 0 and "camd camera vivid" in out, out[-200:])
    # camctl contact-sheet asks camd for the sheet and writes it: the same JPEG the API serves.
    # (The sheet's layout is ContactSheetTests' and ImageRouteTests.photoThumbnailsAndContactSheets'.)
    for _ in range(3):
        call("POST", "/v1/cameras/vivid/snapshot")
    _, _, api_sheet = call("GET", "/v1/photos/contact-sheet?camera=vivid&cols=3&cell=96")
    sheet_path = os.path.join(WORK, "sheet.jpg")
    rc, out = camctl("contact-sheet", "--camera", "vivid", "--cols", "3", "--cell", "96", "-o", sheet_path)
    sheet = decode(open(sheet_path, "rb").read())[0] if rc == 0 and os.path.exists(sheet_path) else None
    check("camctl contact-sheet through camd writes the sheet the API gives (3 photos, 1 row of 3)",
          sheet is not None and sheet == decode(api_sheet)[0] and 3 * 96 < sheet[0] < 4 * 96,
          f"exit {rc}, {sheet} (API {decode(api_sheet)[0]}); {out[-160:]}")
    for photo in json.loads(call("GET", "/v1/photos?camera=vivid")[2]):
        call("DELETE", f"/v1/photos/{photo['name']}")

    watchdogs = notify.count("WATCHDOG=1")
    check("WATCHDOG=1 keeps coming while healthy (WATCHDOG_USEC=2 s)", watchdogs >= 5, f"{watchdogs} pings")
    check("STATUS= summarises the cameras", notify.has("STATUS=vivid running"))
finally:
    stop_camd(camd)
    check("SIGTERM: camd exits and removes its socket file", camd.returncode is not None and not os.path.exists(SOCK))

sys.exit(suite.finish())
