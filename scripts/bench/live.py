#!/usr/bin/env python3
"""What camd's live H.264 costs and how fresh it is, on the host's synthetic source: prints figures.

    scripts/bench/live.py [--camd .build/release/camd] [--size 1280x720] [--fps 30]
                          [--clients 1,10,50] [--seconds 10] [--pause 10]

1. Clients: for each count, that many clients read `GET /v1/cameras/{id}/video` on the
   Unix socket at once, all from one selector loop in this process. Over `--seconds`
   (after 3 s to settle) it prints frames captured and encoded a second (one encode
   for every client), the slowest and median client's frames a second, camd's CPU
   (utime+stime from /proc) per captured frame and per frame delivered to a client,
   the latency from a frame's capture (its `prft`) to the first byte of its fragment at
   the client (p50/p99), each client's bytes a second, and camd's RSS.
   The first row, 0 clients, is camd capturing with nobody watching.
2. A client that stops reading: one client reads on while another (a 16 KiB receive
   buffer) stops reading for `--pause` seconds and then reads again. Prints whether the
   paused client's stream went on from a keyframe, the drops camd counted for it, the
   reading client's frames a second in each second of the pause, and camd's RSS
   before, during (the most) and after.

Nothing is asserted; docs/performance.md keeps the figures.
"""
import argparse
import os
import selectors
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import camdclient  # noqa: E402
from camdclient import Camd, camera_status, columns, proc_stats  # noqa: E402
from livestream import LiveClient as Client  # noqa: E402


def pump(clients, seconds, on_second=None):
    """Reads every client that is not paused for `seconds`; `on_second(i)` each second."""
    selector = selectors.DefaultSelector()
    registered = set()
    end = time.time() + seconds
    next_tick, tick = time.time() + 1, 0
    while True:
        now = time.time()
        if now >= end:
            break
        for client in clients:
            if not client.paused and client not in registered:
                selector.register(client.sock, selectors.EVENT_READ, client)
                registered.add(client)
            elif client.paused and client in registered:
                selector.unregister(client.sock)
                registered.discard(client)
        for key, _ in selector.select(timeout=min(0.1, max(end - now, 0))):
            if not key.data.read(time.time()):
                selector.unregister(key.fileobj)
                registered.discard(key.data)
                key.data.paused = True
        if on_second and time.time() >= next_tick:
            tick += 1
            next_tick += 1
            on_second(tick)
    selector.close()


def counters(camd):
    status = camera_status(camd.sock, camd.camera)
    stats = proc_stats(camd.pid)
    return status, stats


def percentile(values, q):
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def clients_row(camd, count, seconds):
    clients = [Client(camd) for _ in range(count)]
    try:
        pump(clients, 3)
        for client in clients:
            client.frames = []
        before, stats_before = counters(camd)
        started = time.time()
        pump(clients, seconds)
        elapsed = time.time() - started
        after, stats_after = counters(camd)
    finally:
        for client in clients:
            client.sock.close()
    captured = after["frames_captured"] - before["frames_captured"]
    encoded = after["video"]["frames_encoded"] - before["video"]["frames_encoded"]
    cpu = stats_after["cpu_seconds"] - stats_before["cpu_seconds"]
    rates = [len(c.frames) / elapsed for c in clients]
    delivered = sum(len(c.frames) for c in clients)
    latencies = [(f.arrival - f.capture) * 1000 for c in clients for f in c.frames if f.capture]
    byte_rate = statistics.median([sum(f.size for f in c.frames) / elapsed for c in clients]) if clients else 0
    return [count, f"{captured / elapsed:.1f}", f"{encoded / elapsed:.1f}",
            f"{min(rates):.1f}" if rates else "-", f"{statistics.median(rates):.1f}" if rates else "-",
            f"{cpu * 1000 / max(captured, 1):.2f}", f"{cpu * 1000 / delivered:.3f}" if delivered else "-",
            f"{percentile(latencies, 0.5):.1f}" if latencies else "-", f"{percentile(latencies, 0.99):.1f}" if latencies else "-",
            f"{byte_rate * 8 / 1e6:.2f}" if clients else "-", f"{stats_after['rss_kib'] / 1024:.1f}"]


def paused_client(camd, pause):
    reader, sleeper = Client(camd), Client(camd, rcvbuf=16384)
    rss, per_second = [], []
    try:
        pump([reader, sleeper], 3)
        rss_before = proc_stats(camd.pid)["rss_kib"]
        sleeper.paused = True
        last = [len(reader.frames)]

        def second(_):
            per_second.append(len(reader.frames) - last[0])
            last[0] = len(reader.frames)
            rss.append(proc_stats(camd.pid)["rss_kib"])

        paused_at = len(sleeper.frames)
        pump([reader, sleeper], pause, second)
        sleeper.paused = False
        pump([reader, sleeper], 5)
        rss_after = proc_stats(camd.pid)["rss_kib"]
        clients = camera_status(camd.sock, camd.camera)["video"]["live"]["clients"]
    finally:
        reader.sock.close()
        sleeper.sock.close()
    after = sleeper.frames[paused_at:]
    # Where the paused client's timeline jumps: the frames it lost; the frame after must be a keyframe.
    gaps = [(b.decode - a.decode, b.keyframe) for a, b in zip(after, after[1:]) if b.decode - a.decode > 0.5]
    drops = max((c["drops"] for c in clients), default=0)
    dropped = max((c["frames_dropped"] for c in clients), default=0)
    print(f"\nA client that stops reading for {pause:.0f} s (16 KiB receive buffer) beside one that reads on:")
    print(f"  paused client: {len(after)} frames after it read again; jumps in its timeline {[(round(g, 2), k) for g, k in gaps]}"
          f" (seconds, keyframe after); camd counted {drops} drops, {dropped} frames dropped")
    print(f"  reading client, frames each second of the pause: {per_second}")
    print(f"  camd RSS: before {rss_before / 1024:.1f} MiB, during the pause at most {max(rss) / 1024:.1f} MiB,"
          f" after {rss_after / 1024:.1f} MiB")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--camd", default=None)
    parser.add_argument("--size", default="1280x720")
    parser.add_argument("--fps", type=int, default=30)
    parser.add_argument("--clients", default="1,10,50")
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--pause", type=float, default=10)
    args = parser.parse_args()
    camd = Camd(binary=args.camd, size=args.size, fps=args.fps, log_level="warning").start()
    try:
        time.sleep(2)
        rows = [clients_row(camd, 0, args.seconds)]
        for count in [int(c) for c in args.clients.split(",") if c]:
            rows.append(clients_row(camd, count, args.seconds))
            time.sleep(2)
        commit = subprocess.run(["git", "-C", camdclient.REPO, "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
        print(f"camd live H.264 on the synthetic source, {args.size} at {args.fps} fps, {args.seconds:.0f} s a row"
              f" ({camdclient.describe_binary(camd.binary)}, commit {commit}, {os.cpu_count()} cores, load {camdclient.loadavg()})")
        columns([["clients", "captured/s", "encoded/s", "slowest client fps", "median client fps", "ms CPU/captured frame",
                "ms CPU/delivered frame", "latency p50 ms", "latency p99 ms", "Mbit/s a client", "RSS MiB"]] + rows)
        if args.pause > 0:
            paused_client(camd, args.pause)
        print(f"\ncamd peak RSS (VmHWM) over the run: {proc_stats(camd.pid)['hwm_kib'] / 1024:.1f} MiB")
    finally:
        camd.stop()


if __name__ == "__main__":
    main()
