#!/usr/bin/env python3
"""How each poll was answered, poll by poll, on the synthetic source: prints figures.

    scripts/bench/poll-outcomes.py [--camd PATH] [--fast 20] [--slow 14]

Starts camd (640x480 at 25 fps), polls GET /v1/cameras/synth/snapshot every 0.5 s (--fast
times), then every 2 s (--slow times), and after each poll reads the camera's
status.snapshots counters: whether the poll was answered at once from a ready JPEG on the
event loop, waited there for its encode, or went to the router, and whether a JPEG was made
ahead of it. Shows how many polls a new period costs while it is learned. The counters are
read between polls, so they are the poll's own. Nothing is asserted.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
import camdclient  # noqa: E402
from camdclient import SNAPSHOT_COUNTERS, Camd, call, camera_status  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--camd", default=None)
    parser.add_argument("--fast", type=int, default=20, help="polls every 0.5 s")
    parser.add_argument("--slow", type=int, default=14, help="polls every 2 s after them")
    args = parser.parse_args()
    camd = Camd(binary=args.camd or camdclient.default_camd(), size="640x480", fps=25, log_level="warning")
    camd.start(timeout=60)
    try:
        time.sleep(2)
        path = f"/v1/cameras/{camd.camera}/snapshot"
        before = camera_status(camd.sock, camd.camera)["snapshots"]
        print(f"{'period':>6} {'poll':>4} {'ms':>7}  {'answered':<8} made ahead  unused  period learned")
        for period, count in ((0.5, args.fast), (2.0, args.slow)):
            start = time.monotonic() + 0.3
            for index in range(count):
                time.sleep(max(0.0, start + index * period - time.monotonic()))
                asked = time.monotonic()
                code, _, _ = call(camd.sock, "GET", path)
                took = (time.monotonic() - asked) * 1000
                snapshots = camera_status(camd.sock, camd.camera)["snapshots"]
                delta = {k: snapshots.get(k, 0) - before.get(k, 0) for k in SNAPSHOT_COUNTERS}
                before = snapshots
                how = ("ready" if delta["answered_on_event_loop"] else "waited" if delta["waited_on_event_loop"]
                       else "router" if code == 200 else f"HTTP {code}")
                print(f"{period:>6} {index:>4} {took:>7.1f}  {how:<8} {delta['made_ahead']:>10} {delta['made_ahead_unused']:>7}"
                      f"  {snapshots.get('poll_period')}", flush=True)
    finally:
        camd.stop()


if __name__ == "__main__":
    main()
