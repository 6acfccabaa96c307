#!/usr/bin/env python3
"""camd's media library page (/media) in a real browser: headless Chromium.

Starts camd on the synthetic source with a loopback TCP listener, fills its library
with --photos photos (a few taken through the API, the rest copies, scripts/lib/medialib.py),
opens /media?kind=photo&cell=N in headless Chromium over the DevTools protocol
(scripts/lib/devtools.py) and checks:

  grid       every photo has a cell once the page is scrolled to the end (pages follow
             the API's Link header); the cells are squares of the asked size, in as many
             columns as fit; a screenshot shows the pictures in them (the test pattern's
             colours) and the page's background in the gaps between them
  thumbnails each comes from /v1/media/{name}/thumbnail at the cell's pixel size, rounded
             up to a step; no full-size photo is fetched for the grid
  viewer     a click opens the full-size photo; the arrow keys go to the next and the
             previous; Esc closes it
  delete     Delete asks to confirm: Cancel keeps the photo, Delete removes it (camd's
             list agrees); a delete camd refuses shows camd's error text
  keyboard   arrow keys move the focus across the grid, Enter opens the viewer
  select     two cells chosen make a contact sheet link of their names, which camd answers
  filters    ?kind=video shows only the movie (recorded for 2 s), marked with its duration;
             a camera with nothing says so; the fields show the filters
  cache      a second visit renders no thumbnail in camd (the browser keeps them)
  narrow     at 375 px wide there is no horizontal scroll and the cells stay square
  console    no console error, failed load, CSP refusal or exception

Prints PASS/FAIL lines and "N passed, N failed"; exit status 1 on any failure.

    scripts/media-checks.py [--camd .build/debug/camd] [--photos 200] [--cell 120]
        [--screenshot docs/media-page.png]
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from camdclient import Camd, Suite, call, free_port  # noqa: E402
from devtools import Chromium  # noqa: E402
from medialib import seed  # noqa: E402
from pictures import PNG  # noqa: E402

CAMERA = "cam"
STATE = "window.camdMedia"
CELLS = """(() => [...document.querySelectorAll('.cell')].slice(0, %d).map(c => {
  const r = c.getBoundingClientRect(), i = c.querySelector('img');
  return {left: r.left, top: r.top, width: r.width, height: r.height, natural: i.naturalWidth,
          naturalHeight: i.naturalHeight, src: i.getAttribute('src') || '', loading: c.classList.contains('loading')};
}))()"""


def rendered(target):
    _, _, body = call(target, "GET", "/metrics")
    for line in body.decode().splitlines():
        if line.startswith("camd_thumbnails_rendered_total "):
            return int(float(line.split()[1]))
    return None


def server_count(target):
    """The photos camd lists."""
    _, _, body = call(target, "GET", "/v1/media?kind=photo")
    return len(json.loads(body))


def key(page, name, code, text=None):
    for kind in ("keyDown", "keyUp"):
        extra = {"text": text} if text and kind == "keyDown" else {}
        page.command("Input.dispatchKeyEvent", type=kind, key=name, code=name, windowsVirtualKeyCode=code,
                     nativeVirtualKeyCode=code, **extra)


def click(page, x, y):
    for kind in ("mousePressed", "mouseReleased"):
        page.command("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)


def click_on(page, selector):
    box = page.evaluate("(() => { const r = document.querySelector(%s).getBoundingClientRect();"
                        " return {x: r.left + r.width / 2, y: r.top + r.height / 2}; })()" % json.dumps(selector))
    click(page, box["x"], box["y"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--camd", default=None, help="camd binary (default: .build/debug/camd, then release)")
    ap.add_argument("--photos", type=int, default=200, help="photos in the library (more than a page of 150)")
    ap.add_argument("--cell", type=int, default=120, help="the smallest cell side asked for, CSS pixels")
    ap.add_argument("--window", default="1000x700")
    ap.add_argument("--slow", type=float, default=1, help="multiplies every wait")
    ap.add_argument("--screenshot", default=None, help="keep the grid's screenshot here too")
    ap.add_argument("--workdir", default=None)
    args = ap.parse_args()
    suite = Suite()
    window = tuple(int(n) for n in args.window.split("x"))
    workdir = args.workdir or tempfile.mkdtemp(prefix="camd-media-checks-")
    port = free_port()
    origin = f"http://127.0.0.1:{port}"
    camd = Camd(args.camd, workdir=workdir, size="640x480", fps=15, camera_id=CAMERA,
                extra_daemon=f'tcp = "127.0.0.1:{port}"\n')
    browser = None
    refused_name = None
    try:
        camd.start(timeout=30 * args.slow)
        seed(camd, args.photos)
        # One movie, for the duration badge and the kind filter.
        code, _, body = call(camd.sock, "POST", f"/v1/cameras/{CAMERA}/recordings", {"duration": 2})
        if code != 201:
            raise RuntimeError(f"POST recordings answered {code}: {body[:200]!r}")
        deadline = time.time() + 30 * args.slow
        while time.time() < deadline and not json.loads(call(camd.sock, "GET", "/v1/media?kind=video")[2]):
            time.sleep(0.5)
        total = server_count(camd.sock)
        print(f"library: {total} photos and a movie", flush=True)
        browser = Chromium(workdir, window=window, timeout=30 * args.slow)
        page = browser.new_page()
        page.open(f"{origin}/media?kind=photo&cell={args.cell}")
        first = page.wait_for(f"{STATE}.firstScreen !== null && {STATE}", timeout=30 * args.slow)
        print(f"first screen after {first and round(first['firstScreen'])} ms: {json.dumps(first)[:300]}", flush=True)

        # grid: every photo gets a cell as the page is scrolled to its end.
        for _ in range(40):
            count = page.evaluate(f"(() => {{ scrollTo(0, document.body.scrollHeight); return {STATE}.items.length; }})()")
            if count >= total or page.evaluate(f"{STATE}.done && !{STATE}.loading"):
                break
            time.sleep(0.25 * args.slow)
        count = page.evaluate("document.querySelectorAll('.cell').length")
        suite.check("grid: one cell per photo, every page loaded by scrolling", count == total,
                    f"{count} cells for {total} photos in {page.evaluate(STATE + '.pages')} pages")
        page.evaluate("scrollTo(0, 0)")
        page.wait_for("(() => [...document.querySelectorAll('.cell')].slice(0, 12).every(c => !c.classList.contains('loading')))()",
                      timeout=20 * args.slow)
        cells = page.evaluate(CELLS % 12)
        layout = page.evaluate("(() => { const g = document.querySelector('#grid'); return {width: g.clientWidth,"
                               " columns: getComputedStyle(g).gridTemplateColumns.split(' ').length,"
                               " gap: parseFloat(getComputedStyle(g).columnGap), dpr: devicePixelRatio}; })()")
        columns = int((layout["width"] + layout["gap"]) // (args.cell + layout["gap"]))
        side = (layout["width"] - (columns - 1) * layout["gap"]) / columns
        squares = all(abs(c["width"] - c["height"]) < 0.5 for c in cells)
        suite.check("grid: square cells of the asked size, as many columns as fit",
                    squares and layout["columns"] == columns and all(abs(c["width"] - side) < 1 for c in cells),
                    f"{layout['columns']} columns (expected {columns}) of {cells[0]['width']:.1f}x{cells[0]['height']:.1f} "
                    f"(expected {side:.1f}, asked {args.cell})")
        shot = page.screenshot()
        with open(os.path.join(workdir, "media-grid.png"), "wb") as f:
            f.write(shot)
        png = PNG(shot)
        a, b = cells[0], cells[1]
        row = int(a["top"] + a["height"] / 2)
        inside = {png.pixel(x, row) for x in range(int(a["left"]) + 2, int(a["left"] + a["width"]) - 2, 3)}
        gap = png.pixel(int(a["left"] + a["width"] + layout["gap"] / 2), row)
        suite.check("grid: the screenshot shows pictures in the cells and the background between them",
                    len(inside) >= 4 and max(gap) <= 24 and b["left"] - (a["left"] + a["width"]) >= 1,
                    f"{len(inside)} colours across the first cell, gap pixel {gap}")

        # thumbnails: camd's, at the cell's pixels rounded up; no full-size image for the grid.
        size = page.evaluate(f"{STATE}.thumbnailSize")
        fetched = page.evaluate("performance.getEntriesByType('resource').map(e => new URL(e.name).pathname + new URL(e.name).search)")
        full_size = [u for u in fetched if u.startswith("/v1/media/") and "/thumbnail" not in u and not u.startswith("/v1/media?")]
        suite.check("thumbnails: from /thumbnail at the cell's pixels rounded up, no full-size photo",
                    size >= a["width"] * layout["dpr"] and all(c["natural"] == size == c["naturalHeight"] for c in cells)
                    and all("/thumbnail?width=%d&height=%d&fit=cover&v=" % (size, size) in c["src"] for c in cells)
                    and not full_size, f"thumbnail {size} px for a {a['width']:.0f} px cell; first {cells[0]['src'][:90]}; "
                    f"full-size fetched: {full_size[:3]}")

        # viewer: a click opens it; arrow keys move; Esc closes.
        names = page.evaluate(f"{STATE}.items.slice(0, 3).map(i => i.name)")
        click(page, a["left"] + a["width"] / 2, a["top"] + a["height"] / 2)
        opened = page.wait_for("(() => { const d = document.querySelector('#viewer'), i = document.querySelector('#full');"
                               " return d.open && i.complete && i.naturalWidth && {current: window.camdMedia.current,"
                               " width: i.naturalWidth, src: i.getAttribute('src')}; })()", timeout=10 * args.slow)
        with open(os.path.join(workdir, "media-viewer.png"), "wb") as f:
            f.write(page.screenshot())
        suite.check("viewer: a click opens the full-size photo", opened and opened["current"] == 0 and opened["width"] == 640
                    and names[0] in opened["src"], json.dumps(opened))
        key(page, "ArrowRight", 39)
        right = page.wait_for(f"{STATE}.current === 1 && document.querySelector('#full').getAttribute('src')", timeout=5 * args.slow)
        key(page, "ArrowLeft", 37)
        left = page.wait_for(f"{STATE}.current === 0 && document.querySelector('#full').getAttribute('src')", timeout=5 * args.slow)
        suite.check("viewer: ArrowRight shows the next, ArrowLeft the previous",
                    right and names[1] in right and left and names[0] in left, f"{right} then {left}")
        download = page.evaluate("(() => { const a = document.querySelector('#download'); return {download: a.download, href: a.getAttribute('href')}; })()")
        suite.check("viewer: the download link names the file", download["download"] == names[0] and names[0] in download["href"],
                    json.dumps(download))
        key(page, "Escape", 27)
        closed = page.wait_for("!document.querySelector('#viewer').open && document.activeElement.classList.contains('cell')",
                               timeout=5 * args.slow)
        suite.check("viewer: Esc closes it and gives the focus back to the cell", closed)

        # delete: it asks first.
        click(page, a["left"] + a["width"] / 2, a["top"] + a["height"] / 2)
        page.wait_for("document.querySelector('#viewer').open", timeout=5 * args.slow)
        click_on(page, "#viewer [data-act=delete]")
        asked = page.wait_for("document.querySelector('#confirm').open && document.querySelector('#confirm-text').textContent",
                              timeout=5 * args.slow)
        before = server_count(camd.sock)
        click_on(page, "#confirm button[value=cancel]")
        kept = page.wait_for("!document.querySelector('#confirm').open", timeout=5 * args.slow)
        suite.check("delete: asks to confirm, and Cancel keeps the photo",
                    asked and names[0] in asked and kept and server_count(camd.sock) == total == before,
                    f"asked {asked!r}; camd lists {server_count(camd.sock)} of {total}")
        click_on(page, "#viewer [data-act=delete]")
        page.wait_for("document.querySelector('#confirm').open", timeout=5 * args.slow)
        click_on(page, "#confirm button[value=delete]")
        gone = page.wait_for(f"{STATE}.items.length === {total - 1} && {STATE}.items[0].name", timeout=10 * args.slow)
        suite.check("delete: confirmed, the photo is gone from the page and from camd",
                    gone == names[1] and server_count(camd.sock) == total - 1,
                    f"first now {gone}, camd lists {server_count(camd.sock)}")
        key(page, "Escape", 27)
        page.wait_for("!document.querySelector('#viewer').open", timeout=5 * args.slow)

        # keyboard: arrow keys move between cells, Enter opens one.
        page.evaluate("document.querySelector('.cell').focus()")
        key(page, "ArrowRight", 39)
        key(page, "ArrowDown", 40)
        focused = page.evaluate("[...document.querySelectorAll('.cell')].indexOf(document.activeElement)")
        key(page, "Enter", 13, "\r")
        entered = page.wait_for(f"document.querySelector('#viewer').open && {STATE}.current", timeout=5 * args.slow)
        suite.check("keyboard: ArrowRight, ArrowDown move the focus across the grid, Enter opens the viewer",
                    focused == 1 + layout["columns"] and entered == focused, f"focus on cell {focused}, viewer at {entered}")

        # delete refused: the photo went meanwhile; camd's reason is shown.
        shown = refused_name = page.evaluate(f"{STATE}.items[{STATE}.current].name")
        call(camd.sock, "DELETE", "/v1/media/" + shown)
        click_on(page, "#viewer [data-act=delete]")
        page.wait_for("document.querySelector('#confirm').open", timeout=5 * args.slow)
        click_on(page, "#confirm button[value=delete]")
        refused = page.wait_for("(() => { const e = document.querySelector('#viewer-error'); return !e.hidden && e.textContent; })()",
                                timeout=5 * args.slow)
        suite.check("delete: a refusal shows camd's error text", refused and "No photo is named" in refused, repr(refused))
        key(page, "Escape", 27)
        page.wait_for("!document.querySelector('#viewer').open", timeout=5 * args.slow)
        page.open(f"{origin}/media?kind=photo&cell={args.cell}")
        page.wait_for(f"{STATE}.firstScreen !== null", timeout=20 * args.slow)

        # select: two cells, then a contact sheet of them.
        click_on(page, "#select")
        cells = page.evaluate(CELLS % 3)
        for c in cells[:2]:
            click(page, c["left"] + c["width"] / 2, c["top"] + c["height"] / 2)
        link = page.wait_for("(() => { const a = document.querySelector('#sheet'); return !a.hidden && a.getAttribute('href'); })()",
                             timeout=5 * args.slow)
        sheet = page.evaluate("fetch(document.querySelector('#sheet').href).then(r => r.status + ' ' + r.headers.get('Content-Type'))")
        chosen = page.evaluate(f"[...{STATE}.selected]")
        suite.check("select: two cells chosen make a contact sheet of their names",
                    link and len(chosen) == 2 and all(n in link for n in chosen) and sheet == "200 image/jpeg",
                    f"{link}: {sheet}")

        # cache: a second visit renders nothing in camd.
        renders = rendered(camd.sock)
        page.open(f"{origin}/media?kind=photo&cell={args.cell}")
        again = page.wait_for(f"{STATE}.firstScreen !== null && {STATE}.thumbnailsLoaded > 0 && {STATE}", timeout=30 * args.slow)
        suite.check("cache: a second visit renders no thumbnail in camd", again and rendered(camd.sock) == renders,
                    f"renders {renders} -> {rendered(camd.sock)}, {again and again['thumbnailsLoaded']} thumbnails shown")

        # filters: kept in the URL; a movie is marked with its duration.
        page.open(f"{origin}/media?kind=video")
        movies = page.wait_for(f"{STATE}.pages === 1 && {STATE}.firstScreen !== null && {{cells: [...document.querySelectorAll('.cell')]"
                               ".map(c => [c.querySelector('.duration') && c.querySelector('.duration').textContent,"
                               " c.getAttribute('aria-label'), c.classList.contains('loading')]),"
                               " field: document.querySelector('[name=kind]').value}", timeout=20 * args.slow)
        suite.check("filters: ?kind=video shows only the movie, marked with its duration, and the field shows the filter",
                    movies and len(movies["cells"]) == 1 and movies["cells"][0][0] == "0:02"
                    and movies["cells"][0][1].startswith("Movie, 0:02") and not movies["cells"][0][2]
                    and movies["field"] == "video", json.dumps(movies))
        click_on(page, ".cell")
        played = page.wait_for("(() => { const v = document.querySelector('#movie');"
                               " return document.querySelector('#viewer').open && !v.hidden && v.readyState >= 1 &&"
                               " {duration: v.duration, width: v.videoWidth, src: v.getAttribute('src')}; })()", timeout=10 * args.slow)
        suite.check("viewer: a movie opens in a <video>", played and abs(played["duration"] - 2) < 0.6 and played["width"] == 640,
                    json.dumps(played))
        key(page, "Escape", 27)
        page.open(f"{origin}/media?camera=nobody")
        empty = page.wait_for(f"{STATE}.pages === 1 && {{cells: document.querySelectorAll('.cell').length,"
                              " status: document.querySelector('#status').textContent,"
                              " field: document.querySelector('[name=camera]').value}", timeout=10 * args.slow)
        suite.check("filters: a camera with nothing says so",
                    empty and empty["cells"] == 0 and "Nothing" in empty["status"] and empty["field"] == "nobody", json.dumps(empty))

        # The page as people see it first: everything, the movie first.
        page.open(f"{origin}/media?cell={args.cell}")
        page.wait_for(f"{STATE}.firstScreen !== null", timeout=20 * args.slow)
        with open(os.path.join(workdir, "media-page.png"), "wb") as f:
            f.write(page.screenshot())
        if args.screenshot:
            shutil.copyfile(os.path.join(workdir, "media-page.png"), args.screenshot)

        # narrow: a phone's width.
        page.command("Emulation.setDeviceMetricsOverride", width=375, height=740, deviceScaleFactor=2, mobile=True)
        page.open(f"{origin}/media")
        narrow = page.wait_for(f"{STATE}.firstScreen !== null && {{scroll: document.documentElement.scrollWidth,"
                               " inner: innerWidth, size: window.camdMedia.thumbnailSize}", timeout=20 * args.slow)
        small = page.evaluate(CELLS % 4)
        suite.check("narrow: no horizontal scroll at 375 px, square cells, thumbnails at 2x",
                    narrow and narrow["scroll"] <= narrow["inner"] == 375
                    and all(abs(c["width"] - c["height"]) < 0.5 for c in small) and narrow["size"] >= small[0]["width"] * 2,
                    f"{json.dumps(narrow)}, cell {small[0]['width']:.1f} px")
        with open(os.path.join(workdir, "media-page-375.png"), "wb") as f:
            f.write(page.screenshot())

        # The refused delete's 404 is logged by Chromium as a failed load: asked for, so not an error here.
        errors = page.console_errors([(404, refused_name)] if refused_name else [])
        suite.check("console: no errors, failed loads or exceptions", not errors, " | ".join(errors)[:600])
    except Exception as e:  # noqa: BLE001 - reported as a failure, with the logs
        suite.check("media checks ran to the end", False, f"{type(e).__name__}: {e}; camd log: {camd.tail(10)}")
    finally:
        if browser:
            browser.close()
        camd.stop()
    print(f"(scratch: {workdir})")
    return suite.finish()


if __name__ == "__main__":
    sys.exit(main())
