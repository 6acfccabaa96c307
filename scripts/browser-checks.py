#!/usr/bin/env python3
"""A real browser against camd's loopback TCP listener.

Starts camd (synthetic source, `tcp = "127.0.0.1:PORT"`) and headless Chromium,
driven over the DevTools protocol (scripts/lib/devtools.py), and checks what a web page can make the browser
do to camd:

  cross-site   a page served from another origin (another port on loopback) sends
               what needs no CORS preflight: fetch(..., {mode: 'no-cors'}) POSTs with
               text/plain and form bodies, and a real <form> post. camd's log shows each
               arrived and was refused; the camera's settings and state are unchanged.
  rebinding    a page under another name that resolves to 127.0.0.1 (Chromium's
               --host-resolver-rules stands in for the attacker's DNS) is same-origin
               with camd's port, so its fetches may read answers: camd gives it 421.
  own origin   a page of camd's own origin (http://127.0.0.1:PORT) reads and changes
               the camera with fetch, as camd's web page will.

Prints PASS/FAIL lines and "N passed, N failed"; exit status 1 on any failure.

    scripts/browser-checks.py [--camd .build/debug/camd]
"""
import argparse
import http.server
import json
import os
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from camdclient import Camd, Suite, call, free_port  # noqa: E402
from devtools import Chromium  # noqa: E402

# What a page of another site may send without a CORS preflight, each reported in
# window.results. Nothing here can read camd's answers (no-cors is opaque): the
# checks read camd's state and log instead.
ATTACK_PAGE = """<!doctype html>
<title>not camd</title>
<iframe name="sink" style="display:none"></iframe>
<form id="f" method="POST" target="sink" enctype="application/x-www-form-urlencoded">
  <input name="quality" value="5">
</form>
<script>
window.attack = async function (camd) {
  const results = {};
  const post = async (name, path, init) => {
    try { await fetch(camd + path, Object.assign({method: 'POST', mode: 'no-cors'}, init)); results[name] = 'sent'; }
    catch (e) { results[name] = 'error: ' + e; }
  };
  await post('configure-text', '/v1/cameras/cam/configure', {headers: {'Content-Type': 'text/plain'}, body: '{"quality": 5}'});
  await post('configure-form', '/v1/cameras/cam/configure',
             {headers: {'Content-Type': 'application/x-www-form-urlencoded'}, body: 'quality=5'});
  await post('stop', '/v1/cameras/cam/stop', {});
  await post('save', '/v1/cameras/cam/snapshot', {});
  try {  // a CORS read: blocked by the browser, camd sends no CORS headers
    const r = await fetch(camd + '/v1/cameras/cam');
    results['read'] = 'read ' + r.status;
  } catch (e) { results['read'] = 'blocked'; }
  await new Promise(done => {
    const frame = document.querySelector('iframe');
    frame.onload = () => done();
    const form = document.getElementById('f');
    form.action = camd + '/v1/cameras/cam/stop';
    form.submit();
    setTimeout(done, 5000);
  });
  results['form'] = 'submitted';
  return results;
};
</script>
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--camd", default=None, help="camd binary (default: .build/debug/camd, then release)")
    args = ap.parse_args()
    suite = Suite()
    workdir = tempfile.mkdtemp(prefix="camd-browser-")
    port, page_port = free_port(), free_port()
    camd_origin = f"http://127.0.0.1:{port}"
    camd = Camd(args.camd, workdir=workdir, size="320x240", fps=10, camera_id="cam",
                extra_daemon=f'tcp = "127.0.0.1:{port}"\n')
    camd.start()

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            body = ATTACK_PAGE.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    pages = http.server.ThreadingHTTPServer(("127.0.0.1", page_port), Page)
    threading.Thread(target=pages.serve_forever, daemon=True).start()
    browser = None
    try:
        # --host-resolver-rules stands in for the attacker's DNS.
        browser = Chromium(workdir, args=["--host-resolver-rules=MAP rebound.example 127.0.0.1"])
        page = browser.new_page()

        def camera():
            code, _, data = call(camd.sock, "GET", "/v1/cameras/cam")
            return json.loads(data) if code == 200 else {}

        before = camera()
        quality = before["settings"]["quality"]

        # A page of another site (another port is another origin).
        page.open(f"http://127.0.0.1:{page_port}/attack.html")
        results = page.evaluate(f"window.attack('{camd_origin}')")
        time.sleep(1)
        after = camera()
        log = open(camd.log_path, errors="replace").read()
        suite.check("cross-site: the page's requests were sent", isinstance(results, dict) and results.get("stop") == "sent",
                    json.dumps(results))
        refused = [line for line in log.splitlines() if "refused POST" in line and f"127.0.0.1:{page_port}" in line]
        suite.check("cross-site: camd refused each POST the page sent (its log)",
                    len(refused) >= 5, f"{len(refused)} refused: " + " | ".join(line.split("refused ")[1][:60] for line in refused))
        suite.check("cross-site: the CORS read was blocked", isinstance(results, dict) and results.get("read") == "blocked",
                    str(results.get("read") if isinstance(results, dict) else results))
        suite.check("cross-site: settings unchanged", after["settings"]["quality"] == quality,
                    f"quality {quality} -> {after['settings']['quality']}")
        suite.check("cross-site: camera still running", after["status"]["state"] == "running", after["status"]["state"])
        photos = os.path.join(camd.photos, "cam")
        saved = [n for n in os.listdir(photos) if n.endswith(".jpg")] if os.path.isdir(photos) else []
        suite.check("cross-site: no photo saved", not saved, f"{len(saved)} photos")

        # DNS rebinding: a page under another name, resolving to camd's address.
        rebound = f"http://rebound.example:{port}"
        page.open(f"{rebound}/v1/status")
        text = page.evaluate("document.body.innerText")
        suite.check("rebinding: camd's answer to the page is 421, not its status", "unknown_host" in (text or "")
                    and '"cameras"' not in text, (text or "")[:120])
        answer = page.evaluate("fetch('/v1/cameras/cam/stop', {method: 'POST'}).then(r => r.status)")
        snapshot = page.evaluate("fetch('/v1/cameras/cam/snapshot').then(r => r.status + ' ' + r.headers.get('content-type'))")
        suite.check("rebinding: the page's POST and snapshot read get 421", answer == 421 and snapshot.startswith("421"),
                    f"POST {answer}, snapshot {snapshot}")
        suite.check("rebinding: camera still running", camera()["status"]["state"] == "running")

        # camd's own origin: the page camd will serve reads and changes the camera.
        page.open(f"{camd_origin}/v1/status")
        status = page.evaluate("fetch('/v1/cameras/cam').then(r => r.json()).then(j => j.status.state)")
        suite.check("own origin: reads the camera", status == "running", str(status))
        changed = page.evaluate("fetch('/v1/cameras/cam/configure', {method: 'POST', headers: {'Content-Type': 'application/json'},"
                                   " body: JSON.stringify({quality: 66})}).then(r => r.status)")
        suite.check("own origin: configure with a JSON body is applied", changed == 200 and camera()["settings"]["quality"] == 66,
                    f"status {changed}, quality {camera()['settings'].get('quality')}")
        stopped = page.evaluate("fetch('/v1/cameras/cam/stop', {method: 'POST'}).then(r => r.status)")
        suite.check("own origin: stop works", stopped == 200 and camera()["status"]["state"] == "idle",
                    f"status {stopped}, state {camera()['status']['state']}")
        image = page.evaluate("fetch('/v1/cameras/cam/snapshot').then(r => r.blob()).then(b => b.type + ' ' + b.size)")
        suite.check("own origin: a snapshot reads as a JPEG", (image or "").startswith("image/jpeg") and int(image.split()[1]) > 1000,
                    str(image))
        shot = page.screenshot()
        with open(os.path.join(workdir, "own-origin.png"), "wb") as f:
            f.write(shot)
    except Exception as e:  # noqa: BLE001 - reported as a failure, with camd's log
        suite.check("browser checks ran to the end", False, f"{type(e).__name__}: {e}; camd log: {camd.tail(10)}")
    finally:
        if browser:
            browser.close()
        pages.shutdown()
        camd.stop()
    print(f"(scratch: {workdir})")
    return suite.finish()


if __name__ == "__main__":
    sys.exit(main())
