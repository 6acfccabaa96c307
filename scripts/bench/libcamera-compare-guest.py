#!/usr/bin/env python3
"""Runs INSIDE the throwaway VM started by scripts/bench/libcamera-compare (as root).

    python3 libcamera-compare-guest.py --out DIR --camd PATH --vimc MODULE_DIR [--window S]

CPU per frame of a libcamera camera (vimc's "Sensor B", RGB888, 640x480 asked, 636x480
given) in camd, against libcamera's own `cam` capturing the same camera with no
encoding, and against camd on a V4L2 camera at the same size (vivid, YUYV 640x480):

  - capture only: `cam -C` for WINDOW seconds, and camd running the camera with no
    client (camd copies no pixels then: the cost of requests, completions and requeues);
  - streaming: camd's MJPEG stream to one client, libcamera and vivid, CPU per encoded
    frame; the difference is what the libcamera path adds, and the format's conversion
    (RGB888 through TurboJPEG's RGB path against YUYV's planes) is part of it.

CPU is utime+stime of the process (all threads) from /proc/PID/stat over a window
after warm-up; frames are what the process itself counted (cam's lines, camd's status).
The VM is emulated (TCG): only the ratios mean anything. DIR is the VM's writable share:
only results go there (libcamera-compare.txt, .json, logs); sockets live in /run/bench.
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import daemon as bench  # noqa: E402  (scripts/bench/daemon.py: CPU, stream phase)
from camdclient import Camd, camera_status, wait_for  # noqa: E402

WORK = "/run/bench"
SIZE, FPS = "640x480", 30
T0 = time.time()


def log(msg):
    print(f"[guest +{time.time() - T0:.0f}s] {msg}", flush=True)


def run(cmd, timeout=60):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def load_cameras(vimc_dir):
    """vimc (for libcamera) and vivid (a plain V4L2 camera); returns vivid's capture node."""
    run(["modprobe", "-a", "videobuf2-vmalloc", "videobuf2-dma-contig", "videobuf2-v4l2", "v4l2-tpg"])
    out = run(["insmod", os.path.join(vimc_dir, "vimc.ko")])
    if out.returncode != 0:
        raise RuntimeError(f"insmod vimc.ko: {out.stderr.strip()}")
    run(["modprobe", "vivid", "n_devs=1"])
    run(["udevadm", "settle", "--timeout=60"], timeout=90)
    if not wait_for(lambda: os.path.exists("/dev/media0"), 20, 0.2):
        raise RuntimeError("vimc made no /dev/media0")
    deadline = time.time() + 20
    while time.time() < deadline:
        for node in sorted(os.listdir("/sys/class/video4linux")):
            try:
                with open(f"/sys/class/video4linux/{node}/name") as f:
                    name = f.read().strip()
            except OSError:
                continue
            if name.startswith("vivid") and "vid-cap" in name and os.path.exists(f"/dev/{node}"):
                return f"/dev/{node}"
        time.sleep(0.2)
    raise RuntimeError("vivid made no capture node")


def cam_phase(window, warmup=3.0):
    """`cam` capturing camera 1 at 640x480 RGB888 (no file, no display): CPU per frame."""
    cmd = ["cam", "-c", "1", "-C", "-s", "width=640,height=480,pixelformat=RGB888"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    frames, lines = [], []

    def reader():
        for line in proc.stdout:
            lines.append(line.rstrip())
            if re.search(r"seq:\s*\d+", line):
                frames.append(time.monotonic())

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    try:
        deadline = time.time() + 60
        while not frames and time.time() < deadline and proc.poll() is None:
            time.sleep(0.1)
        if not frames:
            raise RuntimeError("cam captured nothing: " + " | ".join(lines[-10:]))
        time.sleep(warmup)
        n0, c0, t0 = len(frames), bench.cpu_seconds(proc.pid), time.monotonic()
        time.sleep(window)
        n1, c1, t1 = len(frames), bench.cpu_seconds(proc.pid), time.monotonic()
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        thread.join(5)
    size = next((m.group(1) for line in lines for m in [re.search(r"(\d+x\d+)-RGB888", line)] if m), None)
    n = n1 - n0
    return {"frames": n, "wall": t1 - t0, "cpu": c1 - c0, "fps": n / (t1 - t0),
            "cpu_per_frame_ms": (c1 - c0) / n * 1000 if n else float("nan"), "size": size,
            "first_lines": lines[:6]}


def camd_phases(args, name, device, extra_camera=""):
    """camd on one camera: capture with no client, then an MJPEG stream to one client."""
    camd = Camd(binary=args.camd, workdir=f"{WORK}/{name}", size=SIZE, fps=FPS, camera_id=name,
                device=device, log_level="warning", extra_camera=extra_camera)
    out = {}
    try:
        camd.start(timeout=120)
        time.sleep(3)
        st = camera_status(camd.sock, name)
        out["status"] = {k: st.get(k) for k in ("source", "format", "size", "configured_fps", "measured_fps")}
        log(f"camd {name}: {out['status']}")
        idle = bench.idle_phase(camd, args.window)
        idle["cpu_per_frame_ms"] = (idle["cpu_pct"] / 100 * idle["wall"]) / idle["captured"] * 1000 if idle["captured"] else float("nan")
        out["capture"] = idle
        log(f"camd {name} capturing, no client: {idle['captured']} frames, {idle['cpu_per_frame_ms']:.2f} ms CPU a frame, "
            f"{idle['encoded']} encoded")
        stream = bench.stream_window(camd, args.window)
        out["stream"] = stream
        log(f"camd {name} streaming: {stream['encoded']} encoded in {stream['wall']:.1f} s, "
            f"{stream['cpu_per_encoded_ms']:.2f} ms CPU a frame, encode {stream['encode_ms']} ms")
    finally:
        out["exit"] = bench.stop_keeping_log(camd, os.path.join(args.out, f"camd-{name}.log"))
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--camd", required=True)
    parser.add_argument("--vimc", required=True)
    parser.add_argument("--window", type=float, default=20)
    args = parser.parse_args()
    os.makedirs(WORK, exist_ok=True)
    results = {"window": args.window}
    vivid = load_cameras(args.vimc)
    log(f"vimc loaded; vivid at {vivid}; {run(['cam', '-l']).stdout.strip()!r}")
    results["cam"] = cam_phase(args.window)
    log(f"cam: {results['cam']['frames']} frames at {results['cam']['fps']:.1f} fps, "
        f"{results['cam']['cpu_per_frame_ms']:.2f} ms CPU a frame")
    # The same JPEG quality for both streams.
    results["libcamera"] = camd_phases(args, "vimc", "libcamera:0", "quality = 80\n")
    results["vivid"] = camd_phases(args, "vivid", vivid, 'format = "YUYV"\nquality = 80\n')
    with open(os.path.join(args.out, "libcamera-compare.json"), "w") as f:
        json.dump(results, f, indent=1)

    cam, lib, viv = results["cam"], results["libcamera"], results["vivid"]
    rows = [
        ("", "cam (libcamera)", "camd libcamera", "camd vivid (V4L2)"),
        ("format, size", f"RGB888 {cam['size']}", f"{lib['status']['format']} {lib['status']['size']}",
         f"{viv['status']['format']} {viv['status']['size']}"),
        ("capture only: frames/s", f"{cam['fps']:.1f}", f"{lib['capture']['captured'] / lib['capture']['wall']:.1f}",
         f"{viv['capture']['captured'] / viv['capture']['wall']:.1f}"),
        ("capture only: ms CPU/frame", f"{cam['cpu_per_frame_ms']:.2f}", f"{lib['capture']['cpu_per_frame_ms']:.2f}",
         f"{viv['capture']['cpu_per_frame_ms']:.2f}"),
        ("MJPEG stream: frames/s", "", f"{lib['stream']['encoded_fps']:.1f}", f"{viv['stream']['encoded_fps']:.1f}"),
        ("MJPEG stream: ms CPU/frame", "", f"{lib['stream']['cpu_per_encoded_ms']:.2f}", f"{viv['stream']['cpu_per_encoded_ms']:.2f}"),
        ("MJPEG stream: encode ms (camd)", "", f"{lib['stream']['encode_ms']}", f"{viv['stream']['encode_ms']}"),
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(r)).rstrip() for r in rows]
    ratio_capture = lib["capture"]["cpu_per_frame_ms"] / cam["cpu_per_frame_ms"]
    ratio_stream = lib["stream"]["cpu_per_encoded_ms"] / viv["stream"]["cpu_per_encoded_ms"]
    ratio_capture_v4l2 = lib["capture"]["cpu_per_frame_ms"] / viv["capture"]["cpu_per_frame_ms"]
    lines += ["",
              f"capture only, camd libcamera / cam:            {ratio_capture:.2f}",
              f"capture only, camd libcamera / camd vivid:     {ratio_capture_v4l2:.2f}",
              f"MJPEG stream, camd libcamera / camd vivid:     {ratio_stream:.2f}",
              f"window {args.window:.0f} s each after 3 s of warm-up; emulated CPU (TCG): ratios only"]
    text = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "libcamera-compare.txt"), "w") as f:
        f.write(text)
    print(text, flush=True)


if __name__ == "__main__":
    main()
