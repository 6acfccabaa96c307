#!/usr/bin/env python3
"""Instructions camd spends per request, counted by valgrind's callgrind: prints figures.

    scripts/bench/callgrind.py [--camd .build-bench/release/camd] [--requests 200] [--keep DIR]

Starts camd under `valgrind --tool=callgrind --instr-atstart=no` on the synthetic
source (320x240, 5 fps, so the capture thread is nearly idle), and for each kind of
request turns instrumentation on (`callgrind_control -i on`), sends the requests one
connection after another on the Unix socket, turns it off and dumps the counts:

  status     GET /v1/status
  snapshot   GET /v1/cameras/synth/snapshot?max_age_ms=600000, answered from the JPEG
             already made (one snapshot before makes it; none of these encodes)
  snapshot, made ahead
             the same, answered from a JPEG made ahead of a poll (a client polls every
             4 s until one is made): its EXIF was written on the encoder thread
  snapshot, waits for its encode
             GET /v1/cameras/synth/snapshot?max_age_ms=0: a frame captured after the
             request, so each waits for the next frame (5 a second) and its encode; the
             frame's capture and encode are counted too, the same whatever answers it
             (--wait-requests of them, 30 by default: each takes a frame interval)

An idle window as long as the requests took is counted the same way and taken off,
so what is left is the requests' own work (HTTP, routing, the answer). Instructions,
not seconds: the count is the same whatever else the machine does. Nothing is
asserted; the closing notes and docs/performance.md keep the figures.

"code run" is how much different code ran in the window: the distinct instructions
(and 4 KiB pages of code) executed at least once, whatever the number of requests, as
every request of a kind runs the same code. It matters where each request runs cold, as
a poll every 0.5 s does: in the emulated VM (vm-compare) the first run of each piece of
code after a switch between processes costs a lookup of its translation, which executes
no instruction of the guest's. The window's other threads (the capture at 5 fps, the idle
loop) are in it too: the idle window's column shows about how much.
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import camdclient  # noqa: E402
from camdclient import Camd, call, camera_status, columns  # noqa: E402


def control(pid, *args):
    subprocess.run(["callgrind_control", *args, str(pid)], check=True, capture_output=True, timeout=120)


def read_dump(dump):
    """A dump's total instructions (Ir), and the code it ran: the distinct instruction addresses
    with a cost (the dump is written with --dump-instr=yes --compress-pos=no) and the distinct
    4 KiB pages they are on. The line after `calls=` is the call's inclusive cost at the call's
    address, not code of its own: skipped. One pass: a dump is several MB."""
    total = None
    addresses = set()
    after_call = False
    with open(dump) as f:
        for line in f:
            if line.startswith("totals:"):
                total = int(line.split()[1])
            elif line.startswith("calls="):
                after_call = True
            elif line.startswith("0x"):
                if not after_call:
                    fields = line.split()  # address, line (0: no debug information), Ir
                    if len(fields) > 1 and int(fields[-1]):
                        addresses.add(int(fields[0], 16))
                after_call = False
    return total, (len(addresses), len({address >> 12 for address in addresses}))


def counted(pid, outdir, work, keep=None):
    """Instructions (Ir) the process ran while `work()` ran, the seconds it took, and the code
    it ran (`read_dump`); the dump is copied to `keep` if given."""
    before = set(glob.glob(os.path.join(outdir, "callgrind.out*")))
    control(pid, "-z")
    control(pid, "-i", "on")
    started = time.monotonic()
    work()
    took = time.monotonic() - started
    control(pid, "-i", "off")
    control(pid, "-d")
    deadline = time.time() + 60
    while time.time() < deadline:
        dumps = set(glob.glob(os.path.join(outdir, "callgrind.out*"))) - before
        if dumps:
            time.sleep(0.5)
            dump = sorted(dumps)[-1]
            if keep:
                shutil.copyfile(dump, keep)
            total, code = read_dump(dump)
            if total is not None:
                return total, took, code
        time.sleep(0.2)
    raise RuntimeError("callgrind wrote no dump")


def learn_a_poll(camd, period=4.0):
    """Polls every `period` until camd makes a JPEG ahead of the next poll, and returns just
    after it is made: the requests counted next are answered from it, whose EXIF its encoder
    thread wrote. The period is long enough that the next one is made after them."""
    path = f"/v1/cameras/{camd.camera}/snapshot"
    start = time.monotonic()
    for index in range(12):
        time.sleep(max(0.0, start + index * period - time.monotonic()))
        made = camera_status(camd.sock, camd.camera, timeout=60)["snapshots"]["made_ahead"]
        if made:
            return
        code, _, _ = call(camd.sock, "GET", path, timeout=120)
        assert code == 200, code
        # Made ahead of the next poll: a period less the encode's lead, at most.
        time.sleep(max(0.0, start + index * period + period * 0.97 - time.monotonic()))
    raise RuntimeError(f"camd made no JPEG ahead of a poll every {period} s")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--camd", default=None)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--wait-requests", type=int, default=30)
    parser.add_argument("--keep", metavar="DIR", help="keep each kind's dumps there (KIND.busy.out, KIND.idle.out), "
                        "for callgrind_annotate")
    args = parser.parse_args()
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
    outdir = tempfile.mkdtemp(prefix="camd-callgrind-")
    # valgrind 3.19 cannot read the DWARF 5 of Swift 6's builds and gives up: a copy without
    # debug information (function names stay) is what it counts.
    source = args.camd or camdclient.default_camd()
    binary = os.path.join(outdir, "camd")
    subprocess.run(["objcopy", "--strip-debug", source, binary], check=True)
    camd = Camd(binary=binary, size="320x240", fps=5, log_level="warning",
                wrapper=["valgrind", "--tool=callgrind", "--instr-atstart=no",
                         "--dump-instr=yes", "--compress-pos=no", f"--callgrind-out-file={outdir}/callgrind.out.%p"])
    camd.start(timeout=300)
    rows = []
    try:
        snapshot = f"/v1/cameras/{camd.camera}/snapshot?max_age_ms=600000"
        code, _, _ = call(camd.sock, "GET", snapshot, timeout=120)
        assert code == 200, code
        for _ in range(10):  # warm: first requests allocate what later ones reuse
            call(camd.sock, "GET", "/v1/status", timeout=60)
            call(camd.sock, "GET", snapshot, timeout=60)
        waits = f"/v1/cameras/{camd.camera}/snapshot?max_age_ms=0"
        kinds = [("status", "/v1/status", None, args.requests), ("snapshot (ready JPEG)", snapshot, None, args.requests),
                 ("snapshot (JPEG made ahead of a poll)", snapshot, learn_a_poll, args.requests),
                 ("snapshot (waits for its encode)", waits, None, args.wait_requests)]
        for name, path, before, count in kinds:
            if before:
                before(camd)
            encoded = camera_status(camd.sock, camd.camera, timeout=60)["frames_encoded"]

            def requests(path=path, count=count):
                for _ in range(count):
                    code, _, _ = call(camd.sock, "GET", path, timeout=60)
                    assert code == 200, f"{path}: {code}"
            kept = os.path.join(args.keep, re.sub(r"[^a-z]+", "-", name).strip("-")) if args.keep else None
            busy, took, (code, pages) = counted(camd.proc.pid, outdir, requests, kept and kept + ".busy.out")
            idle, _, (idle_code, idle_pages) = counted(camd.proc.pid, outdir, lambda took=took: time.sleep(took),
                                                       kept and kept + ".idle.out")
            made = camera_status(camd.sock, camd.camera, timeout=60)["frames_encoded"] - encoded
            if made and path != waits:
                name += " (an encode fell in: counts too high)"
            elif path == waits and made != count:
                name += f" ({made} encodes for {count})"
            rows.append([name, count, f"{busy / count:,.0f}", f"{idle / count:,.0f}", f"{(busy - idle) / count:,.0f}",
                         f"{code:,} in {pages} pages", f"{idle_code:,} in {idle_pages} pages"])
    finally:
        camd.stop(timeout=120)
    commit = subprocess.run(["git", "-C", camdclient.REPO, "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    print(f"instructions per request, callgrind ({camdclient.describe_binary(source)} without its debug information,"
          f" commit {commit})")
    columns([["request", "requests", "Ir/request", "idle Ir/request", "request's own Ir", "code run (instructions)",
              "idle window's code run"]] + rows)


if __name__ == "__main__":
    main()
