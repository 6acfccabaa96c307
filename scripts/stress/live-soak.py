#!/usr/bin/env python3
"""Live H.264 for a long while: does camd's memory stay flat as clients come, go and stall?

    scripts/stress/live-soak.py [--camd PATH] [--seconds 1800] [--clients 10] [--size 1280x720]

camd on the synthetic source; `--clients` clients read `GET /v1/cameras/synth/video`
on its Unix socket from one selector loop. Every 10 s the oldest client hangs up and a
new one connects (a new client asks for a keyframe); one more client stops reading for
10 s of every 30 and then reads on. Every 30 s it prints camd's RSS, fds and threads,
the frames each reading client got a second, and camd's live-client count. At the end:
PASS/FAIL lines for what must hold over a long run (RSS flat after the first 2 minutes,
fds and threads flat, every reading client at the camera's rate, the clients camd
counts equal to those connected) and "N passed, N failed".
"""
import argparse
import os
import selectors
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
from camdclient import Camd, Suite, camera_status, connect, proc_stats  # noqa: E402
from livestream import LiveClient  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--camd", default=None)
    parser.add_argument("--seconds", type=float, default=1800)
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--size", default="1280x720")
    args = parser.parse_args()
    suite = Suite()
    camd = Camd(binary=args.camd, size=args.size, fps=30, log_level="warning").start()
    selector = selectors.DefaultSelector()
    readers = []
    samples = []
    try:
        def add(rcvbuf=None):
            client = LiveClient(camd, rcvbuf, keep=False)
            client.frames_at_sample = 0
            selector.register(client.sock, selectors.EVENT_READ, client)
            return client

        readers = [add() for _ in range(args.clients)]
        staller = add(rcvbuf=16384)
        started = time.time()
        # Samples fall between swaps, so no client is on its way out when camd counts them.
        next_swap, next_sample = started + 10, started + 35
        last_sample = started
        while time.time() - started < args.seconds:
            now = time.time()
            # The staller reads for 20 s of every 30.
            should_pause = (now - started) % 30 >= 20
            if should_pause != staller.paused:
                staller.paused = should_pause
                if should_pause:
                    selector.unregister(staller.sock)
                else:
                    selector.register(staller.sock, selectors.EVENT_READ, staller)
            for key, _ in selector.select(timeout=0.1):
                if not key.data.read(time.time()):
                    selector.unregister(key.fileobj)
            if now >= next_swap:
                old = readers.pop(0)
                selector.unregister(old.sock)
                old.sock.close()
                readers.append(add())
                next_swap += 10
            if now >= next_sample:
                stats = proc_stats(camd.pid)
                status = camera_status(camd.sock, camd.camera)
                elapsed = now - last_sample
                # Clients connected for the whole window: their rate is the camera's.
                rates = [(c.frames - c.frames_at_sample) / elapsed for c in readers if c.added <= last_sample]
                for c in readers:
                    c.frames_at_sample = c.frames
                last_sample = now
                live = status["video"]["live"]
                samples.append({"t": now - started, "rss": stats["rss_kib"], "fds": stats["fds"], "threads": stats["threads"],
                                "min_rate": min(rates, default=0), "fps": status["measured_fps"],
                                "clients": len(live["clients"]), "drops": live["drops"]})
                s = samples[-1]
                print(f"  t={s['t']:5.0f} s  RSS {s['rss'] / 1024:6.1f} MiB  fds {s['fds']:3}  threads {s['threads']:3}  "
                      f"slowest reader {s['min_rate']:4.1f} fps (camera {s['fps']:4.1f})  live clients {s['clients']}  "
                      f"drops {s['drops']}", flush=True)
                next_sample += 30
    finally:
        for key in list(selector.get_map().values()):
            key.fileobj.close()
        camd.stop()
    late = [s for s in samples if s["t"] >= 120] or samples
    rss = [s["rss"] for s in late]
    suite.check("RSS stays flat after the first 2 minutes (within 8 MiB)", max(rss) - min(rss) <= 8 * 1024,
                f"{min(rss) / 1024:.1f} to {max(rss) / 1024:.1f} MiB over {len(rss)} samples")
    fds, threads = [s["fds"] for s in late], [s["threads"] for s in late]
    suite.check("fds and threads stay flat", max(fds) - min(fds) <= 4 and max(threads) - min(threads) <= 4,
                f"fds {min(fds)}-{max(fds)}, threads {min(threads)}-{max(threads)}")
    suite.check("every reading client gets the camera's rate", all(s["min_rate"] >= 0.9 * s["fps"] for s in samples),
                f"slowest {min(s['min_rate'] for s in samples):.1f} fps")
    suite.check("camd counts the clients connected", all(s["clients"] == args.clients + 1 for s in samples),
                f"{sorted(set(s['clients'] for s in samples))}")
    return suite.finish()


if __name__ == "__main__":
    sys.exit(main())
