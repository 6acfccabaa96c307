#!/usr/bin/env python3
"""The media page's figures on a large library: prints them, asserts nothing.

Fills a camd on the synthetic source with --photos photos (default 10,000: a few taken
through the API, the rest copies, scripts/lib/medialib.py), then in headless Chromium:

  first screen   ms from navigation to every thumbnail of the first screen shown
                 (window.camdMedia.firstScreen), on a first visit (camd renders them)
                 and again in a new browser profile (camd's thumbnail cache answers)
  list page      ms for camd to answer one page of the list (limit=150) at the start,
                 the middle and the end of the library (the `after` cursor)
  page files     bytes of media.html, camd-media.css and camd-media.js as served
  one thumbnail  ms for camd to answer one thumbnail request on its socket, rendered and cached
  renders        thumbnails camd rendered per thumbnail shown: first visit, a reload in
                 the same browser (0: the browser keeps them for a year), a new profile
                 (0: camd's cache)

    scripts/bench/media-page.py [--camd .build/release/camd] [--photos 10000] [--size 1280x720]
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from camdclient import Camd, call, free_port, table  # noqa: E402
from devtools import Chromium  # noqa: E402
from medialib import seed  # noqa: E402

CAMERA = "cam"


def rendered(target):
    _, _, body = call(target, "GET", "/metrics")
    for line in body.decode().splitlines():
        if line.startswith("camd_thumbnails_rendered_total "):
            return int(float(line.split()[1]))
    return 0


def visit(browser, url, timeout):
    page = browser.new_page()
    page.open(url)
    state = page.wait_for("window.camdMedia.firstScreen !== null && window.camdMedia", timeout=timeout)
    if not state:
        raise RuntimeError(f"{url}: the first screen did not finish within {timeout} s")
    return page, state


# Where the first screen's time goes: the page and its files, the first list page, the thumbnails.
TIMELINE = """(() => {
  const nav = performance.getEntriesByType('navigation')[0];
  const res = performance.getEntriesByType('resource');
  const list = res.find(e => e.name.includes('/v1/media?'));
  const thumbs = res.filter(e => e.name.includes('/thumbnail') && e.responseEnd <= window.camdMedia.firstScreen + 1);
  return {dom: nav.domContentLoadedEventEnd, list: list ? list.responseEnd : null,
          thumbs: thumbs.length ? Math.max(...thumbs.map(e => e.responseEnd)) : null,
          firstThumb: thumbs.length ? Math.min(...thumbs.map(e => e.requestStart)) : null};
})()"""


def timeline(page):
    t = page.evaluate(TIMELINE)
    return (f"page ready {t['dom']:.0f} ms, list page in {t['list'] or 0:.0f} ms, "
            f"thumbnails {t['firstThumb'] or 0:.0f}-{t['thumbs'] or 0:.0f} ms")


def list_time(target, query, rounds=5):
    best = None
    for _ in range(rounds):
        started = time.perf_counter()
        code, headers, body = call(target, "GET", "/v1/media?" + query)
        took = (time.perf_counter() - started) * 1000
        best = took if best is None else min(best, took)
    return best, headers.get("Link"), len(json.loads(body))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--camd", default=None, help="camd binary (default: .build/release/camd, then debug)")
    ap.add_argument("--photos", type=int, default=10_000)
    ap.add_argument("--size", default="1280x720", help="the camera's size, so the photos' size")
    ap.add_argument("--window", default="1280x800")
    ap.add_argument("--workdir", default=None)
    args = ap.parse_args()
    workdir = args.workdir or tempfile.mkdtemp(prefix="camd-media-bench-")
    port = free_port()
    origin = f"http://127.0.0.1:{port}"
    camd = Camd(args.camd, workdir=workdir, size=args.size, fps=15, camera_id=CAMERA,
                extra_daemon=f'tcp = "127.0.0.1:{port}"\n')
    window = tuple(int(n) for n in args.window.split("x"))
    browsers = []
    try:
        camd.start(timeout=60)
        started = time.time()
        seed(camd, args.photos)
        seeded = time.time() - started
        first_list = time.perf_counter()
        code, _, body = call(camd.sock, "GET", "/v1/media?limit=1")
        scan_ms = (time.perf_counter() - first_list) * 1000
        print(f"camd {camd.binary}; {args.photos} photos of {args.size} in {seeded:.1f} s; "
              f"first list after start (scans the folder): {scan_ms:.0f} ms", flush=True)

        # The list's pages: the first, one in the middle and the last, by the cursor.
        everything = json.loads(call(camd.sock, "GET", "/v1/media")[2])

        def cursor(entry):
            return urllib.parse.quote(f"{entry['capture_time']}/{entry['camera']}/{entry['name']}", safe="")
        rows = []
        for label, query in [("first page", "limit=150"),
                             ("middle page", "limit=150&after=" + cursor(everything[len(everything) // 2])),
                             ("last page", "limit=150&after=" + cursor(everything[-151]))]:
            ms, _, count = list_time(camd.sock, query)
            rows.append((f"GET /v1/media?{query.split('&')[0]}, {label}", f"{ms:.1f} ms ({count} entries)"))

        # First visit: camd renders the first screen's thumbnails.
        url = f"{origin}/media"
        browser = Chromium(os.path.join(workdir, "first"), window=window, timeout=120)
        browsers.append(browser)
        before = rendered(camd.sock)
        page, state = visit(browser, url, 120)
        time.sleep(1)  # thumbnails just below the screen (the observer's margin) finish too
        state = page.evaluate("window.camdMedia")
        first_renders = rendered(camd.sock) - before
        shown = state["thumbnailsLoaded"]
        rows.insert(0, ("first screen, first visit (camd renders)", f"{state['firstScreen']:.0f} ms, "
                        f"{shown} thumbnails of {state['thumbnailSize']} px, {len(state['items'])} cells in {state['pages']} page(s)"))
        rows.insert(1, ("  of which", timeline(page)))
        resources = page.evaluate("performance.getEntriesByType('resource').filter(e => e.name.includes('/thumbnail'))"
                                  ".map(e => e.encodedBodySize || e.transferSize)")

        # The same browser again: its cache answers; camd renders nothing.
        before = rendered(camd.sock)
        page.open(url)
        again = page.wait_for("window.camdMedia.firstScreen !== null && window.camdMedia", timeout=60)
        time.sleep(1)
        again = page.evaluate("window.camdMedia")
        reload_renders = rendered(camd.sock) - before

        # A new profile: nothing in the browser; camd's thumbnail cache answers.
        other = Chromium(os.path.join(workdir, "second"), window=window, timeout=120)
        browsers.append(other)
        before = rendered(camd.sock)
        page2, fresh = visit(other, url, 60)
        time.sleep(1)
        fresh = page2.evaluate("window.camdMedia")
        fresh_renders = rendered(camd.sock) - before
        rows.insert(2, ("first screen, reload in the same browser", f"{again['firstScreen']:.0f} ms"))
        rows.insert(3, ("first screen, new browser profile (camd's cache)", f"{fresh['firstScreen']:.0f} ms"))
        rows.insert(4, ("  of which", timeline(page2)))
        rows.append(("renders per thumbnail, first visit", f"{first_renders / max(shown, 1):.2f} ({first_renders} for {shown})"))
        rows.append(("renders per thumbnail, reload", f"{reload_renders / max(again['thumbnailsLoaded'], 1):.2f} "
                     f"({reload_renders} for {again['thumbnailsLoaded']})"))
        rows.append(("renders per thumbnail, new profile", f"{fresh_renders / max(fresh['thumbnailsLoaded'], 1):.2f} "
                     f"({fresh_renders} for {fresh['thumbnailsLoaded']})"))
        if resources:
            rows.append(("thumbnail bytes, mean", f"{sum(resources) / len(resources):.0f} B over {len(resources)}"))

        # camd alone, one request at a time on its socket: a thumbnail rendered, and one from the cache.
        paths = page.evaluate("performance.getEntriesByType('resource').filter(e => e.name.includes('/thumbnail'))"
                              ".map(e => new URL(e.name).pathname + new URL(e.name).search)")
        for label, rewrite in [("thumbnail rendered (192 px, not cached)", lambda p: p.replace("=128", "=192")),
                               ("thumbnail from camd's cache", lambda p: p)]:
            started = time.perf_counter()
            for path in paths:
                call(camd.sock, "GET", rewrite(path))
            rows.append((f"{label}, one at a time", f"{(time.perf_counter() - started) * 1000 / max(len(paths), 1):.1f} ms each "
                         f"over {len(paths)}"))

        sizes = []
        for name, path in [("media.html", "/media"), ("camd-media.css", "/assets/camd-media.css"),
                           ("camd-media.js", "/assets/camd-media.js")]:
            _, _, body = call(camd.sock, "GET", path)
            sizes.append((name, len(body)))
        rows.append(("page files", ", ".join(f"{n} {b} B" for n, b in sizes) + f"; {sum(b for _, b in sizes)} B in all"))
        table(rows, f"media page, {args.photos} photos, window {args.window}")
    finally:
        for browser in browsers:
            browser.close()
        camd.stop()
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
