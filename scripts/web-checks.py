#!/usr/bin/env python3
"""camd's page of every camera (/) in a real browser: headless Chromium clicks it.

Starts camd with a loopback TCP listener on a camera (the synthetic source by default,
or a V4L2 device such as vivid's /dev/video0) and a second camera whose device is not
there, and headless Chromium, driven over the DevTools protocol (scripts/lib/devtools.py).
It opens /, uses the page with the mouse and the keyboard, and checks:

  page      / is served, links to /media, shows a card per camera; the files the page
            loads come to less than 100 KB in all (the "budget:" line)
  live      the card's live view plays the H.264 (camd-live.js) and the screenshot shows
            the eight colour bars in their colours
  state     the running camera says so; the absent one says it waits for its device, and why
  snapshot  a click on "Take photo" saves a photo (GET /v1/photos lists it) and the card
            shows its name, linked to /v1/media/{name}
  record    Enter on "Start recording" records, Enter again stops; the card links the movie
  controls  a slider moved with the arrow keys reaches GET /controls, and the page has a
            toggle and a menu where the device has them; a device with no controls (the
            synthetic source) shows the API's text saying so
  configure a refused fps (9999) shows the API's own error text next to the fps field;
            a good quality is applied
  updates   a camera stopped and started by someone else shows on the page by itself (the
            event stream, or polling where there is none); the page's own buttons do it too
  access    without tcp_token, GET /v1/session says full access and the page no view-only note
  events    camera_state and photo_saved events (an event stream faked with DevTools' Fetch)
            show on the page
  phone     at 375 px wide there is no horizontal scrollbar
  console   no console error, failed load or exception, except the answers the checks
            provoke (the refused configure; 404 for /v1/events where this camd has no such
            route; 400 for a device with no controls)

Then a second camd, with tcp_token and tcp_view_token (--sign-in-only runs just this):

  sign-in   / without credentials, once the browser's password prompt is dismissed, shows
            the sign-in page, its form labelled and drawn; a wrong token shows the API's
            error and stays; the right one reloads into the cameras' page with an HttpOnly,
            SameSite=Strict cookie, and with that cookie alone the live view plays the bars,
            Take photo saves, and /media (by the page's link) shows the photo; signed out in
            another tab, the open page turns into the sign-in page again
  links     / links to /media (above), and /media's link back opens /
  access    signed in with tcp_view_token, the page plays but hides its buttons and
            settings and disables the controls; /media shows the photos without Delete
  console   no errors on either sign-in's page but the 401s of the first load and the
            wrong token

Prints PASS/FAIL lines and "N passed, N failed"; exit status 1 on any failure.
--slow N multiplies every wait, for an emulated VM.

    scripts/web-checks.py [--camd .build/debug/camd] [--device testsrc] [--size 640x480]
        [--fps 15] [--slow 1] [--screenshot docs/web-page.png] [--sign-in-screenshot docs/sign-in.png]
"""
import argparse
import base64
import json
import os
import re
import secrets
import shutil
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from camdclient import Camd, Suite, call, call_json, connect, free_port  # noqa: E402
from devtools import Chromium  # noqa: E402
from pictures import BARS, PNG, bar_colours  # noqa: E402

CAMERA = "cam"
ABSENT = "porch"
ABSENT_DEVICE = "/dev/v4l/by-id/usb-camd-web-checks-absent-video-index0"
BUDGET = 100 * 1024

CARD = "document.querySelector('.camera[data-camera=\"%s\"]')"


def card_js(camera, expression):
    """JavaScript run with `card` bound to the camera's card (null when there is none)."""
    return "(() => { const card = %s; if (!card) return null; %s })()" % (CARD % camera, expression)


PLAYER = card_js(CAMERA, """
  const v = card.querySelector('.camd-live video');
  const info = (window.camdLive || {})['%s'] || {};
  if (!v) return {mode: null};
  return {mode: info.mode, state: info.state, error: info.error, connects: info.connects,
          currentTime: v.currentTime, videoWidth: v.videoWidth, videoHeight: v.videoHeight};""" % CAMERA)

PICTURE_BOX = card_js(CAMERA, """
  const v = card.querySelector('.camd-live video');
  v.scrollIntoView({block: 'nearest'});
  const r = v.getBoundingClientRect();
  const scale = Math.min(r.width / v.videoWidth, r.height / v.videoHeight);
  const w = v.videoWidth * scale, h = v.videoHeight * scale;
  return {left: r.left + (r.width - w) / 2, top: r.top + (r.height - h) / 2, width: w, height: h,
          dpr: window.devicePixelRatio};""")


def state_of(camera):
    return card_js(camera, """
  const line = card.querySelector('.state');
  return {state: line.dataset.state, badge: card.querySelector('.badge').textContent,
          detail: card.querySelector('.detail').textContent, live: line.getAttribute('aria-live'),
          player: !!card.querySelector('.camd-live'), placeholder: card.querySelector('.placeholder').textContent};""")


MESSAGE = card_js(CAMERA, """
  const m = card.querySelector('.message');
  return {text: m.textContent, error: m.classList.contains('error'),
          links: [...m.querySelectorAll('a')].map(a => a.getAttribute('href'))};""")


class Driver:
    """Mouse and keyboard for a page, as a person uses them."""

    def __init__(self, page):
        self.page = page

    def centre(self, expression):
        box = self.page.evaluate("(() => { const e = %s; if (!e) return null; e.scrollIntoView({block: 'center'});"
                                 " const r = e.getBoundingClientRect(); return {x: r.left + r.width / 2, y: r.top + r.height / 2}; })()"
                                 % expression)
        if not box:
            raise RuntimeError(f"nothing to click: {expression}")
        return box["x"], box["y"]

    def click(self, expression):
        x, y = self.centre(expression)
        self.page.command("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
        self.page.command("Input.dispatchMouseEvent", type="mousePressed", x=x, y=y, button="left", clickCount=1)
        self.page.command("Input.dispatchMouseEvent", type="mouseReleased", x=x, y=y, button="left", clickCount=1)

    def focus(self, expression):
        self.page.evaluate("(() => { const e = %s; e.scrollIntoView({block: 'center'}); e.focus(); })()" % expression)

    KEYS = {"Enter": ("Enter", 13, "\r"), "ArrowRight": ("ArrowRight", 39, None), "ArrowLeft": ("ArrowLeft", 37, None),
            "Tab": ("Tab", 9, None)}

    def key(self, name):
        code, vk, text = self.KEYS[name]
        down = dict(type="keyDown" if text else "rawKeyDown", key=name, code=code, windowsVirtualKeyCode=vk)
        if text:
            down["text"] = text
        self.page.command("Input.dispatchKeyEvent", **down)
        self.page.command("Input.dispatchKeyEvent", type="keyUp", key=name, code=code, windowsVirtualKeyCode=vk)

    def type_into(self, expression, text):
        """Focuses a text field, selects what is in it and types `text` over it."""
        self.page.evaluate("(() => { const e = %s; e.scrollIntoView({block: 'center'}); e.focus(); e.select(); })()" % expression)
        self.page.command("Input.insertText", text=text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--camd", default=None, help="camd binary (default: .build/debug/camd, then release)")
    ap.add_argument("--device", default="testsrc", help="the camera (default: camd's synthetic source)")
    ap.add_argument("--format", default=None, help="pixel format to ask the device for (e.g. YUYV)")
    ap.add_argument("--size", default="640x480")
    ap.add_argument("--fps", type=int, default=15)
    ap.add_argument("--window", default="1000x1000", help="the browser window (default 1000x1000)")
    ap.add_argument("--slow", type=float, default=1, help="multiplies every wait (an emulated VM: 20)")
    ap.add_argument("--tolerance", type=int, default=24, help="how far a bar's colour may be from the bars'")
    ap.add_argument("--bars-row", type=float, default=0.6,
                    help="where to read the bars, as a fraction of the picture's height (vivid's text covers most of "
                         "a small picture: 0.9 reads below it)")
    ap.add_argument("--screenshot", default=None, help="keep the screenshot of the page here too")
    ap.add_argument("--media-screenshot", default=None, help="with --device-only: keep the screenshot of /media here too")
    ap.add_argument("--sign-in-screenshot", default=None, help="keep the screenshot of the sign-in page here too")
    ap.add_argument("--sign-in-only", action="store_true", help="only the sign-in checks (a camd with tcp_token)")
    ap.add_argument("--device-only", action="store_true",
                    help="only what depends on the camera: the live view, its state, its controls, configure, stop and "
                         "start (the VM, where every wait is long, leaves the rest to the host's run on the synthetic source)")
    ap.add_argument("--no-sign-in", action="store_true",
                    help="leave out the sign-in checks (they need no camera: the VM, where every wait is long, leaves them to the host)")
    ap.add_argument("--workdir", default=None, help="scratch folder (default: a new one in $TMPDIR)")
    args = ap.parse_args()
    suite = Suite()
    slow = args.slow
    window = tuple(int(n) for n in args.window.split("x"))
    workdir = args.workdir or tempfile.mkdtemp(prefix="camd-web-checks-")
    if args.sign_in_only:
        check_sign_in(suite, args, workdir, window, slow)
        print(f"(scratch: {workdir})")
        return suite.finish()
    port = free_port()
    origin = f"http://127.0.0.1:{port}"
    absent = f'\n[[camera]]\nid = "{ABSENT}"\ndevice = "{ABSENT_DEVICE}"\nsize = "{args.size}"\n'
    camd = Camd(args.camd, workdir=workdir, size=args.size, fps=args.fps, camera_id=CAMERA, device=args.device,
                extra_camera=(f'format = "{args.format}"\n' if args.format else "") + absent,
                extra_daemon=f'tcp = "127.0.0.1:{port}"\n')
    browser = None
    page = None
    # Failed loads the page is meant to meet here (see "console" above).
    allowed = [(400, "/configure")]
    try:
        camd.start(timeout=30 * slow)
        # The event stream lands later: where this camd has none yet, the page does without.
        if events_status(camd.sock, slow) == 404:
            allowed.append((404, "/v1/events"))
            print("note: this camd has no /v1/events (404): the page must do without it", flush=True)
        controls_code, controls = call_json(camd.sock, "GET", f"/v1/cameras/{CAMERA}/controls", timeout=10 * slow)
        if controls_code == 400:
            allowed.append((400, f"/v1/cameras/{CAMERA}/controls"))

        # page: served, small, linked to /media.
        code, headers, body = call(camd.sock, "GET", "/", timeout=10 * slow)
        html = body.decode()
        files = {"/": len(body)}
        for path in sorted(set(re.findall(r'(?:src|href)="(/assets/[^"]+)"', html))):
            _, _, data = call(camd.sock, "GET", path, timeout=10 * slow)
            files[path] = len(data)
        total = sum(files.values())
        print(f"budget: {total} bytes in {len(files)} files (limit {BUDGET}): "
              + ", ".join(f"{name} {size}" for name, size in files.items()), flush=True)
        suite.check("page: / is served as HTML", code == 200 and headers.get("Content-Type", "").startswith("text/html"),
                    f"{code} {headers.get('Content-Type')}")
        suite.check("page: its own files are under 100 KB in all", total < BUDGET and len(files) >= 4,
                    f"{total} bytes in {len(files)} files")

        browser = Chromium(workdir, window=window, timeout=30 * slow)
        print(f"browser {browser.version.get('product')}", flush=True)
        page = browser.new_page()
        page.command("Media.enable")
        ui = Driver(page)
        started = time.time()
        page.open(f"{origin}/")
        cards = page.wait_for("(() => { const c = [...document.querySelectorAll('.camera')].map(e => e.dataset.camera);"
                              " return c.length >= 2 && c; })()", timeout=20 * slow)
        media = page.evaluate("(() => { const a = document.querySelector('header nav a'); return a && a.getAttribute('href'); })()")
        suite.check("page: a card for each camera, and the header links to the media library",
                    cards and set(cards) == {CAMERA, ABSENT} and media == "/media", f"cards {cards}, media link {media}")

        # live: the H.264 plays in the card, with the bars.
        playing = page.wait_for(f"(() => {{ const p = {PLAYER}; return p && p.currentTime > 0.5 && p; }})()", timeout=30 * slow)
        print(f"playing {time.time() - started:.1f} s after opening: {json.dumps(playing)}", flush=True)
        suite.check("live: the card plays the camera's H.264 through camd-live.js",
                    playing and playing["mode"] == "mse" and playing["state"] == "playing", json.dumps(playing))
        time.sleep(1 * slow)
        page.evaluate(PICTURE_BOX)  # scrolled to the picture before the first screenshot, as for the second
        first, first_at = page.evaluate(PLAYER), time.time()
        shot = page.screenshot()
        with open(os.path.join(workdir, "web-page-live.png"), "wb") as f:
            f.write(shot)
        worst, detail = read_bars(page, args)
        suite.check("live: the screenshot shows the eight colour bars in their colours", worst <= args.tolerance, detail)
        # The picture moves: the video's time keeps up with the clock (a quarter of its
        # pace at least: in the emulated VM it kept pace in the runs seen) and two
        # screenshots taken apart differ inside it.
        time.sleep(2 * min(slow, 2))
        second, wall = page.evaluate(PLAYER), time.time() - first_at
        left, top, w, h = picture_pixels(page)
        changed = PNG(shot).differing_pixels(PNG(page.screenshot()), left, top, w, h)
        advance = (second or {}).get("currentTime", 0) - (first or {}).get("currentTime", 0)
        suite.check("live: the picture moves: the video's time advances with the clock and two screenshots differ",
                    advance >= 0.25 * wall and changed >= 50 and second["connects"] == 1,
                    f"currentTime +{advance:.2f} s in {wall:.2f} s; {changed} of {w * h} pixels differ; "
                    f"connects {second.get('connects')}")

        # state: running, and waiting with the reason.
        running = page.evaluate(state_of(CAMERA))
        _, camera_status = call_json(camd.sock, "GET", f"/v1/cameras/{CAMERA}", timeout=10 * slow)
        size = ((camera_status or {}).get("status") or {}).get("size")
        suite.check("state: the running camera says Running and its size, in a live region",
                    running and running["badge"] == "Running" and running["live"] == "polite"
                    and size and size in running["detail"], f"{json.dumps(running)}; API size {size}")
        _, absent_status = call_json(camd.sock, "GET", f"/v1/cameras/{ABSENT}", timeout=10 * slow)
        reason = ((absent_status or {}).get("status") or {}).get("reason") or ""
        waiting = page.evaluate(state_of(ABSENT))
        suite.check("state: the absent camera waits for its device and says why",
                    waiting and waiting["state"] == "waiting-for-device" and "Waiting" in waiting["badge"]
                    and reason and reason in waiting["detail"] and not waiting["player"],
                    f"{json.dumps(waiting)}; API reason {reason!r}")

        if not args.device_only:
            # snapshot: a mouse click saves a photo.
            ui.click(card_js(CAMERA, "return card.querySelector('[data-action=snapshot]');"))
            saved = page.wait_for(f"(() => {{ const m = {MESSAGE}; return m && m.links.length && m; }})()", timeout=20 * slow)
            name = saved["links"][0].rsplit("/", 1)[-1] if saved else None
            _, photos = call_json(camd.sock, "GET", f"/v1/photos?camera={CAMERA}", timeout=10 * slow)
            names = [p.get("name") for p in (photos if isinstance(photos, list) else (photos or {}).get("photos", []))]
            suite.check("snapshot: a click on Take photo saves a photo that GET /v1/photos lists",
                        name and name in names and saved["links"][0] == f"/v1/media/{name}" and not saved["error"],
                        f"message {json.dumps(saved)}; photos {names[:3]}")
            if name:
                code, headers, _ = call(camd.sock, "GET", f"/v1/media/{name}", timeout=10 * slow)
                suite.check("snapshot: the card's link opens the photo", code == 200 and headers.get("Content-Type") == "image/jpeg",
                            f"{code} {headers.get('Content-Type')}")

            # record: the keyboard starts and stops a recording.
            record = card_js(CAMERA, "return card.querySelector('[data-action=record]');")
            ui.focus(record)
            ui.key("Enter")
            label = page.wait_for(card_js(CAMERA, "const b = card.querySelector('[data-action=record]');"
                                                   " return b.textContent === 'Stop recording' && b.textContent;"), timeout=20 * slow)
            _, recording = call_json(camd.sock, "GET", f"/v1/cameras/{CAMERA}/recordings", timeout=10 * slow)
            suite.check("record: Enter on Start recording records (GET .../recordings says so)",
                        label and (recording or {}).get("state") == "recording", f"button {label!r}, {json.dumps(recording)[:200]}")
            time.sleep(2 * slow)
            ui.focus(record)
            ui.key("Enter")
            movie = page.wait_for(f"(() => {{ const m = {MESSAGE}; return m && m.links.some(l => l.endsWith('.mp4')) && m; }})()",
                                  timeout=30 * slow)
            _, recording = call_json(camd.sock, "GET", f"/v1/cameras/{CAMERA}/recordings", timeout=10 * slow)
            suite.check("record: Enter again stops it and the card links the movie",
                        movie and (recording or {}).get("state") == "off" and movie["links"][-1].startswith("/v1/media/"),
                        f"message {json.dumps(movie)}, {json.dumps(recording)[:200]}")

        # controls: the device's own, set from the page.
        ui.click(card_js(CAMERA, "return card.querySelector('.controls summary');"))
        check_controls(suite, page, ui, camd, controls_code, controls, slow)

        # configure: the API's error next to the field, and a good value applied.
        ui.click(card_js(CAMERA, "return card.querySelector('.settings summary');"))
        page.wait_for(card_js(CAMERA, "return card.querySelector('.configure [name=fps]').value !== '';"), timeout=10 * slow)
        _, refused = call_json(camd.sock, "POST", f"/v1/cameras/{CAMERA}/configure", {"fps": 9999}, timeout=10 * slow)
        api_text = ((refused or {}).get("error") or {}).get("message")
        ui.type_into(card_js(CAMERA, "return card.querySelector('.configure [name=fps]');"), "9999")
        ui.key("Enter")
        shown = page.wait_for(card_js(CAMERA, """
          const input = card.querySelector('.configure [name=fps]');
          const error = document.getElementById(input.getAttribute('aria-describedby'));
          return error.textContent && {text: error.textContent, invalid: input.getAttribute('aria-invalid'),
                                       visible: error.offsetParent !== null, focused: document.activeElement === input};"""),
                              timeout=20 * slow)
        suite.check("configure: fps 9999 shows the API's error text next to the fps field",
                    api_text and shown and shown["text"] == api_text and shown["invalid"] == "true" and shown["visible"],
                    f"page {json.dumps(shown)}; API {api_text!r}")
        _, detail = call_json(camd.sock, "GET", f"/v1/cameras/{CAMERA}", timeout=10 * slow)
        suite.check("configure: the refused fps changed nothing", (detail or {}).get("settings", {}).get("fps") == args.fps,
                    f"fps {(detail or {}).get('settings', {}).get('fps')}")
        ui.type_into(card_js(CAMERA, "return card.querySelector('.configure [name=fps]');"), str(args.fps))
        ui.type_into(card_js(CAMERA, "return card.querySelector('.configure [name=quality]');"), "70")
        ui.click(card_js(CAMERA, "return card.querySelector('.configure button[type=submit]');"))
        applied = page.wait_for(card_js(CAMERA, "const m = card.querySelector('.form-message').textContent;"
                                                " return m.startsWith('Applied') && m;"), timeout=20 * slow)
        _, detail = call_json(camd.sock, "GET", f"/v1/cameras/{CAMERA}", timeout=10 * slow)
        quality = (detail or {}).get("settings", {}).get("quality")
        suite.check("configure: quality 70 is applied", applied and quality == 70, f"page {applied!r}, quality {quality}")

        # The screenshot for the docs: the page with the first card's panels open.
        page.evaluate("window.scrollTo(0, 0)")
        page.wait_for(f"(() => {{ const p = {PLAYER}; return p && p.state === 'playing' && p.currentTime > 0; }})()",
                      timeout=20 * slow)
        time.sleep(1 * slow)
        with open(os.path.join(workdir, "web-page.png"), "wb") as f:
            f.write(page.screenshot())
        if args.screenshot:
            shutil.copyfile(os.path.join(workdir, "web-page.png"), args.screenshot)

        # updates: someone else stops and starts the camera; the page follows by itself.
        call(camd.sock, "POST", f"/v1/cameras/{CAMERA}/stop", timeout=20 * slow)
        stopped = page.wait_for(f"(() => {{ const s = {state_of(CAMERA)}; return s && s.state === 'idle' && s; }})()",
                                timeout=15 * slow)
        suite.check("updates: a camera stopped through the API shows Stopped, without its live view",
                    stopped and stopped["badge"] == "Stopped" and not stopped["player"], json.dumps(stopped))
        call(camd.sock, "POST", f"/v1/cameras/{CAMERA}/start", timeout=20 * slow)
        again = page.wait_for(f"(() => {{ const s = {state_of(CAMERA)}; const p = {PLAYER};"
                              " return s && s.state === 'running' && p && p.state === 'playing' && p.currentTime > 0 && s; })()",
                              timeout=30 * slow)
        suite.check("updates: started again through the API, it shows Running and plays", again, json.dumps(again))
        power = card_js(CAMERA, "return card.querySelector('[data-action=power]');")
        ui.click(power)
        clicked = page.wait_for(f"(() => {{ const s = {state_of(CAMERA)}; return s && s.state === 'idle' && s; }})()",
                                timeout=20 * slow)
        _, after = call_json(camd.sock, "GET", f"/v1/cameras/{CAMERA}", timeout=10 * slow)
        suite.check("updates: the page's Stop camera stops it",
                    clicked and ((after or {}).get("status") or {}).get("state") == "idle", json.dumps(clicked))
        ui.click(power)
        clicked = page.wait_for(f"(() => {{ const s = {state_of(CAMERA)}; const p = {PLAYER};"
                                " return s && s.state === 'running' && p && p.state === 'playing' && s; })()",
                                timeout=30 * slow)
        suite.check("updates: the page's Start camera starts it, and it plays", clicked, json.dumps(clicked))

        if not args.device_only:
            # phone: 375 px wide, every panel open, no horizontal scrollbar.
            page.command("Emulation.setDeviceMetricsOverride", width=375, height=812, deviceScaleFactor=1, mobile=True)
            page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
            time.sleep(1 * slow)
            widths = page.evaluate("({scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth,"
                                   " inner: window.innerWidth})")
            with open(os.path.join(workdir, "web-page-375.png"), "wb") as f:
                f.write(page.screenshot())
            suite.check("phone: at 375 px wide the page has no horizontal scrollbar",
                        widths["scroll"] <= widths["client"] and widths["client"] <= 375, json.dumps(widths))
            page.command("Emulation.setDeviceMetricsOverride", width=window[0], height=window[1], deviceScaleFactor=1, mobile=False)

            # access: without tcp_token every caller may do everything, and the page says nothing of it.
            session = page.evaluate("fetch('/v1/session').then(r => r.json().then(body => ({status: r.status, body})))")
            hidden = page.evaluate("document.getElementById('access').hidden")
            suite.check("access: without tcp_token GET /v1/session says full access, and the page shows no view-only note",
                        session and session["status"] == 200 and session["body"] == {"access": "full"} and hidden, json.dumps(session))
            check_event_stream(suite, browser, origin, slow)

        if args.device_only:
            check_media(suite, page, ui, camd, origin, args, workdir, slow)

        errors = page.console_errors(allowed)
        suite.check("console: no errors, failed loads or exceptions", not errors, " | ".join(errors)[:600])
    except Exception as e:  # noqa: BLE001 - reported as a failure, with the logs
        suite.check("web page checks ran to the end", False, f"{type(e).__name__}: {e}; camd log: {camd.tail(10)}")
    finally:
        if browser:
            browser.close()
        camd.stop()
    if not (args.no_sign_in or args.device_only):
        check_sign_in(suite, args, workdir, window, slow)
    print(f"(scratch: {workdir})")
    return suite.finish()


SIGN_IN_FORM = """(() => {
  const form = document.getElementById('camd-signin'), field = document.getElementById('camd-token');
  if (!form || !field) return null;
  const shown = e => !!e && e.offsetParent !== null && e.getBoundingClientRect().width > 0;
  const button = form.querySelector('button[type=submit]'), box = button.getBoundingClientRect();
  return {title: document.title, heading: document.querySelector('h1').textContent,
          form: form.getAttribute('aria-labelledby') && document.getElementById(form.getAttribute('aria-labelledby')).textContent,
          label: field.labels.length ? field.labels[0].textContent : null, type: field.type,
          visible: shown(form) && shown(field) && shown(button), button: button.textContent,
          paint: [Math.round(box.left + 8), Math.round(box.top + box.height / 2)],
          status: document.getElementById('camd-signin-status').textContent, cookie: document.cookie};
})()"""


class PromptDismisser:
    """Answers the browser's password prompt for `url` with Cancel, as a person who dismisses
    it does, while in a `with` block. Headless Chromium has no prompt: it fails the navigation
    (ERR_INVALID_AUTH_CREDENTIALS) instead. DevTools' Fetch pauses the page's requests for
    `url` and answers their challenges with CancelAuth, which is what the prompt's Cancel does."""

    def __init__(self, page, url):
        self.page, self.url = page, url
        self.challenges = []
        self._stop = threading.Event()

    def __enter__(self):
        self.page.command("Fetch.enable", handleAuthRequests=True, patterns=[{"urlPattern": self.url, "requestStage": "Request"}])
        self._mark = len(self.page.browser.events)
        self._thread = threading.Thread(target=self._answer, daemon=True)
        self._thread.start()
        return self

    def _answer(self):
        browser, seen = self.page.browser, self._mark
        while not self._stop.is_set():
            events = browser.events[seen:]
            seen += len(events)
            for event in events:
                if event.get("sessionId") != self.page.session:
                    continue
                if event.get("method") == "Fetch.requestPaused":
                    self.page.command("Fetch.continueRequest", requestId=event["params"]["requestId"])
                elif event.get("method") == "Fetch.authRequired":
                    self.challenges.append(event["params"]["authChallenge"])
                    self.page.command("Fetch.continueWithAuth", requestId=event["params"]["requestId"],
                                      authChallengeResponse={"response": "CancelAuth"})
            time.sleep(0.05)

    def __exit__(self, *_):
        self._stop.set()
        self._thread.join(5)
        self.page.command("Fetch.disable")


def sign_in(page, ui, token, slow):
    """Types `token` into the sign-in page and presses Enter; the page's state once it has
    answered: reloaded (the load event) or the status line's error."""
    mark = len(page.browser.events)
    page.evaluate("window.camdChecksBeforeSignIn = true")
    ui.type_into("document.getElementById('camd-token')", token)
    ui.key("Enter")
    deadline = time.time() + 20 * slow
    while time.time() < deadline:
        if any(e.get("method") == "Page.loadEventFired" and e.get("sessionId") == page.session
               for e in page.browser.events[mark:]):
            return "reloaded"
        error = page.evaluate("(() => { const s = document.getElementById('camd-signin-status');"
                              " return !!window.camdChecksBeforeSignIn && s && s.classList.contains('error') && s.textContent; })()")
        if error:
            return error
        time.sleep(0.25)
    return None


def check_sign_in(suite, args, workdir, window, slow):
    """camd with tcp_token and tcp_view_token: the sign-in page, a wrong token, the right one
    (the page, its live view, its buttons and /media then work with the cookie alone) and the
    viewer's token, in a browser of its own."""
    workdir = os.path.join(workdir, "sign-in")
    port = free_port()
    origin = f"http://127.0.0.1:{port}"
    full, view = "full-" + secrets.token_urlsafe(12), "view-" + secrets.token_urlsafe(12)
    camd = Camd(args.camd, workdir=workdir, size=args.size, fps=args.fps, camera_id=CAMERA, device=args.device,
                extra_camera=f'format = "{args.format}"\n' if args.format else "",
                extra_daemon=f'tcp = "127.0.0.1:{port}"\ntcp_token = "{full}"\ntcp_view_token = "{view}"\n')
    browser = None
    # The failed loads these checks provoke: the first load of each page before signing in, and the wrong token.
    allowed = [(401, f"{origin}/"), (401, "/v1/session")]
    try:
        camd.start(timeout=30 * slow)
        if events_status(camd.sock, slow) == 404:
            allowed.append((404, "/v1/events"))
        if call(camd.sock, "GET", f"/v1/cameras/{CAMERA}/controls", timeout=10 * slow)[0] == 400:
            allowed.append((400, f"/v1/cameras/{CAMERA}/controls"))
        browser = Chromium(workdir, window=window, timeout=30 * slow)
        page = browser.new_page()
        ui = Driver(page)

        # The sign-in page, for a navigation without credentials.
        with PromptDismisser(page, f"{origin}/") as prompts:
            page.open(f"{origin}/", timeout=20 * slow)
        print(f"the browser's challenge: {json.dumps(prompts.challenges)}", flush=True)
        form = page.wait_for(SIGN_IN_FORM, timeout=20 * slow)
        shot = page.screenshot()
        with open(os.path.join(workdir, "sign-in.png"), "wb") as f:
            f.write(shot)
        if args.sign_in_screenshot:
            # For the docs: a small window, so the form is not lost in an empty one.
            page.command("Emulation.setDeviceMetricsOverride", width=480, height=480, deviceScaleFactor=1, mobile=False)
            time.sleep(0.5 * slow)
            with open(args.sign_in_screenshot, "wb") as f:
                f.write(page.screenshot())
            page.command("Emulation.setDeviceMetricsOverride", width=window[0], height=window[1], deviceScaleFactor=1, mobile=False)
        # The button drawn in its blue (#3b82c4) where the page says it is (left of its white text): the form is really on screen.
        drawn = PNG(shot).pixel(*form["paint"]) if form else None
        suite.check("sign-in: / without credentials shows the sign-in page, its form labelled and on screen",
                    form and form["title"] == "Sign in · camd" and form["label"] == "Token" and form["type"] == "password"
                    and form["form"] == "Sign in to camd" and form["visible"]
                    and drawn and max(abs(a - b) for a, b in zip(drawn, (0x3b, 0x82, 0xc4))) <= 24,
                    f"{json.dumps(form)}; button drawn as {drawn}")

        # A wrong token: the API's error, and the page stays.
        wrong = sign_in(page, ui, "not-the-token", slow)
        where = page.evaluate("({url: location.href, title: document.title, same: !!window.camdChecksBeforeSignIn,"
                              " invalid: document.getElementById('camd-token').getAttribute('aria-invalid')})")
        suite.check("sign-in: a wrong token shows an error and stays on the sign-in page",
                    wrong and wrong != "reloaded" and "not right" in wrong and where["same"] and where["invalid"] == "true"
                    and where["url"] == f"{origin}/", f"{wrong!r}; {json.dumps(where)}")

        # The right token: the page reloads as the cameras' page, and everything on it works with the cookie.
        right = sign_in(page, ui, full, slow)
        cards = page.wait_for("(() => { const c = [...document.querySelectorAll('.camera')].map(e => e.dataset.camera);"
                              " return c.length && c; })()", timeout=20 * slow)
        cookies = page.command("Network.getCookies", urls=[origin]).get("cookies", [])
        session = next((c for c in cookies if c["name"] == "camd_session"), None)
        suite.check("sign-in: the right token reloads the page as the cameras' page, with an HttpOnly, SameSite=Strict cookie",
                    right == "reloaded" and cards == [CAMERA] and session and session["httpOnly"]
                    and session.get("sameSite") == "Strict" and page.evaluate("document.cookie") == "",
                    f"{right!r}; cards {cards}; cookie {json.dumps(session and {k: session.get(k) for k in ('httpOnly', 'sameSite', 'path')})}")
        playing = page.wait_for(f"(() => {{ const p = {PLAYER}; return p && p.state === 'playing' && p.currentTime > 0.5 && p; }})()",
                                timeout=30 * slow)
        time.sleep(1 * slow)
        worst, detail = read_bars(page, args) if playing else (999, "not playing")
        suite.check("sign-in: signed in, the live view plays with the bars (the cookie reaches the video's fetch)",
                    playing and worst <= args.tolerance, f"{json.dumps(playing)}; {detail}")
        full_access = page.evaluate(card_js(CAMERA, "return {note: document.getElementById('access').hidden,"
                                                    " actions: card.querySelector('.actions').offsetParent !== null};"))
        ui.click(card_js(CAMERA, "return card.querySelector('[data-action=snapshot]');"))
        saved = page.wait_for(f"(() => {{ const m = {MESSAGE}; return m && (m.links.length || m.error) && m; }})()", timeout=20 * slow)
        suite.check("sign-in: with tcp_token the buttons are there and Take photo saves (a POST with the cookie)",
                    full_access and full_access["note"] and full_access["actions"] and saved and saved["links"]
                    and not saved["error"], f"{json.dumps(full_access)}; {json.dumps(saved)}")

        # /media with the same cookie, reached by the page's link, and back by its own.
        ui.click("document.querySelector('header nav a[href=\"/media\"]')")
        media = page.wait_for("location.pathname === '/media' && window.camdMedia && window.camdMedia.thumbnailsLoaded > 0"
                              " && {items: camdMedia.items.length, shown: camdMedia.thumbnailsLoaded, error: camdMedia.error,"
                              " back: !!document.querySelector('header a[href=\"/\"]')}", timeout=20 * slow)
        suite.check("sign-in: /media, opened by the page's link, lists and shows the photo with the cookie",
                    media and media["items"] >= 1 and not media["error"], json.dumps(media))
        if media and media["back"]:
            ui.click("document.querySelector('header a[href=\"/\"]')")
        back = page.wait_for("location.pathname === '/' && document.querySelectorAll('.camera').length", timeout=20 * slow)
        suite.check("links: /media links back to /, and the link opens the cameras' page", media and media["back"] and back,
                    f"link {media and media['back']}, cameras {back}")
        errors = page.console_errors(allowed)
        suite.check("sign-in: no console errors but the 401s of the first load and the wrong token", not errors,
                    " | ".join(errors)[:600])

        # The viewer's token: the page, without what changes things. In a tab of its own, the
        # first one closed: clearing the cookies below signs that one out too, and its reload
        # to the sign-in page would run beside the viewer's checks.
        page.close()
        viewer = browser.new_page()
        viewer.command("Network.clearBrowserCookies")
        with PromptDismisser(viewer, f"{origin}/"):
            viewer.open(f"{origin}/", timeout=20 * slow)
        viewer.wait_for(SIGN_IN_FORM, timeout=20 * slow)
        signed = sign_in(viewer, Driver(viewer), view, slow)
        seen = viewer.wait_for(card_js(CAMERA, """
          const shown = e => !!e && e.offsetParent !== null;
          const running = card.querySelector('.state').dataset.state;
          const p = (window.camdLive || {})['%s'] || {};
          return running && p.state === 'playing' && {actions: shown(card.querySelector('.actions')),
            settings: shown(card.querySelector('.settings')), controlsDisabled: card.querySelector('.control-list').disabled,
            note: shown(document.getElementById('access')), state: running, live: p.state};""" % CAMERA), timeout=30 * slow)
        suite.check("access: signed in with tcp_view_token, the page plays but shows no buttons or settings, and the controls disabled",
                    signed == "reloaded" and seen and not seen["actions"] and not seen["settings"] and seen["controlsDisabled"]
                    and seen["note"], f"{signed!r}; {json.dumps(seen)}")
        ui = Driver(viewer)
        ui.click("document.querySelector('header nav a[href=\"/media\"]')")
        library = viewer.wait_for("location.pathname === '/media' && window.camdMedia && camdMedia.thumbnailsLoaded > 0"
                                  " && {items: camdMedia.items.length, error: camdMedia.error,"
                                  " delete: !document.querySelector('#viewer [data-act=delete]').hidden}", timeout=20 * slow)
        suite.check("access: signed in with tcp_view_token, /media shows the photos but offers no Delete",
                    library and library["items"] >= 1 and not library["error"] and not library["delete"], json.dumps(library))
        ui.click("document.querySelector('header a[href=\"/\"]')")
        viewer.wait_for("location.pathname === '/' && document.querySelectorAll('.camera').length", timeout=20 * slow)
        errors = viewer.console_errors(allowed)
        suite.check("access: no console errors for the viewer but the 401 of the first load", not errors, " | ".join(errors)[:600])

        # Signed out elsewhere (another tab; a restart of camd does the same): the open page's next
        # request is refused, and the page shows the sign-in page rather than an error that never goes.
        other = browser.new_page()
        other.open(f"{origin}/assets/camd-signin.js", timeout=20 * slow)  # a page of camd's origin, and light
        with PromptDismisser(viewer, f"{origin}/"):
            out = other.evaluate("fetch('/v1/session', {method: 'DELETE'}).then(r => r.status)")
            # Back to the page's tab, as a person would: it was hidden while the other one was in front.
            browser.command("Target.activateTarget", targetId=viewer.target)
            again = viewer.wait_for(SIGN_IN_FORM, timeout=20 * slow)
        notice = None if again else viewer.evaluate("(() => { const n = document.getElementById('notice'); return n && n.textContent; })()")
        suite.check("sign-in: signed out in another tab, the open page turns into the sign-in page",
                    out == 204 and again and again["visible"], f"DELETE {out}; sign-in form {json.dumps(again)}; notice {notice!r}")
    except Exception as e:  # noqa: BLE001 - reported as a failure, with the logs
        suite.check("sign-in checks ran to the end", False, f"{type(e).__name__}: {e}; camd log: {camd.tail(10)}")
    finally:
        if browser:
            browser.close()
        camd.stop()


def picture_pixels(page):
    """Where the live view's picture is in a screenshot, in device pixels, 2 inside its edges
    (scrolled into view first): left, top, width, height."""
    box = page.evaluate(PICTURE_BOX)
    dpr = box["dpr"]
    return (int(box["left"] * dpr) + 2, int(box["top"] * dpr) + 2, int(box["width"] * dpr) - 4,
            int(box["height"] * dpr) - 4)


def read_bars(page, args):
    """How far the live view's bars, read from a screenshot, are from the bars' colours (the
    furthest channel), and what was read."""
    left, top, w, h = picture_pixels(page)
    picture = PNG(page.screenshot())
    # bar_colours reads 3/5 down the box it is given: a box of 20 rows puts that at --bars-row.
    row_top = top + int(h * args.bars_row) - 12
    colours = bar_colours(picture.pixel, left, row_top, w, 20) if w > 100 and h > 50 else []
    worst = max((abs(x - y) for got, want in zip(colours, BARS) for x, y in zip(got, want)), default=999)
    return worst, f"picture at {left},{top} {w}x{h}, row {row_top + 12}; read {colours}, furthest channel {worst} from {BARS}"


def events_status(target, slow):
    """The status /v1/events answers (read the head only: an event stream does not end)."""
    s = connect(target, timeout=10 * slow)
    try:
        s.sendall(b"GET /v1/events HTTP/1.1\r\nHost: camd\r\n\r\n")
        head = b""
        while b"\r\n" not in head:
            chunk = s.recv(4096)
            if not chunk:
                break
            head += chunk
        found = re.match(rb"HTTP/1\.1 (\d+)", head)
        return int(found.group(1)) if found else None
    finally:
        s.close()


def check_media(suite, page, ui, camd, origin, args, workdir, slow):
    """The media library page on the camera's own photos (the host's media-checks.py runs
    the rest of it on the synthetic source): square cells with camd's thumbnails of the
    pictures, and a click that opens the full-size photo."""
    names = []
    for _ in range(2):
        code, _, body = call(camd.sock, "POST", f"/v1/cameras/{CAMERA}/snapshot", timeout=30 * slow)
        if code == 201:
            names.append(json.loads(body).get("name"))
    page.open(f"{origin}/media?cell=120", timeout=60 * slow)
    cells = page.wait_for("""(() => { const cells = [...document.querySelectorAll('.cell')];
      return cells.length >= 2 && cells.every(c => !c.classList.contains('loading') && c.querySelector('img').naturalWidth)
        && cells.slice(0, 2).map(c => { const r = c.getBoundingClientRect(), i = c.querySelector('img');
             return {left: r.left, top: r.top, width: r.width, height: r.height, natural: i.naturalWidth,
                     naturalHeight: i.naturalHeight}; }); })()""", timeout=30 * slow)
    size = page.evaluate("window.camdMedia && window.camdMedia.thumbnailSize")
    shot = page.screenshot()
    with open(os.path.join(workdir, "media-page-camera.png"), "wb") as f:
        f.write(shot)
    if args.media_screenshot:
        shutil.copyfile(os.path.join(workdir, "media-page-camera.png"), args.media_screenshot)
    colours = set()
    if cells:
        a = cells[0]
        picture, row = PNG(shot), int(a["top"] + a["height"] / 2)
        colours = {picture.pixel(x, row) for x in range(int(a["left"]) + 2, int(a["left"] + a["width"]) - 2, 3)}
    suite.check("media: /media shows the camera's photos in square cells, camd's thumbnails at the cell's pixels",
                len(names) == 2 and cells and all(abs(c["width"] - c["height"]) < 0.5 for c in cells)
                and all(c["natural"] == c["naturalHeight"] == size for c in cells) and len(colours) >= 4,
                f"saved {names}; cells {json.dumps(cells)}; thumbnail {size} px; {len(colours)} colours across the first cell")
    if cells:
        ui.click("document.querySelector('.cell')")
    width, height = (int(n) for n in args.size.split("x"))
    opened = page.wait_for("(() => { const d = document.querySelector('#viewer'), i = document.querySelector('#full');"
                           " return d && d.open && i.complete && i.naturalWidth && {width: i.naturalWidth, height: i.naturalHeight,"
                           " src: i.getAttribute('src')}; })()", timeout=20 * slow)
    # Two photos taken back to back may be of one frame (the second answered from the JPEG
    # the first made): they then share a capture time, and either may be the first cell.
    suite.check("media: a click opens a photo just saved (the first cell) full size in the viewer",
                opened and (opened["width"], opened["height"]) == (width, height) and names
                and any(name in opened["src"] for name in names),
                f"{json.dumps(opened)}; saved {names}")


def check_controls(suite, page, ui, camd, code, controls, slow):
    """The controls panel against what GET /controls says the device has."""
    if code != 200 or not controls:
        note = ((controls or {}).get("error") or {}).get("message") if isinstance(controls, dict) else "no controls"
        shown = page.wait_for(card_js(CAMERA, "return card.querySelector('.controls-note').textContent;"), timeout=15 * slow)
        suite.check("controls: a device with none shows the API's text saying so", shown and note and note in shown,
                    f"page {shown!r}; API {code} {note!r}")
        return
    kinds = {c["type"] for c in controls if not c.get("read_only")}
    shown = page.wait_for(card_js(CAMERA, """
      const list = card.querySelector('.control-list');
      return list.querySelectorAll('.control').length && {controls: list.querySelectorAll('.control').length,
        range: list.querySelectorAll('input[type=range]').length, toggle: list.querySelectorAll('input[type=checkbox]').length,
        menu: list.querySelectorAll('select').length, button: list.querySelectorAll('button').length,
        labels: [...list.querySelectorAll('label')].slice(0, 6).map(l => l.textContent)};"""), timeout=20 * slow)
    want = {"range": "integer" in kinds, "toggle": "boolean" in kinds, "menu": bool(kinds & {"menu", "intmenu"}),
            "button": "button" in kinds}
    suite.check("controls: every control the device has, as sliders, toggles, menus and buttons",
                shown and shown["controls"] == len(controls) and all(shown[k] > 0 for k, w in want.items() if w),
                f"page {json.dumps(shown)}; device {len(controls)} controls of kinds {sorted(kinds)}")
    names = [c["name"] for c in controls]
    settable = [c for c in controls if c["type"] == "integer" and not c.get("read_only") and not c.get("inactive")
                and c["value"] is not None and c["value"] + (c.get("step") or 1) <= c["maximum"]]
    settable.sort(key=lambda c: (c["name"] != "brightness", names.index(c["name"])))
    if not settable:
        suite.check("controls: a slider to move", False, f"no settable integer control in {names}")
        return
    control = settable[0]
    slider = card_js(CAMERA, "return card.querySelector('.control[data-control=\"%s\"] input[type=range]');" % control["name"])
    output = card_js(CAMERA, "return card.querySelector('.control[data-control=\"%s\"] output').textContent;" % control["name"])
    expected = min(control["maximum"], control["value"] + 3 * (control.get("step") or 1))
    # DevTools holds the page's requests to /controls. While the first PUT is held the
    # next presses must wait for it (one write at a time, the newest value); the held
    # ones are then let go newest first, so requests sent together would reach camd in
    # the wrong order and leave the device at an older value.
    page.command("Fetch.enable", patterns=[{"urlPattern": f"*/v1/cameras/{CAMERA}/controls", "requestStage": "Request"}])
    seen = len(page.events("Fetch.requestPaused"))
    held = []

    def answer_paused(hold):
        nonlocal seen
        paused = page.events("Fetch.requestPaused")
        for event in paused[seen:]:
            request = event["params"]["request"]
            if hold and request["method"] == "PUT":
                held.append(event)
            else:
                page.command("Fetch.continueRequest", requestId=event["params"]["requestId"])
        seen = len(paused)

    try:
        ui.focus(slider)
        for _ in range(3):
            ui.key("ArrowRight")
        page.wait_for(f"({output}) === '{expected}'", timeout=10 * slow)
        # Long enough for every press's request to be sent, were they sent at once.
        settle = time.time() + 3 * slow
        while time.time() < settle:
            answer_paused(hold=True)
            time.sleep(0.1)
        sent = [json.loads(e["params"]["request"].get("postData") or "{}") for e in held]
        suite.check(f"controls: while a PUT is on its way, the {control['name']} slider's next values wait for it",
                    len(held) == 1, f"PUTs sent while the first was held: {sent}")
        for event in reversed(held):
            page.command("Fetch.continueRequest", requestId=event["params"]["requestId"])
        value = None
        deadline = time.time() + 20 * slow
        while time.time() < deadline:
            answer_paused(hold=False)
            _, now = call_json(camd.sock, "GET", f"/v1/cameras/{CAMERA}/controls", timeout=10 * slow)
            value = next((c["value"] for c in now or [] if c["name"] == control["name"]), None)
            if value == expected:
                break
            time.sleep(0.5)
    finally:
        answer_paused(hold=False)
        page.command("Fetch.disable")
    shown_value = page.evaluate(output)
    suite.check(f"controls: three presses of the right arrow on the {control['name']} slider reach GET /controls",
                value == expected and shown_value == str(expected),
                f"{control['name']} {control['value']} -> API {value}, page {shown_value}, expected {expected}")


def check_event_stream(suite, browser, origin, slow):
    """The page reads /v1/events as its contract says: DevTools' Fetch answers the page's
    EventSource with a camera_state event (the absent camera failed, with a reason) and a
    photo_saved event, whatever this camd serves there."""
    page = browser.new_page()
    page.command("Fetch.enable", patterns=[{"urlPattern": "*/v1/events", "requestStage": "Request"}])
    mark = len(browser.events)
    page.command("Page.navigate", url=f"{origin}/")
    paused = browser.wait_event("Fetch.requestPaused", session=page.session, after=mark, timeout=20 * slow)
    # What the page shows, as it changes: the event's state lasts until the page reads the status again.
    page.evaluate(card_js(ABSENT, """
      window.seen = [];
      const line = card.querySelector('.state'), note = document.getElementById('connection');
      const record = () => window.seen.push({state: line.dataset.state, detail: card.querySelector('.detail').textContent,
                                             connection: note.textContent});
      new MutationObserver(record).observe(card, {subtree: true, childList: true, characterData: true, attributes: true});
      new MutationObserver(record).observe(note, {subtree: true, childList: true, characterData: true});
      return true;"""))
    reason = "web-checks: a made-up failure; run nothing"
    events = [("camera_state", {"id": 1, "type": "camera_state", "time": "2026-11-26T12:00:00Z", "camera": ABSENT,
                                "state": "failed", "previous": "waiting-for-device", "reason": reason}),
              ("photo_saved", {"id": 2, "type": "photo_saved", "time": "2026-11-26T12:00:01Z", "camera": CAMERA,
                               "name": "cam-web-checks-event.jpg", "bytes": 20480, "width": 640, "height": 480})]
    body = "retry: 600000\n\n" + "".join(f"event: {kind}\ndata: {json.dumps(data)}\n\n" for kind, data in events)
    page.command("Fetch.fulfillRequest", requestId=paused["params"]["requestId"], responseCode=200,
                 responseHeaders=[{"name": "Content-Type", "value": "text/event-stream"}, {"name": "Cache-Control", "value": "no-cache"}],
                 body=base64.b64encode(body.encode()).decode())
    failed = page.wait_for("(() => window.seen && window.seen.find(s => s.state === 'failed'))()", timeout=20 * slow)
    suite.check("events: a camera_state event shows the new state and its reason",
                failed and reason in failed["detail"], json.dumps(failed))
    photo = page.wait_for(card_js(CAMERA, "const a = card.querySelector('.message a'); return a && a.getAttribute('href');"),
                          timeout=20 * slow)
    suite.check("events: a photo_saved event shows the photo's name, linked", photo == "/v1/media/cam-web-checks-event.jpg",
                str(photo))
    live = page.evaluate("window.seen.some(s => s.connection === 'Live updates')")
    suite.check("events: the header says the updates are live while the stream is open", live,
                json.dumps(page.evaluate("window.seen.map(s => s.connection)"))[:300])
    page.command("Fetch.disable")
    page.command("Page.navigate", url="about:blank")


if __name__ == "__main__":
    sys.exit(main())
