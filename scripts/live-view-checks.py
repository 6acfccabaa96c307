#!/usr/bin/env python3
"""camd's live view in a real browser: headless Chromium plays /cameras/{id}/live.

Starts camd with a loopback TCP listener (the synthetic source by default, or a
V4L2 device such as vivid's /dev/video0) and headless Chromium, driven over the
DevTools protocol (scripts/lib/devtools.py), opens the camera's live view page,
lets it play, and checks:

  mse       the page plays H.264 through Media Source Extensions, not the MJPEG
            fallback: camd-live.js says mode "mse", the <video> plays a blob:
            MediaSource, Chromium's media log names the h264 codec and its
            decoder, camd counts one live video client and no MJPEG stream client
  time      video.currentTime advances with the wall clock between two screenshots,
            frames are decoded, and the player never had to connect again
  picture   the two screenshots, taken --gap s apart after --play s, differ inside
            the video (the picture moves), and the eight colour bars are in the
            screenshot in their colours (read from the PNG with zlib)
  console   no console.error, no error the browser logged (a failed load, a content
            security policy refusal), no uncaught exception, no media error
  mjpeg     ?mode=mjpeg plays the MJPEG stream in an <img> (--mjpeg)

Prints PASS/FAIL lines and "N passed, N failed"; exit status 1 on any failure.
--slow N multiplies every wait, for an emulated VM.

    scripts/live-view-checks.py [--camd .build/debug/camd] [--device testsrc] [--size 640x480]
        [--fps 25] [--slow 1] [--mjpeg] [--screenshot docs/live-view.png]
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from camdclient import Camd, Suite, camera_detail, free_port  # noqa: E402
from devtools import Chromium  # noqa: E402
from pictures import BARS, PNG, bar_colours  # noqa: E402

CAMERA = "cam"

# Where the page shows the picture: the <video>'s box, less the bars object-fit: contain
# adds, in CSS pixels (the screenshot's, at a device scale factor of 1).
PICTURE_BOX = """(() => {
  const v = document.querySelector('.camd-live video');
  const r = v.getBoundingClientRect();
  const scale = Math.min(r.width / v.videoWidth, r.height / v.videoHeight);
  const w = v.videoWidth * scale, h = v.videoHeight * scale;
  return {left: r.left + (r.width - w) / 2, top: r.top + (r.height - h) / 2, width: w, height: h,
          dpr: window.devicePixelRatio};
})()"""

PLAYER = """(() => {
  const v = document.querySelector('.camd-live video');
  const info = (window.camdLive || {})['%s'] || {};
  const q = v.getVideoPlaybackQuality ? v.getVideoPlaybackQuality() : {};
  return {mode: info.mode, state: info.state, error: info.error, connects: info.connects,
          src: v.src, currentTime: v.currentTime, paused: v.paused, readyState: v.readyState,
          videoWidth: v.videoWidth, videoHeight: v.videoHeight, imageHidden: document.querySelector('.camd-live img').hidden,
          decoded: q.totalVideoFrames, dropped: q.droppedVideoFrames,
          buffered: v.buffered.length ? [v.buffered.start(0), v.buffered.end(v.buffered.length - 1)] : null,
          h264: MediaSource.isTypeSupported('video/mp4; codecs="avc1.42E01E"')};
})()""" % CAMERA


def media_properties(page):
    """Chromium's media log for the page's players: property name -> last value."""
    found = {}
    for event in page.events("Media.playerPropertiesChanged"):
        for prop in event["params"]["properties"]:
            found[prop["name"]] = prop["value"]
    return found


def media_errors(page):
    lines = []
    for event in page.events("Media.playerErrorsRaised"):
        lines += ["media: " + json.dumps(e)[:300] for e in event["params"]["errors"]]
    for event in page.events("Media.playerMessagesLogged"):
        lines += ["media: " + m["message"][:300] for m in event["params"]["messages"] if m.get("level") == "error"]
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--camd", default=None, help="camd binary (default: .build/debug/camd, then release)")
    ap.add_argument("--device", default="testsrc", help="the camera (default: camd's synthetic source)")
    ap.add_argument("--format", default=None, help="pixel format to ask the device for (e.g. YUYV)")
    ap.add_argument("--size", default="640x480")
    ap.add_argument("--fps", type=int, default=25)
    ap.add_argument("--window", default="800x600", help="the browser window (default 800x600)")
    ap.add_argument("--play", type=float, default=3, help="seconds of playing before the first screenshot")
    ap.add_argument("--gap", type=float, default=2, help="seconds between the two screenshots")
    ap.add_argument("--slow", type=float, default=1, help="multiplies every wait (an emulated VM: 20)")
    ap.add_argument("--min-rate", type=float, default=0.5,
                    help="currentTime must advance at least this fraction of the wall clock")
    ap.add_argument("--tolerance", type=int, default=24, help="how far a bar's colour may be from vivid's")
    ap.add_argument("--mjpeg", action="store_true", help="also play ?mode=mjpeg")
    ap.add_argument("--screenshot", default=None, help="keep the first screenshot here too")
    ap.add_argument("--workdir", default=None, help="scratch folder (default: a new one in $TMPDIR)")
    args = ap.parse_args()
    suite = Suite()
    width, height = (int(n) for n in args.size.split("x"))
    window = tuple(int(n) for n in args.window.split("x"))
    workdir = args.workdir or tempfile.mkdtemp(prefix="camd-live-view-")
    port = free_port()
    origin = f"http://127.0.0.1:{port}"
    camd = Camd(args.camd, workdir=workdir, size=args.size, fps=args.fps, camera_id=CAMERA, device=args.device,
                extra_camera=f'format = "{args.format}"\n' if args.format else "",
                extra_daemon=f'tcp = "127.0.0.1:{port}"\n')
    browser = None
    try:
        camd.start(timeout=30 * args.slow)
        started = time.time()
        browser = Chromium(workdir, window=window, timeout=30 * args.slow)
        page = browser.new_page()
        page.command("Media.enable")
        page.open(f"{origin}/cameras/{CAMERA}/live")
        playing = page.wait_for(f"{PLAYER}.currentTime > 0 && {PLAYER}", timeout=30 * args.slow)
        print(f"browser {browser.version.get('product')}; playing {time.time() - started:.1f} s after the start: "
              f"{json.dumps(playing)}", flush=True)
        if not playing:
            raise RuntimeError(f"the video did not start playing within {30 * args.slow:.0f} s: {page.evaluate(PLAYER)}")
        time.sleep(args.play)

        first_at = time.time()
        first = page.evaluate(PLAYER)
        shot = page.screenshot()
        time.sleep(args.gap)
        second_at = time.time()
        second = page.evaluate(PLAYER)
        shot2 = page.screenshot()
        print(f"player at the second screenshot: {json.dumps(second)}", flush=True)
        with open(os.path.join(workdir, "live-view.png"), "wb") as f:
            f.write(shot)
        with open(os.path.join(workdir, "live-view-2.png"), "wb") as f:
            f.write(shot2)
        if args.screenshot:
            shutil.copyfile(os.path.join(workdir, "live-view.png"), args.screenshot)
        detail = camera_detail(camd.sock, CAMERA, timeout=10 * args.slow)
        live = (detail.get("status", {}).get("video") or {}).get("live") or {}
        media = media_properties(page)

        # mse: H.264 through Media Source Extensions, not the MJPEG fallback.
        suite.check("mse: camd-live.js plays the H.264 through Media Source Extensions",
                    second["mode"] == "mse" and second["state"] == "playing" and second["src"].startswith("blob:")
                    and second["imageHidden"] and second["h264"],
                    f"mode {second['mode']}, state {second['state']}, src {second['src'][:40]}, img hidden {second['imageHidden']}")
        codec = media.get("kVideoTracks")
        codec_text = json.dumps(codec) if codec is not None else "none"
        suite.check("mse: Chromium's media log shows an H.264 track decoded",
                    "h264" in codec_text and media.get("kVideoDecoderName"),
                    f"tracks {codec_text[:160]}, decoder {media.get('kVideoDecoderName')}, "
                    f"renderer {media.get('kRendererName')}")
        clients = live.get("clients") if isinstance(live, dict) else live
        stream_clients = detail.get("status", {}).get("stream_clients")
        suite.check("mse: camd serves one live video client and no MJPEG stream",
                    (len(clients) if isinstance(clients, list) else clients) == 1 and stream_clients == 0,
                    f"live {json.dumps(live)[:200]}, stream_clients {stream_clients}")
        suite.check("mse: the video is the camera's size", (second["videoWidth"], second["videoHeight"]) == (width, height),
                    f"{second['videoWidth']}x{second['videoHeight']}")

        # time: the video plays on, at about the camera's pace.
        advance, wall = second["currentTime"] - first["currentTime"], second_at - first_at
        suite.check("time: video.currentTime advances with the wall clock",
                    advance >= args.min_rate * wall and not second["paused"],
                    f"{first['currentTime']:.2f} s -> {second['currentTime']:.2f} s: +{advance:.2f} s in {wall:.2f} s of "
                    f"wall clock; paused {second['paused']}")
        frames = (second["decoded"] or 0) - (first["decoded"] or 0)
        suite.check("time: frames are decoded between the screenshots", frames >= args.min_rate * wall * args.fps / 2,
                    f"{frames} frames decoded in {wall:.2f} s, {second['dropped']} dropped of {second['decoded']} in all")
        suite.check("time: one connection, no reconnect", second["connects"] == 1 and not second["error"],
                    f"connects {second['connects']}, last error {second['error']}")

        # picture: the screenshots show the camera's moving picture.
        box = page.evaluate(PICTURE_BOX)
        a, b = PNG(shot), PNG(shot2)
        dpr = box["dpr"]
        left, top = int(box["left"] * dpr) + 2, int(box["top"] * dpr) + 2
        w, h = int(box["width"] * dpr) - 4, int(box["height"] * dpr) - 4
        suite.check("picture: the screenshot shows the video", a.width >= left + w and a.height >= top + h and w > 100,
                    f"screenshot {a.width}x{a.height}, picture at {left},{top} {w}x{h}")
        changed = a.differing_pixels(b, left, top, w, h)
        suite.check("picture: two screenshots taken apart differ inside the video", changed >= 50,
                    f"{changed} of {w * h} pixels differ")
        colours = bar_colours(a.pixel, left, top, w, h)
        worst = max(abs(x - y) for got, want in zip(colours, BARS) for x, y in zip(got, want))
        suite.check("picture: the eight colour bars in their colours", worst <= args.tolerance,
                    f"read {colours}, furthest channel {worst} from {BARS}")

        # mjpeg: the fallback page.
        if args.mjpeg:
            page.open(f"{origin}/cameras/{CAMERA}/live?mode=mjpeg")
            image = page.wait_for("(() => { const i = document.querySelector('.camd-live img'); const info = window.camdLive['%s'];"
                                  " return info && info.state === 'playing' && i.naturalWidth &&"
                                  " {mode: info.mode, width: i.naturalWidth, height: i.naturalHeight,"
                                  "  videoHidden: document.querySelector('.camd-live video').hidden}; })()" % CAMERA,
                                  timeout=20 * args.slow)
            suite.check("mjpeg: ?mode=mjpeg plays the MJPEG stream in an <img>",
                        image and image["mode"] == "mjpeg" and (image["width"], image["height"]) == (width, height)
                        and image["videoHidden"], json.dumps(image))

        errors = page.console_errors() + media_errors(page)
        suite.check("console: no errors, failed loads or exceptions", not errors, " | ".join(errors)[:600])
    except Exception as e:  # noqa: BLE001 - reported as a failure, with the logs
        suite.check("live view checks ran to the end", False, f"{type(e).__name__}: {e}; camd log: {camd.tail(10)}")
    finally:
        if browser:
            browser.close()
        camd.stop()
    print(f"(scratch: {workdir})")
    return suite.finish()


if __name__ == "__main__":
    sys.exit(main())
