#!/usr/bin/env python3
"""Where a polling client's time goes on the host, camd against the least a server can do: prints figures.

    scripts/bench/poll-steps.py [--camd .build/release/camd] [--period 0.25] [--polls 100] [--rounds 3]

camd runs on the synthetic source (640x480, 25 fps, quality 85) and `poll-floor.c` (the
VM's floor: a blocking accept, the request head read, one camd JPEG written from memory,
the connection closed) beside it. A client on this machine polls each on its Unix socket
on a fixed schedule, one connection a poll as vm-compare's client does, and times each
step: connecting, until the head is read, the body, and its own `close`. A step the client
takes while the server it woke runs on the client's core is the server's work too.

Each round polls, in turn: camd as it runs (its event loop and encoders under SCHED_BATCH,
`ThreadScheduling`); camd with those threads put back under SCHED_OTHER from outside (what
camd ran before); and the floor. Medians from each round's 6th poll, ms. Microseconds on a
real CPU: the emulated VM multiplies both the work and the switches between processes.
Nothing is asserted; docs/performance.md keeps the figures.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import camdclient  # noqa: E402
from camdclient import Camd  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
STEPS = ("connect", "head", "body", "close", "total")
SETTLING = 5


def poll(target, path, period, count):
    """Times of each step of `count` polls, `period` s apart, as (connect, head, body, close, total) ms."""
    rows = []
    due = time.monotonic() + period
    for _ in range(count):
        time.sleep(max(0.0, due - time.monotonic()))
        due += period
        code, _, body, (connected, headed, read, closed) = camdclient.timed_get(target, path)
        if code != 200 or not body.startswith(b"\xff\xd8"):
            raise RuntimeError(f"{target}: {code}, {len(body)} bytes")
        rows.append(tuple((b - a) * 1000 for a, b in
                          ((0, connected), (connected, headed), (headed, read), (read, closed), (0, closed))))
    return rows[SETTLING:]


def batch_threads(pid):
    """camd's threads under SCHED_BATCH, as (tid, name): its event loop and its encoders."""
    threads = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            if os.sched_getscheduler(int(tid)) == os.SCHED_BATCH:
                threads.append((int(tid), open(f"/proc/{pid}/task/{tid}/comm").read().strip()))
        except OSError:
            continue  # a thread that ended
    return threads


def set_policy(threads, policy):
    for tid, _ in threads:
        try:
            os.sched_setscheduler(tid, policy, os.sched_param(0))
        except OSError:
            continue


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--camd", default=camdclient.default_camd())
    parser.add_argument("--period", type=float, default=0.25)
    parser.add_argument("--polls", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    work = tempfile.mkdtemp(prefix="camd-poll-steps-")
    floor_binary = os.path.join(work, "poll-floor")
    subprocess.run([os.environ.get("CC", "cc"), "-O2", "-o", floor_binary, os.path.join(HERE, "poll-floor.c")], check=True)
    camd = Camd(binary=args.camd, workdir=os.path.join(work, "camd"), size="640x480", fps=25,
                log_level="warning", extra_camera="quality = 85\n")
    camd.start()
    floor = None
    try:
        path = f"/v1/cameras/{camd.camera}/snapshot"
        code, _, jpeg = camdclient.call(camd.sock, "GET", path)
        assert code == 200, code
        with open(os.path.join(work, "camd.jpg"), "wb") as f:
            f.write(jpeg)
        floor_socket = os.path.join(work, "floor.sock")
        floor = subprocess.Popen([floor_binary, floor_socket, os.path.join(work, "camd.jpg")])
        camdclient.wait_for(lambda: os.path.exists(floor_socket), 5)
        batch = batch_threads(camd.pid)
        print(f"camd's threads under SCHED_BATCH: {', '.join(name for _, name in batch) or 'none'}")
        print(f"where a poll's time goes, ms (median from each round's {SETTLING + 1}th poll); "
              f"{args.polls} polls every {args.period} s a round; {camdclient.describe_binary(args.camd)}")
        print(f"{'':28}" + "".join(f"{step:>9}" for step in STEPS))
        pooled = {}
        for index in range(args.rounds):
            for who in ("camd", "camd, SCHED_OTHER", "floor"):
                if who == "camd, SCHED_OTHER":
                    set_policy(batch, os.SCHED_OTHER)
                rows = poll(floor_socket if who == "floor" else camd.sock, path, args.period, args.polls)
                if who == "camd, SCHED_OTHER":
                    set_policy(batch, os.SCHED_BATCH)
                pooled.setdefault(who, []).extend(rows)
                medians = [statistics.median(column) for column in zip(*rows)]
                print(f"round {index + 1}: {who:19}" + "".join(f"{m:9.3f}" for m in medians))
        for who, rows in pooled.items():
            medians = [statistics.median(column) for column in zip(*rows)]
            print(f"pooled:  {who:19}" + "".join(f"{m:9.3f}" for m in medians))
    finally:
        if floor:
            floor.kill()
        camd.stop()


if __name__ == "__main__":
    main()
