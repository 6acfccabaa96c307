#!/usr/bin/env python3
"""What a recording costs camd on the host, on the synthetic source: prints figures.

    scripts/bench/record.py [--camd PATH] [--seconds 20] [--sizes 1280x720,1920x1080] [--fps 30]

For each size: camd's CPU (utime+stime from /proc) per frame captured while it only
captures (nobody wants video: the H.264 stage does not run), then while it records
(every frame converted and encoded once to H.264 with libx264), and camd's peak RSS
(VmHWM) across the recording, beside its RSS before. Then the file's bytes per second.
The synthetic source's frames are cheap to make, so the difference is the stage's.
Nothing is asserted.
"""
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import camdclient  # noqa: E402
import subprocess  # noqa: E402
from camdclient import Camd, call, camera_status, columns, proc_stats  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def measure(camd, seconds):
    """CPU seconds per captured frame over `seconds`, and frames captured."""
    before_cpu, before = cpu_seconds(camd.pid), camera_status(camd.sock, camd.camera)["frames_captured"]
    time.sleep(seconds)
    after_cpu, after = cpu_seconds(camd.pid), camera_status(camd.sock, camd.camera)["frames_captured"]
    frames = max(after - before, 1)
    return (after_cpu - before_cpu) / frames, frames


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--camd", default=None)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--sizes", default="1280x720,1920x1080")
    parser.add_argument("--fps", type=int, default=30)
    args = parser.parse_args()
    rows = []
    for size in args.sizes.split(","):
        camd = Camd(binary=args.camd, size=size, fps=args.fps, log_level="warning").start()
        try:
            time.sleep(2)
            idle_cpu, _ = measure(camd, args.seconds / 2)
            rss_before = proc_stats(camd.pid)["rss_kib"]
            code, _, data = call(camd.sock, "POST", f"/v1/cameras/{camd.camera}/recordings",
                                 body={"duration": args.seconds + 2})
            assert code == 201, data
            time.sleep(2)
            recording_cpu, frames = measure(camd, args.seconds)
            while camera_status(camd.sock, camd.camera)["video"]["recording"]["state"] != "off":
                time.sleep(0.2)
            status = camera_status(camd.sock, camd.camera)
            movie = status["video"]["recording"]["saved"][0]
            with open(f"/proc/{camd.pid}/status") as f:
                hwm = next(int(line.split()[1]) for line in f if line.startswith("VmHWM"))
            rows.append([size, f"{frames / args.seconds:.1f}", f"{idle_cpu * 1000:.2f}", f"{recording_cpu * 1000:.2f}",
                         f"{(recording_cpu - idle_cpu) * 1000:.2f}", status["video"]["encoder"],
                         f"{rss_before / 1024:.1f}", f"{hwm / 1024:.1f}",
                         f"{movie['bytes'] / movie['duration'] * 8 / 1e6:.2f}"])
        finally:
            camd.stop()
    commit = subprocess.run(["git", "-C", camdclient.REPO, "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    print(f"camd recording on the synthetic source, {args.seconds:.0f} s each (commit {commit}, {os.cpu_count()} cores)")
    header = ["size", "fps", "ms CPU/frame capturing", "ms CPU/frame recording", "H.264 stage ms/frame",
              "encoder", "RSS before MiB", "peak RSS MiB", "Mbit/s"]
    columns([header] + rows)


if __name__ == "__main__":
    main()
