#!/usr/bin/env python3
"""Runs INSIDE the throwaway VM started by scripts/bench/vm-compare (as root).

    python3 vm-compare-guest.py --out DIR --camd PATH --camctl PATH [--runs N] [--snapshots N] [--window S]

camd vs µStreamer and camctl vs fswebcam on vivid's /dev/video0 at 640x480
YUYV, 25 fps, quality 85. DIR is the VM's writable share: only results go
there (vm-compare.txt, vm-compare.json, logs); sockets, configs and JPEGs live
in the guest's own /run/bench. Every step is bounded in time.
"""
import argparse
import json
import os
import re
import selectors
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import daemon as bench  # noqa: E402  (scripts/bench/daemon.py: CPU, percentiles, stream phase)
import camdclient  # noqa: E402
from camdclient import SNAPSHOT_COUNTERS, Camd, MultipartStream, call, camera_status  # noqa: E402
from livestream import LiveMP4Stream, request as live_request  # noqa: E402

DEV = "/dev/video0"
SIZE, FORMAT, FPS, QUALITY, SKIP = "640x480", "YUYV", 25, 85, 5
WORK = "/run/bench"
# µStreamer listens on a Unix socket in the guest's /run, as camd does, so that both are
# asked the same way (issue 16 measures both on Unix sockets).
USTREAMER = f"{WORK}/ustreamer.sock"
T0 = time.time()


def log(msg):
    print(f"[guest +{time.time() - T0:.0f}s] {msg}", flush=True)


def run(cmd, timeout=60):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def device_fps():
    """The frame rate vivid is set to now (what the last tool asked with S_PARM)."""
    out = run(["v4l2-ctl", "-d", DEV, "--get-parm"]).stdout
    m = re.search(r"Frames per second:\s*([\d.]+)", out)
    return float(m.group(1)) if m else None


def reset_fps():
    """Back to 5 fps, so the next tool's rate shows whether it asked for 25."""
    run(["v4l2-ctl", "-d", DEV, "--set-parm=5"])


def load_vivid():
    run(["modprobe", "vivid", "n_devs=1"])
    run(["udevadm", "settle", "--timeout=60"], timeout=90)
    for _ in range(100):
        if os.path.exists(DEV):
            return True
        time.sleep(0.2)
    return False


# ---------------------------------------------------------------- camd

def vivid_camd(args, name, camera_extra="", binary=None):
    """A camd of our own on vivid (camdclient's scratch config with vivid for testsrc),
    in the guest's /run/bench/NAME; `camera_extra` goes at the end of its [[camera]]. The
    binary is --camd's unless `binary` says."""
    camd = Camd(binary=binary or args.camd, workdir=f"{WORK}/{name}", size=SIZE, fps=FPS, camera_id="vivid", log_level="warning")
    with open(camd.config, "w") as f:
        f.write(f'[daemon]\nsocket = "{camd.sock}"\nsocket_group = ""\nphoto_folder = "{camd.photos}"\n'
                f'log_level = "warning"\n\n[[camera]]\nid = "vivid"\ndevice = "{DEV}"\nformat = "{FORMAT}"\n'
                f'size = "{SIZE}"\nfps = {FPS}\nquality = {QUALITY}\n{camera_extra}')
    return camd


def camd_phase(args, every_frame=False):
    """camd as it ships (encodes only what is asked for), or with encode_every_frame = true (as µStreamer works)."""
    name = "camd-every" if every_frame else "camd"
    camd = vivid_camd(args, name, "encode_every_frame = true\n" if every_frame else "")
    reset_fps()
    out = {}
    try:
        camd.start(timeout=90)
        time.sleep(3)
        st = camera_status(camd.sock, "vivid")
        out["status"] = {k: st.get(k) for k in ("format", "size", "configured_fps", "measured_fps", "quality")}
        out["device_fps"] = device_fps()
        log(f"camd running: {out['status']}, vivid at {out['device_fps']} fps")
        out["idle"] = bench.idle_phase(camd, args.idle)
        log(f"camd idle: {out['idle']['cpu_pct']:.1f}% CPU, {out['idle']['encoded']} frames encoded")
        out["snap"] = bench.snapshot_phase(camd, args.snapshots, "spaced")
        out["snap_b2b"] = bench.snapshot_phase(camd, args.snapshots, "b2b")
        log(f"camd snapshots: p50 {out['snap']['p50']:.1f} ms p99 {out['snap']['p99']:.1f} ms, errors {out['snap']['errors']}")
        s = bench.stream_window(camd, args.window)
        out["stream"] = s
        out["measured_fps_after"] = camera_status(camd.sock, "vivid").get("measured_fps")
        log(f"camd stream: {s['encoded']} encoded, {s['delivered']} delivered in {s['wall']:.1f} s, CPU {s['cpu']:.2f} s")
    finally:
        out["exit"] = bench.stop_keeping_log(camd, os.path.join(args.out, f"{name}.log"))
    return out


# ---------------------------------------------------------------- µStreamer

def ustreamer_state():
    return json.loads(call(USTREAMER, "GET", "/state", timeout=5)[2])["result"]


def ustreamer_snapshots(n, gap, warmup=5):
    """Like daemon.py's snapshot_phase: `gap` 0.1 s (spaced) or 0 (back to back)."""
    times, errors, sizes, ages, first_headers = [], 0, [], [], {}
    for i in range(n + warmup):
        if gap:
            time.sleep(gap)
        t = time.perf_counter()
        try:
            code, headers, body = call(USTREAMER, "GET", "/snapshot", timeout=10)
            ok = code == 200 and body.startswith(b"\xff\xd8")
            headers = dict(headers)
            if i == 0:
                first_headers = headers
            age = ustreamer_age(headers)
            if ok and age is not None and i >= warmup:
                ages.append(age)
        except OSError:
            ok, body = False, b""
        dt = (time.perf_counter() - t) * 1000
        if i < warmup:
            continue
        if ok:
            times.append(dt)
            sizes.append(len(body))
        else:
            errors += 1
    return {"n": len(times), "errors": errors, "p50": bench.percentile(times, 50), "p99": bench.percentile(times, 99),
            "min": min(times, default=float("nan")), "max": max(times, default=float("nan")),
            "mean_bytes": sum(sizes) / len(sizes) if sizes else 0,
            "age_p50": bench.percentile(ages, 50), "age_p99": bench.percentile(ages, 99), "headers": first_headers}


def read_in_thread(sock, on_data, stop):
    """Reads `sock` on a thread of its own until `stop` is set or the peer closes,
    handing each piece to `on_data(data)`; returns the started thread."""
    sock.settimeout(0.5)

    def reader():
        while not stop.is_set():
            try:
                data = sock.recv(1 << 18)
            except socket.timeout:
                continue
            except OSError:
                return
            if not data:
                return
            on_data(data)

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    return thread


def ustreamer_stream(pid, window, warmup=3.0):
    counter = MultipartStream()  # counts parts in counter.frames
    received = [0]
    stop = threading.Event()
    s = camdclient.connect(USTREAMER, 10)
    s.sendall(b"GET /stream HTTP/1.1\r\nHost: localhost\r\n\r\n")

    def on_data(data):
        received[0] += len(data)
        counter.feed(data)

    t = read_in_thread(s, on_data, stop)
    try:
        time.sleep(warmup)
        p0, c0, t0, b0 = counter.frames, bench.cpu_seconds(pid), time.time(), received[0]
        fps_samples = []
        end = t0 + window
        while time.time() < end:
            time.sleep(min(2.0, max(0.0, end - time.time())))
            try:
                st = ustreamer_state()
                fps_samples.append(st["source"]["captured_fps"])
            except (OSError, KeyError, ValueError):
                pass
        p1, c1, t1, b1 = counter.frames, bench.cpu_seconds(pid), time.time(), received[0]
    finally:
        stop.set()
        t.join(5)
        s.close()
    wall, frames, cpu = t1 - t0, p1 - p0, c1 - c0
    mean_fps = statistics.mean(fps_samples) if fps_samples else float("nan")
    return {"wall": wall, "cpu": cpu, "delivered": frames, "captured_fps_state": mean_fps,
            "frames_from_state": mean_fps * wall, "encoded": frames, "bytes_per_second": (b1 - b0) / wall,
            "cpu_per_encoded_ms": cpu / frames * 1000 if frames else float("nan")}


def ustreamer_phase(args, then=None, log_name="ustreamer.log"):
    """µStreamer on vivid, once it captures: idle CPU, snapshots and a stream client, or
    instead `then(proc, out)` (another phase's measurements of it)."""
    reset_fps()
    cmd = ["ustreamer", "-d", DEV, "-r", SIZE, "-m", FORMAT, "-f", str(FPS), "-q", str(QUALITY),
           "--unix", USTREAMER, "--unix-rm", "--exit-on-parent-death"]
    logf = open(os.path.join(args.out, log_name), "w")
    proc = subprocess.Popen(cmd, stdout=logf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    out = {"command": " ".join(cmd)}
    try:
        deadline = time.time() + 60
        st = None
        while time.time() < deadline:
            try:
                st = ustreamer_state()
                if st["source"]["online"] and st["source"]["captured_fps"] > 0:
                    break
            except (OSError, KeyError, ValueError):
                pass
            time.sleep(0.5)
        time.sleep(3)
        st = ustreamer_state()
        out["state"] = st
        out["device_fps"] = device_fps()
        log(f"ustreamer running: captured_fps {st['source']['captured_fps']}, encoder {st.get('encoder')}, vivid at {out['device_fps']} fps")
        if then:
            then(proc, out)
            return out
        c0, t0 = bench.cpu_seconds(proc.pid), time.time()
        time.sleep(args.idle)
        out["idle"] = {"cpu_pct": (bench.cpu_seconds(proc.pid) - c0) / (time.time() - t0) * 100,
                       "captured_fps": ustreamer_state()["source"]["captured_fps"]}
        log(f"ustreamer idle: {out['idle']['cpu_pct']:.1f}% CPU")
        c0 = bench.cpu_seconds(proc.pid)
        out["snap"] = ustreamer_snapshots(args.snapshots, 0.1)
        out["snap_b2b"] = ustreamer_snapshots(args.snapshots, 0.0)
        out["snap"]["cpu_per_request_ms"] = (bench.cpu_seconds(proc.pid) - c0) / max(out["snap"]["n"], 1) * 1000
        log(f"ustreamer snapshots: p50 {out['snap']['p50']:.1f} ms p99 {out['snap']['p99']:.1f} ms, errors {out['snap']['errors']}")
        out["stream"] = ustreamer_stream(proc.pid, args.window)
        s = out["stream"]
        log(f"ustreamer stream: {s['delivered']} delivered in {s['wall']:.1f} s (state says {s['frames_from_state']:.0f}), CPU {s['cpu']:.2f} s")
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        logf.close()
    return out


# ---------------------------------------------------------------- cold one-shot snapshots

def jpeg_size(path):
    try:
        from PIL import Image
        with Image.open(path) as im:
            return f"{im.format} {im.width}x{im.height}"
    except Exception as e:  # noqa: BLE001 - reported, not fatal
        return f"unreadable: {e}"


def cold_phase(args):
    # Both binaries run from the guest's own tmpfs: its root is the host's over 9p, which
    # keeps no mapped pages of an executable between runs, so a bigger binary (camctl has
    # the Swift runtime linked in) would be timing 9p reads, not its own start. The shared
    # libraries of both stay on 9p (fswebcam has more of them).
    local = {}
    for name, path in (("camctl", args.camctl), ("fswebcam", shutil.which("fswebcam"))):
        local[name] = os.path.join(WORK, f"{name}-local")
        shutil.copy2(path, local[name])
    tools = {
        "camctl": [local["camctl"], "snapshot", "--no-daemon", "-d", DEV, "--size", SIZE, "--format", FORMAT,
                   "--fps", str(FPS), "--quality", str(QUALITY), "--skip", str(SKIP), "-o", f"{WORK}/camctl.jpg"],
        "fswebcam": [local["fswebcam"], "-d", DEV, "-r", SIZE, "-p", FORMAT, "--fps", str(FPS), "-S", str(SKIP), "-F", "1",
                     "--jpeg", str(QUALITY), "--no-banner", f"{WORK}/fswebcam.jpg"],
    }
    out = {name: {"command": " ".join(cmd), "times": [], "fps_set": [], "fails": 0} for name, cmd in tools.items()}
    for name, cmd in tools.items():  # untimed warm-up: loads the binaries and libraries into the page cache
        run(cmd, timeout=60)
    for i in range(args.runs):
        order = list(tools.items()) if i % 2 == 0 else list(reversed(tools.items()))
        for name, cmd in order:
            reset_fps()
            t = time.perf_counter()
            r = run(cmd, timeout=60)
            dt = time.perf_counter() - t
            out[name]["fps_set"].append(device_fps())
            if r.returncode != 0:
                out[name]["fails"] += 1
                out[name]["last_error"] = (r.stderr or r.stdout)[-400:]
                continue
            out[name]["times"].append(dt * 1000)
            out[name]["stderr"] = r.stderr[-600:]
    # Process start alone, to tell it from the device work: each tool's cheapest command.
    starts = {"camctl": [local["camctl"], "--help"], "fswebcam": [local["fswebcam"], "--version"]}
    for name, cmd in starts.items():
        times = []
        for _ in range(args.runs):
            t = time.perf_counter()
            run(cmd, timeout=60)
            times.append((time.perf_counter() - t) * 1000)
        out[name]["start_median"] = statistics.median(times)
        out[name]["start_command"] = " ".join(cmd)
    for name in tools:
        t = out[name]["times"]
        out[name]["median"] = statistics.median(t) if t else float("nan")
        out[name]["min"] = min(t, default=float("nan"))
        out[name]["max"] = max(t, default=float("nan"))
        out[name]["output"] = jpeg_size(f"{WORK}/{name}.jpg")
        log(f"{name} cold: median {out[name]['median']:.0f} ms over {len(t)} runs, fails {out[name]['fails']}, "
            f"vivid left at {sorted(set(out[name]['fps_set']))} fps, output {out[name]['output']}")
    return out


# ---------------------------------------------------------------- recording: camd vs ffmpeg -f v4l2

def record_phase(args):
    """CPU per recorded frame: camd's H.264 stage (a recording through the API) against
    `ffmpeg -f v4l2 ... -c:v libx264` with the same encoder settings (veryfast, zerolatency,
    crf 23, a keyframe every 2 s), both reading vivid at 640x480 YUYV 25 fps for `window` s.
    The emulated CPU encodes well under 25 fps, so each is counted per frame it wrote."""
    out = {}
    camd = vivid_camd(args, "record", '[camera.video]\nencoder = "libx264"\n')
    camd.start(timeout=120)
    try:
        time.sleep(3)
        code, _, data = call(camd.sock, "POST", "/v1/cameras/vivid/recordings", body={"duration": args.window + 10})
        assert code == 201, data
        time.sleep(5)  # past the encoder's start
        before_cpu, before = bench.cpu_seconds(camd.pid), camera_status(camd.sock, "vivid")["video"]["frames_encoded"]
        time.sleep(args.window)
        after_cpu, after = bench.cpu_seconds(camd.pid), camera_status(camd.sock, "vivid")["video"]["frames_encoded"]
        call(camd.sock, "POST", "/v1/cameras/vivid/recordings/stop", timeout=120)
        out["camd"] = {"cpu": after_cpu - before_cpu, "frames": after - before,
                       "cpu_per_frame_ms": 1000 * (after_cpu - before_cpu) / max(after - before, 1)}
    finally:
        camd.stop()
    log(f"camd recording: {out['camd']}")
    clip = f"{WORK}/ffmpeg.mp4"
    start = os.times()
    ff = run(["ffmpeg", "-nostdin", "-v", "error", "-f", "v4l2", "-input_format", "yuyv422", "-video_size", SIZE,
              "-framerate", str(FPS), "-i", DEV, "-t", str(args.window), "-c:v", "libx264", "-preset", "veryfast",
              "-tune", "zerolatency", "-crf", "23", "-g", str(2 * FPS), "-pix_fmt", "yuv420p", "-y", clip],
             timeout=int(args.window * 20 + 120))
    end = os.times()
    frames = int(run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                      "stream=nb_read_frames", "-of", "csv=p=0", clip], timeout=300).stdout.strip() or 0)
    cpu = (end.children_user - start.children_user) + (end.children_system - start.children_system)
    out["ffmpeg"] = {"cpu": cpu, "frames": frames, "cpu_per_frame_ms": 1000 * cpu / max(frames, 1),
                     "errors": ff.stderr[-300:]}
    log(f"ffmpeg recording: {out['ffmpeg']}")
    return out


# ---------------------------------------------------------------- live H.264: camd vs ffmpeg -f mpegts vs µStreamer's MJPEG

def live_phase(args):
    """CPU per delivered frame and bytes a second of a live stream from vivid: camd's live
    H.264 (`GET /v1/cameras/vivid/video`, one client reading it on the Unix socket), the
    same from `ffmpeg -f v4l2 ... -c:v libx264 -f mpegts` (same encoder settings), and
    µStreamer's MJPEG /stream at quality 85. The emulated CPU encodes H.264 well under 25
    fps, so each is counted per frame delivered."""
    out = {}
    camd = vivid_camd(args, "live", '[camera.video]\nencoder = "libx264"\n')
    reset_fps()
    camd.start(timeout=120)
    stream, frames, stop = LiveMP4Stream(), [], threading.Event()
    sock = camdclient.connect(camd.sock)
    sock.sendall(live_request("vivid"))
    thread = read_in_thread(sock, lambda data: frames.extend(stream.feed(data, time.time())), stop)
    try:
        time.sleep(8)  # past the encoder's start and the first keyframe
        n0, b0, c0, t0 = len(frames), stream.received, bench.cpu_seconds(camd.pid), time.time()
        time.sleep(args.window)
        n1, b1, c1, t1 = len(frames), stream.received, bench.cpu_seconds(camd.pid), time.time()
        window = frames[n0:n1]
        latencies = [(f.arrival - f.capture) * 1000 for f in window if f.capture]
        out["camd"] = {"cpu": c1 - c0, "frames": n1 - n0, "cpu_per_frame_ms": 1000 * (c1 - c0) / max(n1 - n0, 1),
                       "bytes_per_second": (b1 - b0) / (t1 - t0), "fps": (n1 - n0) / (t1 - t0),
                       "latency_p50_ms": bench.percentile(latencies, 50) if latencies else None}
    finally:
        stop.set()
        thread.join(5)
        sock.close()
        camd.stop()
    log(f"camd live: {out['camd']}")
    reset_fps()
    clip = f"{WORK}/ffmpeg.ts"
    start = os.times()
    ff = run(["ffmpeg", "-nostdin", "-v", "error", "-f", "v4l2", "-input_format", "yuyv422", "-video_size", SIZE,
              "-framerate", str(FPS), "-i", DEV, "-t", str(args.window), "-c:v", "libx264", "-preset", "veryfast",
              "-tune", "zerolatency", "-crf", "23", "-g", str(2 * FPS), "-pix_fmt", "yuv420p", "-f", "mpegts", "-y", clip],
             timeout=int(args.window * 20 + 120))
    end = os.times()
    # MPEG-TS lists the stream once per program too: the first number is the count.
    count = int((run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                      "stream=nb_read_frames", "-of", "csv=p=0", clip], timeout=300).stdout.split() or ["0"])[0])
    cpu = (end.children_user - start.children_user) + (end.children_system - start.children_system)
    out["ffmpeg"] = {"cpu": cpu, "frames": count, "cpu_per_frame_ms": 1000 * cpu / max(count, 1),
                     "bytes_per_second": os.path.getsize(clip) / args.window, "errors": ff.stderr[-300:]}
    log(f"ffmpeg live: {out['ffmpeg']}")
    u = ustreamer_phase(args, then=lambda proc, out: out.update(stream=ustreamer_stream(proc.pid, args.window)),
                        log_name="ustreamer-live.log")
    out["ustreamer"] = {"cpu": u["stream"]["cpu"], "frames": u["stream"]["delivered"],
                        "cpu_per_frame_ms": u["stream"]["cpu_per_encoded_ms"],
                        "bytes_per_second": u["stream"]["bytes_per_second"]}
    log(f"ustreamer MJPEG: {out['ustreamer']}")
    return out


# ---------------------------------------------------------------- polling clients: camd vs µStreamer

POLL_PERIODS = ((0.5, 40), (2.0, 15))  # (seconds between requests, requests)
# The polls a new client's period takes to learn (three on a timer, five when it takes over from
# another period) and the first JPEG made ahead: "p50 from the 6th poll" and "p99 from the 6th poll"
# leave them out. Those first polls wait for their encode (there is nothing to make ahead for
# yet), so they are most of a run's slowest; p99 over all polls is theirs.
SETTLING_POLLS = 5


def poll_client(target, path, period, count, pid, age_of, idle):
    """A client that asks for a snapshot every `period` s on a fixed schedule (as Home
    Assistant, OctoPrint and Moonraker poll), then stops: each answer's time, the frame's
    age when the answer arrived, the daemon's CPU per request over the polling, and its
    CPU for `idle` s after the client stopped. The figures are `poll_figures` of one run."""
    times, ages, errors = [], [], 0
    # Where an answer's time goes: connecting, until the status line and headers are read
    # (the daemon's work), and reading the body; and what was sent (a bigger JPEG or more
    # headers cost the client time of its own).
    connects, heads, sizes, header_counts = [], [], [], []
    c0, t0 = bench.cpu_seconds(pid), time.monotonic()
    due = t0 + period
    for _ in range(count):
        time.sleep(max(0.0, due - time.monotonic()))
        due += period
        try:
            code, headers, body, (connected, headed, _, closed) = camdclient.timed_get(target, path)
        except OSError:
            errors += 1
            continue
        if code != 200 or not body.startswith(b"\xff\xd8"):
            errors += 1
            continue
        times.append(closed * 1000)
        connects.append(connected * 1000)
        heads.append(headed * 1000)
        sizes.append(len(body))
        header_counts.append(len(headers))
        age = age_of(dict(headers))
        if age is not None:
            ages.append(age)
    c1, t1 = bench.cpu_seconds(pid), time.monotonic()
    time.sleep(idle)
    c2, t2 = bench.cpu_seconds(pid), time.monotonic()
    run = {"answer_ms": [round(t, 2) for t in times], "age_ms": [round(a, 2) for a in ages],
           "connect_ms": [round(t, 2) for t in connects], "head_ms": [round(t, 2) for t in heads],
           "sizes": sizes, "header_counts": header_counts, "errors": errors,
           "cpu_s": c1 - c0, "wall_s": t1 - t0, "idle_cpu_s": c2 - c1, "idle_wall_s": t2 - t1}
    return dict(poll_figures(period, [run]), runs=[run])


def poll_figures(period, runs):
    """The figures of one or more runs of `poll_client` at `period`, their requests together:
    answer time p50 and p99 (and each from each run's sixth poll), the p50 of each run's first
    poll (the daemon at rest before it: 3 s after camd's start, or the idle wait after the
    period before), frame age p50, the parts of the answer time, CPU per request and idle CPU."""
    def pooled(key):
        return [value for run in runs for value in run[key]]
    times, sizes, header_counts = pooled("answer_ms"), pooled("sizes"), pooled("header_counts")
    settled = [t for r in runs for t in r["answer_ms"][SETTLING_POLLS:]]
    cpu, wall = sum(r["cpu_s"] for r in runs), sum(r["wall_s"] for r in runs)
    idle_cpu, idle_wall = sum(r["idle_cpu_s"] for r in runs), sum(r["idle_wall_s"] for r in runs)
    return {"period": period, "n": len(times), "errors": sum(r["errors"] for r in runs), "p50": bench.percentile(times, 50),
            "p50_settled": bench.percentile(settled, 50), "p99": bench.percentile(times, 99),
            "p99_settled": bench.percentile(settled, 99),
            "first_p50": bench.percentile([r["answer_ms"][0] for r in runs if r["answer_ms"]], 50),
            "age_p50": bench.percentile(pooled("age_ms"), 50),
            "cpu_per_request_ms": cpu / max(len(times), 1) * 1000, "cpu_pct": cpu / wall * 100 if wall else 0,
            "idle_cpu_pct": idle_cpu / idle_wall * 100 if idle_wall else 0, "answer_ms": times,
            "connect_p50": bench.percentile(pooled("connect_ms"), 50), "head_p50": bench.percentile(pooled("head_ms"), 50),
            "body_kib": statistics.mean(sizes) / 1024 if sizes else 0,
            "headers": statistics.mean(header_counts) if header_counts else 0,
            "round_p50": [bench.percentile(r["answer_ms"], 50) for r in runs]}


def camd_age(headers):
    capture = next((v for k, v in headers.items() if k.lower() == "x-capture-time"), None)
    return (time.time() - float(capture)) * 1000 if capture else None


def ustreamer_age(headers):
    """How old µStreamer's frame is as its answer arrives, ms: from its X-UStreamer-Grab-Timestamp,
    which µStreamer (get_now_monotonic in src/libs/tools.h) reads from CLOCK_MONOTONIC_RAW, not
    CLOCK_MONOTONIC. The two differ by a constant of each boot: read against time.monotonic(),
    µStreamer's frames seemed 630-690 ms old in most boots of the emulated VM and 100 ms in one.
    The grab time is when µStreamer dequeued the frame, not the driver's capture time that camd's
    X-Capture-Time gives, so a frame that waited in the driver's queue is older than this says."""
    grab = next((v for k, v in headers.items() if k.lower() == "x-ustreamer-grab-timestamp"), None)
    return (time.clock_gettime(time.CLOCK_MONOTONIC_RAW) - float(grab)) * 1000 if grab else None


def vm_hwm_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM"))


def memory(pid):
    """Where a daemon's resident memory is (issue 16): VmHWM and the anonymous and file
    parts of /proc/PID/status, and the mappings holding the most, from /proc/PID/smaps."""
    with open(f"/proc/{pid}/status") as f:
        status = {k: int(v.split()[0]) for k, v in (line.split(":", 1) for line in f)
                  if k in ("VmHWM", "VmRSS", "RssAnon", "RssFile", "Threads")}
    by_name, regions = {}, []
    executable = os.path.realpath(f"/proc/{pid}/exe")
    status["executable"] = {}  # the program's own file, by the mapping's permissions
    for mapping in camdclient.smaps(pid):
        name, rss = mapping["name"], mapping["rss_kib"]
        by_name[name] = by_name.get(name, 0) + rss
        if name == executable:
            status["executable"][mapping["perms"]] = status["executable"].get(mapping["perms"], 0) + rss
        status["huge_kib"] = status.get("huge_kib", 0) + mapping["huge_kib"]
        regions.append(mapping)
    # The driver's buffers: kernel 6.1's VmRSS counts a process's mapping of them in some runs
    # and not in others (µStreamer's 1.8 MiB; camd's 2.4 MiB never), smaps always does. The
    # daemons compared without them, both from smaps, is the comparison that does not depend on it.
    status["without_devices_kib"], status["devices_kib"] = camdclient.without_devices(regions)
    libraries = [n for n in by_name if ".so" in n]
    status["libraries"] = len(libraries)
    status["libraries_kib"] = sum(by_name[n] for n in libraries)
    status["top"] = sorted(by_name.items(), key=lambda item: -item[1])[:8]
    # Anonymous memory region by region (frame buffers, the heap, arenas, stacks, relocated data).
    status["anon_top"] = [(r["anon_kib"], r["size_kib"], os.path.basename(r["name"]))
                          for r in sorted(regions, key=lambda r: -r["anon_kib"])[:10] if r["anon_kib"]]
    return status


def poll_phase(args):
    """camd as it ships against µStreamer, each polled every 0.5 s and every 2 s; with
    --poll-rounds R, camd then µStreamer R times over, each started afresh, and the figures of
    all rounds' requests together. camd's status.snapshots counters are those of each period
    alone, summed over the rounds. With --camd-before, that build of camd is polled the same
    way in each round too, next to camd (before it in odd rounds, after it in even ones, so the
    VM's drift over a round falls on both alike): the two builds compared in one VM run."""
    builds = [("camd", args.camd)] + ([("before", args.camd_before)] if args.camd_before else [])
    others = ["ustreamer"] + (["floor"] if args.floor else [])
    runs = {who: {period: [] for period, _ in POLL_PERIODS} for who in [name for name, _ in builds] + others}
    statuses = {who: {period: [] for period, _ in POLL_PERIODS} for who, _ in builds}
    out = {who: {} for who in runs}
    out["rounds"] = args.poll_rounds
    for round_index in range(args.poll_rounds):
        for who, binary in (builds if round_index % 2 else builds[::-1]):
            poll_camd(args, who, binary, round_index, runs[who], statuses[who], out[who])
        if args.floor:
            poll_floor(args, round_index, runs["floor"])

        def polled(proc, _):
            for period, count in POLL_PERIODS:
                result = poll_client(USTREAMER, "/snapshot", period, count * args.poll_scale, proc.pid, ustreamer_age, args.idle)
                runs["ustreamer"][period] += result["runs"]
                log(f"ustreamer polled every {period} s (round {round_index + 1}): p50 {result['p50']:.1f} ms")
            out["ustreamer"]["hwm_kib"] = max(out["ustreamer"].get("hwm_kib", 0), vm_hwm_kib(proc.pid))
            out["ustreamer"]["memory"] = memory(proc.pid)

        ustreamer_phase(args, then=polled, log_name=f"ustreamer-poll{round_index}.log")
    for who in runs:
        for period, _ in POLL_PERIODS:
            out[who][period] = poll_figures(period, runs[who][period])
            out[who][period]["runs"] = runs[who][period]
    for who, _ in builds:
        for period, _ in POLL_PERIODS:
            last = statuses[who][period][-1]
            out[who][period]["status"] = dict(last, **{k: sum(s.get(k, 0) for s in statuses[who][period]) for k in SNAPSHOT_COUNTERS})
            # How long before each request its JPEG was started (status.snapshots.lead_milliseconds
            # at each round's end), the mean of the rounds': with the answer time, what of the
            # frame's age camd chose; the rest is the frame's wait for that start.
            leads = [s["lead_milliseconds"] for s in statuses[who][period] if s.get("lead_milliseconds") is not None]
            if leads:
                out[who][period]["lead_ms"] = statistics.mean(leads)
    return out


def poll_camd(args, who, binary, round_index, runs, statuses, out):
    """One round of polls of a camd build (`who`: "camd" or "before"), started afresh."""
    camd = vivid_camd(args, f"poll-{who}{round_index}", binary=binary)
    reset_fps()
    camd.start(timeout=120)
    try:
        time.sleep(3)
        before = {}
        for period, count in POLL_PERIODS:
            result = poll_client(camd.sock, "/v1/cameras/vivid/snapshot", period, count * args.poll_scale, camd.pid, camd_age,
                                 args.idle)
            runs[period] += result["runs"]
            cam = camera_status(camd.sock, "vivid")
            snapshots = cam.get("snapshots") or {}
            # This period's own counts; the mean encode time is, with the answer time, the floor of a frame's age.
            status = dict(snapshots, **{k: snapshots.get(k, 0) - before.get(k, 0) for k in SNAPSHOT_COUNTERS},
                          encode_ms=cam.get("encode_milliseconds"), frames_copied=cam.get("frames_copied"))
            before = snapshots
            statuses[period].append(status)
            log(f"{who} polled every {period} s (round {round_index + 1}): p50 {result['p50']:.1f} ms, {status}")
        out["hwm_kib"] = max(out.get("hwm_kib", 0), vm_hwm_kib(camd.pid))
        out["memory"] = memory(camd.pid)
        if args.floor and not os.path.exists(FLOOR_JPEG):  # the JPEG --floor's server answers with: one of camd's
            code, _, body = call(camd.sock, "GET", "/v1/cameras/vivid/snapshot", timeout=30)
            if code == 200:
                with open(FLOOR_JPEG, "wb") as f:
                    f.write(body)
    finally:
        camd.stop()


FLOOR_JPEG = f"{WORK}/floor.jpg"


def poll_floor(args, round_index, runs):
    """One round of polls of --floor's server (scripts/bench/poll-floor.c), which does the least
    a server can do for a poll, while vivid captures at 25 fps for nobody, as it does under
    either daemon: what is left of its answer time is the VM's."""
    width, height = SIZE.split("x")
    capture = subprocess.Popen(["v4l2-ctl", "-d", DEV, f"--set-fmt-video=width={width},height={height},pixelformat={FORMAT}",
                                f"--set-parm={FPS}", "--stream-mmap=3"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sock = f"{WORK}/floor.sock"
    server = subprocess.Popen([args.floor, sock, FLOOR_JPEG], stdin=subprocess.DEVNULL)
    try:
        time.sleep(3)
        for period, count in POLL_PERIODS:
            result = poll_client(sock, "/snapshot", period, count * args.poll_scale, server.pid, camd_age, args.idle)
            runs[period] += result["runs"]
            log(f"floor polled every {period} s (round {round_index + 1}): p50 {result['p50']:.1f} ms")
    finally:
        for proc in (server, capture):
            proc.kill()
            proc.wait(10)


FAULT_AROUND = "/sys/kernel/debug/fault_around_bytes"


def resident_pages(pid, binary):
    """The pages of `binary` that process `pid` has resident, mapping by mapping: each
    mapping's permissions, its offset in the file and the resident page numbers in it
    (from /proc/PID/pagemap, bit 63: present)."""
    mappings = []
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/pagemap", "rb") as pagemap:
        for line in maps:
            fields = line.split()
            if len(fields) < 6 or os.path.realpath(fields[5]) != os.path.realpath(binary):
                continue
            start, end = (int(x, 16) for x in fields[0].split("-"))
            pagemap.seek(start // 4096 * 8)
            entries = pagemap.read((end - start) // 4096 * 8)
            pages = [i for i in range((end - start) // 4096)
                     if int.from_bytes(entries[i * 8:i * 8 + 8], "little") >> 63]
            mappings.append({"perms": fields[1], "offset": int(fields[2], 16), "pages": pages})
    return mappings


def pages_phase(args):
    """Which of camd's pages its work touches, page by page: the floor of its resident code
    that the link order of its hot functions (scripts/bench/hot-functions.py) comes near. The
    kernel maps 16 pages around each page fault in a file (fault-around); set to one, every
    resident page is one camd touched.
    The work: start, status and metrics, steady polls every 0.5 s and 2 s, other
    snapshots and an MJPEG stream, on vivid as in --poll-only."""
    if not os.path.exists(FAULT_AROUND):
        run(["mount", "-t", "debugfs", "none", "/sys/kernel/debug"])
    with open(FAULT_AROUND) as f:
        fault_around = f.read().strip()
    with open(FAULT_AROUND, "w") as f:
        f.write("4096")
    camd = vivid_camd(args, "pages")
    reset_fps()
    try:
        camd.start(timeout=120)
        try:
            time.sleep(3)
            path = "/v1/cameras/vivid/snapshot"
            for period, count in ((0.5, 12), (2.0, 8)):
                poll_client(camd.sock, path, period, count, camd.pid, camd_age, 1)
            for target in ("/v1/status", "/metrics", "/v1/cameras", f"{path}?max_age_ms=0"):
                code, _, _ = call(camd.sock, "GET", target, timeout=30)
                log(f"pages: GET {target}: {code}")
            _, _, parts = camdclient.read_stream(camd.sock, "/v1/cameras/vivid/stream", seconds=4)
            log(f"pages: stream: {len(parts)} parts")
            return {"fault_around_bytes": fault_around, "mappings": resident_pages(camd.pid, args.camd)}
        finally:
            camd.stop()
    finally:
        with open(FAULT_AROUND, "w") as f:
            f.write(fault_around)


# ---------------------------------------------------------------- main

def busy_vcpus():
    """A shell loop at nice 19 pinned to each vCPU, for --busy-vcpus. In the emulated guest a
    vCPU with nothing to run halts, and waking it (an interrupt from the other vCPU, the way
    out of the guest kernel's idle loop, all emulated) adds milliseconds to an answer. A daemon
    that rests between polls (camd) pays that at each poll; one whose encoders keep both vCPUs
    busy (µStreamer, about 70% CPU) does not. With a spinner on each, neither vCPU halts and
    both daemons are measured on awake vCPUs; at nice 19 a spinner gives way to either daemon
    and to the client (the scheduler's wake-up preemption), and the figures count each
    daemon's own CPU only (/proc/PID/stat). Not neutral to µStreamer either: polled every 2 s
    it answered slower with the spinners in one run of two (docs/performance.md)."""
    return [subprocess.Popen(["taskset", "-c", str(cpu), "nice", "-n", "19", "sh", "-c", "while :; do :; done"])
            for cpu in sorted(os.sched_getaffinity(0))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--camd", required=True)
    ap.add_argument("--camctl", required=True)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--snapshots", type=int, default=100)
    ap.add_argument("--window", type=float, default=20)
    ap.add_argument("--idle", type=float, default=10)
    ap.add_argument("--cold-only", action="store_true", help="only camctl vs fswebcam")
    ap.add_argument("--record-only", action="store_true", help="only camd's recording vs ffmpeg -f v4l2 with libx264")
    ap.add_argument("--live-only", action="store_true", help="only camd's live H.264 vs ffmpeg -f mpegts and µStreamer's MJPEG")
    ap.add_argument("--poll-only", action="store_true", help="only camd vs µStreamer polled every 0.5 s and every 2 s")
    ap.add_argument("--poll-scale", type=int, default=1,
                    help="polls that many times as many requests (40 every 0.5 s and 15 every 2 s at 1)")
    ap.add_argument("--poll-rounds", type=int, default=1,
                    help="polls camd then µStreamer that many times over, each started afresh")
    ap.add_argument("--camd-before", default=None,
                    help="with --poll-only: another camd build polled in each round too, compared with --camd's")
    ap.add_argument("--floor", default=None,
                    help="with --poll-only: this build of poll-floor.c polled in each round too (poll_floor)")
    ap.add_argument("--pages-only", action="store_true", help="only the pages of camd's binary its work touches")
    ap.add_argument("--busy-vcpus", action="store_true",
                    help="a spinner at nice 19 on each vCPU throughout, so that no vCPU halts (busy_vcpus)")
    args = ap.parse_args()
    os.makedirs(WORK, exist_ok=True)
    os.chdir(WORK)
    res = {"guest": f"{os.cpu_count()} vCPU(s), kernel {os.uname().release}, QEMU TCG (emulated)",
           "ustreamer": run(["ustreamer", "--version"]).stdout.strip(),
           "fswebcam": (run(["fswebcam", "--version"]).stdout or run(["fswebcam", "--version"]).stderr).splitlines()[0]}
    spinners = busy_vcpus() if args.busy_vcpus else []
    if spinners:
        res["guest"] += f"; a spinner at nice 19 on each of the {len(spinners)} vCPUs (--busy-vcpus)"
    try:
        if not load_vivid():
            raise RuntimeError("vivid did not create /dev/video0")
        log(f"vivid loaded; {res['guest']}")
        for b in filter(None, (args.camd, args.camctl, args.camd_before)):  # the first start of a Swift binary loads its runtime over 9p: do it untimed
            run([b, "--help"], timeout=120)
        if args.record_only:
            res["record"] = record_phase(args)
        elif args.live_only:
            res["live"] = live_phase(args)
        elif args.poll_only:
            res["poll"] = poll_phase(args)
        elif args.pages_only:
            res["pages"] = pages_phase(args)
        else:
            if not args.cold_only:
                res["camd"] = camd_phase(args)
                res["camd_every"] = camd_phase(args, every_frame=True)
                res["ustreamer_run"] = ustreamer_phase(args)
            res["cold"] = cold_phase(args)
        res["load_end"] = camdclient.loadavg()
    except Exception as e:  # noqa: BLE001 - the host must hear about any failure through the share
        import traceback
        res["error"] = traceback.format_exc()
        log(f"FAILED: {e}")
    for spinner in spinners:
        spinner.kill()
    with open(os.path.join(args.out, "vm-compare.json"), "w") as f:
        json.dump(res, f, indent=1, default=str)
    with open(os.path.join(args.out, "vm-compare.txt"), "w") as f:
        f.write(report(res))
    os.sync()
    return 0


def report(res):
    lines = [f"== camd vs µStreamer / camctl vs fswebcam on vivid ({SIZE} {FORMAT}, {FPS} fps, quality {QUALITY})",
             f"guest: {res['guest']}; µStreamer {res.get('ustreamer')}; {res.get('fswebcam')}"]
    if "error" in res:
        lines += ["ERROR:", res["error"]]
    c, u = res.get("camd"), res.get("ustreamer_run")
    if c and u and "stream" in c and "stream" in u:
        cs, us = c["snap"], u["snap"]
        ccpu, ucpu = c["stream"]["cpu_per_encoded_ms"] / 10, u["stream"]["cpu_per_encoded_ms"] / 10
        lines += [
            "",
            f"frame rate: camd configured {c['status']['configured_fps']}, measured {c['status']['measured_fps']:.1f} "
            f"(during the stream {c['stream']['captured_fps']:.1f} captured/s, {c['stream']['encoded_fps']:.1f} encoded/s); "
            f"µStreamer captured_fps {u['state']['source']['captured_fps']} ({u['stream']['captured_fps_state']:.1f} mean over the window, "
            f"{u['stream']['delivered'] / u['stream']['wall']:.1f} frames/s on /stream); vivid's S_PARM rate: camd {c['device_fps']}, µStreamer {u['device_fps']}",
            "",
            f"{'figure':<44} {'camd':>10} {'µStreamer':>10} {'camd/µS':>8}",
            "snapshots: sequential, one connection each; spaced = 0.1 s apart (camd must encode a fresh frame each time)",
            f"{'snapshot latency p50, spaced, ms':<44} {cs['p50']:>10.1f} {us['p50']:>10.1f} {cs['p50'] / us['p50']:>8.2f}",
            f"{'snapshot latency p99, spaced, ms':<44} {cs['p99']:>10.1f} {us['p99']:>10.1f} {cs['p99'] / us['p99']:>8.2f}",
            f"{'snapshot latency p50, back to back, ms':<44} {c['snap_b2b']['p50']:>10.1f} {u['snap_b2b']['p50']:>10.1f} "
            f"{c['snap_b2b']['p50'] / u['snap_b2b']['p50']:>8.2f}",
            f"{'snapshot latency p99, back to back, ms':<44} {c['snap_b2b']['p99']:>10.1f} {u['snap_b2b']['p99']:>10.1f} "
            f"{c['snap_b2b']['p99'] / u['snap_b2b']['p99']:>8.2f}",
            f"{'frame age at answer p50, spaced, ms':<44} {cs['age_p50']:>10.1f} {us['age_p50']:>10.1f} "
            f"{cs['age_p50'] / us['age_p50']:>8.2f}",
            f"{'frame age at answer p50, back to back, ms':<44} {c['snap_b2b']['age_p50']:>10.1f} {u['snap_b2b']['age_p50']:>10.1f} "
            f"{c['snap_b2b']['age_p50'] / u['snap_b2b']['age_p50']:>8.2f}",
            f"{'snapshots answered / errors (spaced)':<44} {cs['n']:>6}/{cs['errors']:<3} {us['n']:>6}/{us['errors']:<3}",
            f"{'CPU s per 100 frames captured+encoded':<44} {ccpu:>10.3f} {ucpu:>10.3f} {ccpu / ucpu:>8.2f}",
            f"{'  (frames counted in the window)':<44} {c['stream']['encoded']:>10} {u['stream']['encoded']:>10}",
            f"{'CPU % of a core, running, no client':<44} {c['idle']['cpu_pct']:>10.1f} {u['idle']['cpu_pct']:>10.1f} "
            f"{c['idle']['cpu_pct'] / u['idle']['cpu_pct'] if u['idle']['cpu_pct'] else float('nan'):>8.2f}",
        ]
    e = res.get("camd_every")
    if e and u and "stream" in e and "stream" in u:
        es, us = e["snap"], u["snap"]
        ecpu, ucpu = e["stream"]["cpu_per_encoded_ms"] / 10, u["stream"]["cpu_per_encoded_ms"] / 10
        lines += [
            "",
            "like for like: camd with encode_every_frame = true (every frame encoded, as µStreamer does)",
            f"{'figure':<44} {'camd':>10} {'µStreamer':>10} {'camd/µS':>8}",
            f"{'snapshot latency p50, spaced, ms':<44} {es['p50']:>10.1f} {us['p50']:>10.1f} {es['p50'] / us['p50']:>8.2f}",
            f"{'snapshot latency p99, spaced, ms':<44} {es['p99']:>10.1f} {us['p99']:>10.1f} {es['p99'] / us['p99']:>8.2f}",
            f"{'snapshot latency p50, back to back, ms':<44} {e['snap_b2b']['p50']:>10.1f} {u['snap_b2b']['p50']:>10.1f} "
            f"{e['snap_b2b']['p50'] / u['snap_b2b']['p50']:>8.2f}",
            f"{'frame age at answer p50, spaced, ms':<44} {es['age_p50']:>10.1f} {us['age_p50']:>10.1f} "
            f"{es['age_p50'] / us['age_p50']:>8.2f}",
            f"{'CPU s per 100 frames captured+encoded':<44} {ecpu:>10.3f} {ucpu:>10.3f} {ecpu / ucpu:>8.2f}",
            f"{'CPU % of a core, running, no client':<44} {e['idle']['cpu_pct']:>10.1f} {u['idle']['cpu_pct']:>10.1f} "
            f"{e['idle']['cpu_pct'] / u['idle']['cpu_pct'] if u['idle']['cpu_pct'] else float('nan'):>8.2f}",
            f"{'frames encoded while idle (no client)':<44} {e['idle']['encoded']:>10}",
        ]
    rec = res.get("record")
    if rec:
        c, f = rec["camd"], rec["ffmpeg"]
        lines += [
            "",
            "recording H.264 (libx264 veryfast, zerolatency, crf 23, keyframe every 2 s) from vivid",
            f"{'':<36} {'camd':>10} {'ffmpeg':>10} {'camd/ffmpeg':>11}",
            f"{'CPU ms per frame written':<36} {c['cpu_per_frame_ms']:>10.1f} {f['cpu_per_frame_ms']:>10.1f} "
            f"{c['cpu_per_frame_ms'] / f['cpu_per_frame_ms']:>11.2f}",
            f"{'frames in the window':<36} {c['frames']:>10} {f['frames']:>10}",
        ]
    live = res.get("live")
    if live:
        c, f, u = live["camd"], live["ffmpeg"], live["ustreamer"]
        lines += [
            "",
            "live video from vivid: camd's H.264 over HTTP, ffmpeg's H.264 in MPEG-TS (libx264 veryfast, zerolatency, crf 23,"
            " keyframe every 2 s), µStreamer's MJPEG at quality 85",
            f"{'':<30} {'camd':>10} {'ffmpeg':>10} {'µStreamer':>10} {'camd/ffmpeg':>11} {'camd/µS':>8}",
            f"{'CPU ms per delivered frame':<30} {c['cpu_per_frame_ms']:>10.1f} {f['cpu_per_frame_ms']:>10.1f} "
            f"{u['cpu_per_frame_ms']:>10.1f} {c['cpu_per_frame_ms'] / f['cpu_per_frame_ms']:>11.2f} "
            f"{c['cpu_per_frame_ms'] / u['cpu_per_frame_ms']:>8.2f}",
            f"{'KB per second':<30} {c['bytes_per_second'] / 1000:>10.1f} {f['bytes_per_second'] / 1000:>10.1f} "
            f"{u['bytes_per_second'] / 1000:>10.1f} {c['bytes_per_second'] / f['bytes_per_second']:>11.2f} "
            f"{c['bytes_per_second'] / u['bytes_per_second']:>8.2f}",
            f"{'frames in the window':<30} {c['frames']:>10} {f['frames']:>10} {u['frames']:>10}",
            f"camd's capture-to-client latency p50: {c['latency_p50_ms']:.1f} ms" if c['latency_p50_ms'] else "",
        ]
    poll = res.get("poll")
    if poll:
        c, u = poll["camd"], poll["ustreamer"]
        lines += ["", "a client polling /snapshot on a fixed schedule (camd as shipped; µStreamer encodes every frame)",
                  f"{'':<50} {'camd':>10} {'µStreamer':>10} {'camd/µS':>8}"]
        for period, _ in POLL_PERIODS:
            a, b = c.get(period), u.get(period)
            if not a or not b:
                continue
            for label, key in (("answer time p50, ms", "p50"), ("answer time p50 from the 6th poll, ms", "p50_settled"),
                               ("answer time p99, ms", "p99"), ("answer time p99 from the 6th poll, ms", "p99_settled"),
                               ("first poll, after a rest, p50, ms", "first_p50"),
                               ("frame age at answer p50, ms", "age_p50"),
                               ("  of it connecting p50, ms", "connect_p50"),
                               ("  of it until the headers are read p50, ms", "head_p50"),
                               ("  JPEG size, KiB", "body_kib"), ("  header lines", "headers"),
                               ("CPU ms per request", "cpu_per_request_ms"), ("CPU % idle after the client stops", "idle_cpu_pct")):
                if key not in a or key not in b:
                    continue
                ratio = a[key] / b[key] if b[key] else float("nan")
                lines.append(f"{f'every {period:g} s: ' + label:<50} {a[key]:>10.1f} {b[key]:>10.1f} {ratio:>8.2f}")
            if "lead_ms" in a:
                # camd's frame age, split: the answer, the lead its JPEG was started before the
                # request was due, and the rest: the frame's wait for that start (up to a frame
                # interval, as the camera's frames and the client's requests fall) and how late
                # the request came.
                rest = a["age_p50"] - a["p50"] - a["lead_ms"]
                lines.append(f"{f'every {period:g} s: ' + '  camd: of the age, the lead (status), ms':<50} {a['lead_ms']:>10.1f}")
                lines.append(f"{f'every {period:g} s: ' + '  camd: of the age, the rest, ms':<50} {rest:>10.1f}")
            lines.append(f"{f'every {period:g} s: answered / errors':<50} {a['n']:>6}/{a['errors']:<3} {b['n']:>6}/{b['errors']:<3}")
            if len(a.get("round_p50", [])) > 1:
                lines.append(f"{f'every {period:g} s: answer time p50 by round, camd/µS':<50} "
                             + " ".join(f"{x / y:.2f}" for x, y in zip(a["round_p50"], b["round_p50"])))
            lines.append(f"  camd status.snapshots in it: {a.get('status')}")
        least = poll.get("floor")
        if least and all(period in least for period, _ in POLL_PERIODS):
            lines += ["", "against the least a server can do here (--floor: poll-floor.c, vivid capturing for nobody), same rounds",
                      f"{'':<50} {'camd':>10} {'µStreamer':>10} {'floor':>8}"]
            for period, _ in POLL_PERIODS:
                a, b, f = c[period], u[period], least[period]
                for label, key in (("answer time p50, ms", "p50"), ("answer time p50 from the 6th poll, ms", "p50_settled"),
                                   ("  of it until the headers are read p50, ms", "head_p50")):
                    lines.append(f"{f'every {period:g} s: ' + label:<50} {a[key]:>10.1f} {b[key]:>10.1f} {f[key]:>8.1f}")
                lines.append(f"{f'every {period:g} s: answer time p50 / floor':<50} {a['p50'] / f['p50']:>10.2f} "
                             f"{b['p50'] / f['p50']:>10.2f}")
                lines.append(f"{f'every {period:g} s: answer time p50 by round, floor, ms':<50} "
                             + " ".join(f"{x:.1f}" for x in f["round_p50"]))
        old = poll.get("before")
        if old and all(period in old for period, _ in POLL_PERIODS):
            lines += ["", "camd against the build before it (--camd-before), polled in the same rounds",
                      f"{'':<50} {'camd':>10} {'before':>10} {'ratio':>8}"]
            for period, _ in POLL_PERIODS:
                a, b = c[period], old[period]
                for label, key in (("answer time p50, ms", "p50"), ("answer time p50 from the 6th poll, ms", "p50_settled"),
                                   ("answer time p99, ms", "p99"), ("answer time p99 from the 6th poll, ms", "p99_settled"),
                                   ("first poll, after a rest, p50, ms", "first_p50"),
                                   ("frame age at answer p50, ms", "age_p50"), ("CPU ms per request", "cpu_per_request_ms"),
                                   ("CPU % idle after the client stops", "idle_cpu_pct")):
                    if key not in a or key not in b:
                        continue
                    ratio = a[key] / b[key] if b[key] else float("nan")
                    lines.append(f"{f'every {period:g} s: ' + label:<50} {a[key]:>10.1f} {b[key]:>10.1f} {ratio:>8.2f}")
                lines.append(f"{f'every {period:g} s: answer time p50 by round, camd/before':<50} "
                             + " ".join(f"{x / y:.2f}" for x, y in zip(a["round_p50"], b["round_p50"])))
                lines.append(f"{f'every {period:g} s: answer time p50 by round, before/µS':<50} "
                             + " ".join(f"{x / y:.2f}" for x, y in zip(b["round_p50"], u[period]["round_p50"])))
                lines.append(f"  before's status.snapshots in it: {b.get('status')}")
            if "hwm_kib" in old:
                lines.append(f"{'peak RSS (VmHWM), MiB':<50} {c['hwm_kib'] / 1024:>10.1f} {old['hwm_kib'] / 1024:>10.1f}")
        if "hwm_kib" in c and "hwm_kib" in u:
            lines.append(f"{'peak RSS (VmHWM), MiB':<40} {c['hwm_kib'] / 1024:>10.1f} {u['hwm_kib'] / 1024:>10.1f} "
                         f"{c['hwm_kib'] / u['hwm_kib']:>8.2f}")
        if "memory" in c and "memory" in u:
            a, b = c["memory"], u["memory"]
            a.setdefault("huge_kib", 0)
            b.setdefault("huge_kib", 0)
            for label, key in (("RSS at the end, MiB", "VmRSS"), ("  anonymous, MiB", "RssAnon"),
                               ("    of it in 2 MiB pages (THP), MiB", "huge_kib"), ("  files mapped, MiB", "RssFile"),
                               ("  of it shared libraries, MiB", "libraries_kib"),
                               ("RSS (smaps) without driver buffers, MiB", "without_devices_kib"),
                               ("  driver buffers mapped (smaps), MiB", "devices_kib")):
                lines.append(f"{label:<40} {a[key] / 1024:>10.1f} {b[key] / 1024:>10.1f} {a[key] / max(b[key], 1):>8.2f}")
            lines.append(f"{'shared libraries mapped':<40} {a['libraries']:>10} {b['libraries']:>10}")
            lines.append(f"{'threads':<40} {a.get('Threads', 0):>10} {b.get('Threads', 0):>10}")
            for who, m in (("camd", a), ("µStreamer", b)):
                lines.append(f"  {who}'s largest mappings (KiB): " + ", ".join(f"{os.path.basename(n)} {k}" for n, k in m["top"]))
            for who, m in (("camd", a), ("µStreamer", b)):
                lines.append(f"  {who}'s own binary by mapping (KiB): "
                             + ", ".join(f"{perms} {kib}" for perms, kib in m.get("executable", {}).items()))
            for who, m in (("camd", a), ("µStreamer", b)):
                lines.append(f"  {who}'s largest anonymous regions (KiB resident/mapped): "
                             + ", ".join(f"{anon}/{kib}" + (f" {name}" if name != "[anonymous]" else "") for anon, kib, name in m.get("anon_top", [])))
    cold = res.get("cold")
    if cold:
        a, b = cold["camctl"], cold["fswebcam"]
        lines += [
            "",
            f"cold one-shot snapshot (open, set format and fps, skip {SKIP}, capture, encode, write), {len(a['times'])}+{len(b['times'])} runs",
            f"{'':<30} {'camctl':>10} {'fswebcam':>10} {'camctl/fsw':>10}",
            f"{'wall ms, median':<30} {a['median']:>10.0f} {b['median']:>10.0f} {a['median'] / b['median']:>10.2f}",
            f"{'wall ms, min':<30} {a['min']:>10.0f} {b['min']:>10.0f} {a['min'] / b['min']:>10.2f}",
            f"{'wall ms, max':<30} {a['max']:>10.0f} {b['max']:>10.0f}",
            f"{'process start alone, ms, median':<30} {a['start_median']:>10.0f} {b['start_median']:>10.0f} "
            f"{a['start_median'] / b['start_median']:>10.2f}   ({a['start_command'].split('/')[-1]} | {b['start_command']})",
            f"{'failures':<30} {a['fails']:>10} {b['fails']:>10}",
            f"{'fps vivid was left at':<30} {str(sorted(set(a['fps_set']))):>10} {str(sorted(set(b['fps_set']))):>10}",
            f"{'output':<30} {a['output']:>10} | {b['output']}",
        ]
    pages = res.get("pages")
    if pages:
        lines += ["", "pages of camd's binary its work touched (fault-around one page; mappings in vm-compare.json)"]
        lines += [f"  {m['perms']} at file offset {m['offset']:#x}: {len(m['pages'])} pages, "
                  f"{len(m['pages']) * 4 / 1024:.2f} MiB" for m in pages["mappings"]]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
