#!/usr/bin/env python3
"""Soak test of camd with its synthetic source: clients come and go for a long time.

Starts its own camd (synthetic source, 1280x720 at 30 fps, a timelapse photo
every 5 s, keep_count 20 so the disk stays bounded; or a V4L2 camera, --device,
as scripts/stress/vivid-soak runs it on vivid in a VM) and for --seconds
(default 600) keeps it busy:

  streams     up to --streams clients at once, each opened at random, read for
              1-20 s (some thinned with ?fps=), then closed (some mid-frame)
  snapshots   GET .../snapshot every ~0.5 s (some with max_age_ms=0)
  poller      GET .../snapshot on a fixed schedule (--poll-period, default 0.5 s), as
              Home Assistant or a timelapse does: the JPEGs camd makes ahead of such
              a client; the age of each frame at its answer is kept
  saves       POST .../snapshot every ~2 s (photos kept: keep_count)
  reads       status, camera detail, /metrics, /v1/photos every ~1 s
  configure   every --configure-every seconds, in turn: quality (new encoders), fps
              (a device restart) and keep_age (no restart)

Every 10 s it samples camd's RSS, threads and open fds (/proc) and the camera's
counters, and its RSS without mappings of device files ("own", from smaps: a
V4L2 driver's buffers, which kernel 6.1 counts in VmRSS in some runs and not in
others). After a warm-up (--warmup, default 60 s) and again at the end the
clients pause until camd has no stream client, and the "at rest" figures are
taken; the verdict is "flat" when the end figures are within a small bound of
the warm-up ones (own RSS +8 MiB or +10%, fds +2, threads +2).

Prints the samples, start/end/max figures, and "N passed, N failed".

    scripts/stress/soak.py                      # 600 s
    scripts/stress/soak.py --seconds 120 --camd .build/debug/camd
"""
import argparse
import json
import os
import random
import re
import shutil
import subprocess
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from camdclient import (Camd, MultipartStream, Suite, call, camera_status, default_camd, describe_binary,  # noqa: E402
                        loadavg, mib, proc_stats, resident_without_devices, stream_request, table)


class Activity:
    """The clients, each a thread; all bounded by `deadline` and pausable."""

    def __init__(self, camd, args, rng):
        self.camd = camd
        self.args = args
        self.rng = rng
        self.deadline = time.monotonic() + args.seconds
        self.paused = threading.Event()
        self.lock = threading.Lock()
        self.counts = {}   # kind -> {"ok": n, "bad": {code: n}, "errors": {text: n}}
        self.streams_opened = 0
        self.stream_frames = 0
        self.sequence_resets = 0
        self.duplicates = 0
        self.live_streams = 0
        self.threads = []
        self.events = []          # (t, kind, code or error, seconds since the last configure) of failures
        self.t0 = time.monotonic()
        self.last_configure_at = None
        self.poll_ages = []       # seconds from a polled frame's capture to its answer

    @property
    def last_configure(self):
        return None if self.last_configure_at is None else round(time.monotonic() - self.last_configure_at, 2)

    def running(self):
        return time.monotonic() < self.deadline

    def wait_unpaused(self):
        while self.paused.is_set() and self.running():
            time.sleep(0.2)

    def tally(self, kind, code=None, error=None, ok_codes=(200,)):
        with self.lock:
            if (error or code not in ok_codes) and len(self.events) < 50:
                self.events.append((time.monotonic() - self.t0, kind, error or code, self.last_configure))
            k = self.counts.setdefault(kind, {"ok": 0, "bad": {}, "errors": {}})
            if error:
                k["errors"][error[:100]] = k["errors"].get(error[:100], 0) + 1
            elif code in ok_codes:
                k["ok"] += 1
            else:
                k["bad"][code] = k["bad"].get(code, 0) + 1

    def request(self, kind, method, path, body=None, ok_codes=(200,)):
        try:
            code, _, data = call(self.camd.sock, method, path, body=body, timeout=30)
            self.tally(kind, code, ok_codes=ok_codes)
            return code, data
        except Exception as e:  # noqa: BLE001 - counted
            self.tally(kind, error=type(e).__name__ + (f": {e}" if str(e) else ""))
            return None, None

    def sleep(self, seconds):
        end = min(time.monotonic() + seconds, self.deadline)
        while time.monotonic() < end:
            time.sleep(min(0.2, max(0, end - time.monotonic())))

    # --- the clients
    def stream_slot(self, slot):
        r = random.Random(self.rng.random())
        while self.running():
            self.wait_unpaused()
            if not self.running():
                return
            self.sleep(r.uniform(0, self.args.stream_gap))
            if self.paused.is_set() or not self.running():
                continue
            fps = r.choice([None, None, None, 5, 10])
            hold = r.uniform(1, 20)
            mid_frame = r.random() < 0.3
            p = MultipartStream()
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.settimeout(10)
                s.connect(self.camd.sock)
                s.sendall(stream_request(self.camd.camera, fps))
                with self.lock:
                    self.streams_opened += 1
                    self.live_streams += 1
                end = time.monotonic() + hold
                while time.monotonic() < min(end, self.deadline) and not self.paused.is_set():
                    data = s.recv(65536)
                    if not data:
                        break
                    p.feed(data)
                    if p.bad:
                        break
                if mid_frame:  # hang up inside a frame
                    t = time.monotonic() + 2
                    while not p.in_frame and time.monotonic() < t:
                        data = s.recv(4096)
                        if not data:
                            break
                        p.feed(data)
                ok = p.http_status == 200 and not p.bad and p.frames > 0
                self.tally("stream", 200 if ok else (p.http_status or -1),
                           error=None if ok else f"status {p.http_status}, bad {p.bad}, frames {p.frames}")
            except Exception as e:  # noqa: BLE001
                self.tally("stream", error=type(e).__name__ + (f": {e}" if str(e) else ""))
            finally:
                s.close()
                with self.lock:
                    self.live_streams -= 1
                    self.stream_frames += p.frames
                    self.sequence_resets += p.sequence_resets
                    self.duplicates += p.duplicates

    def snapshots(self):
        r = random.Random(self.rng.random())
        cam = self.camd.camera
        while self.running():
            self.wait_unpaused()
            q = "?max_age_ms=0" if r.random() < 0.3 else ""
            self.request("snapshot", "GET", f"/v1/cameras/{cam}/snapshot{q}")
            self.sleep(r.uniform(0.2, 0.8))

    def poller(self):
        """A client polling at a steady period: camd learns it and makes each JPEG just
        before the request (FrameHub's encode ahead), so this is the path it exercises.
        Keeps each answer's frame age (its arrival minus X-Capture-Time)."""
        cam = self.camd.camera
        period = self.args.poll_period
        due = time.monotonic()
        while self.running():
            self.wait_unpaused()
            due = max(due + period, time.monotonic())
            self.sleep(due - time.monotonic())
            if not self.running():
                return
            try:
                code, headers, _ = call(self.camd.sock, "GET", f"/v1/cameras/{cam}/snapshot", timeout=30)
                answered = time.time()
                self.tally("steady poll", code)
                if code == 200 and headers.get("X-Capture-Time"):
                    with self.lock:
                        self.poll_ages.append(answered - float(headers["X-Capture-Time"]))
            except Exception as e:  # noqa: BLE001 - counted
                self.tally("steady poll", error=type(e).__name__ + (f": {e}" if str(e) else ""))

    def saves(self):
        r = random.Random(self.rng.random())
        cam = self.camd.camera
        while self.running():
            self.wait_unpaused()
            self.request("photo save", "POST", f"/v1/cameras/{cam}/snapshot", ok_codes=(201,))
            self.sleep(r.uniform(1, 3))

    def reads(self):
        r = random.Random(self.rng.random())
        cam = self.camd.camera
        paths = ["/v1/status", f"/v1/cameras/{cam}", "/metrics", f"/v1/photos?camera={cam}&limit=50", "/v1/cameras"]
        while self.running():
            self.wait_unpaused()
            self.request("status/metrics/list", "GET", r.choice(paths))
            self.sleep(r.uniform(0.5, 1.5))

    def configure(self):
        if self.args.configure_every <= 0:
            return
        cam = self.camd.camera
        # In turn: new encoders (quality), a device restart (the frame rate, one frame a
        # second apart so the capture rate stays near --fps), and a change that restarts
        # nothing (retention). Requests that meet a restart wait for it: none may fail.
        fps = self.args.fps
        changes = [{"quality": 80}, {"fps": fps - 1}, {"photos": {"keep_age": "30d"}},
                   {"quality": 85}, {"fps": fps}, {"photos": {"keep_age": None}}]
        i = 0
        while self.running():
            self.sleep(self.args.configure_every)
            if not self.running():
                return
            self.wait_unpaused()
            self.last_configure_at = time.monotonic()
            self.request("configure", "POST", f"/v1/cameras/{cam}/configure", body=changes[i % len(changes)])
            i += 1

    def start(self):
        targets = [(self.stream_slot, (i,)) for i in range(self.args.streams)]
        targets += [(self.snapshots, ()), (self.saves, ()), (self.reads, ()), (self.configure, ())]
        if self.args.poll_period > 0:
            targets.append((self.poller, ()))
        for fn, a in targets:
            t = threading.Thread(target=fn, args=a, daemon=True)
            t.start()
            self.threads.append(t)

    def join(self):
        for t in self.threads:
            t.join(60)
        return sum(t.is_alive() for t in self.threads)


def at_rest(camd, activity, timeout=30):
    """Pauses the clients until camd has no stream client, then takes the figures."""
    activity.paused.set()
    deadline = time.time() + timeout
    stats = cam = None
    while time.time() < deadline:
        try:
            cam = camera_status(camd.sock, camd.camera)
        except Exception:  # noqa: BLE001
            cam = None
        with activity.lock:
            live = activity.live_streams
        if cam and cam["stream_clients"] == 0 and live == 0:
            time.sleep(2)  # let connections close and the encoder go idle
            stats = with_own_rss(proc_stats(camd.pid), camd.pid)
            break
        time.sleep(0.5)
    activity.paused.clear()
    return stats, cam


def with_own_rss(stats, pid):
    """`stats` (proc_stats) with `own_kib`, the resident memory without mappings of device
    files, and `devices_kib`, theirs (from smaps): VmRSS counts a driver's buffers in some runs
    and not in others, so a jump of it by their size says nothing of camd's own memory."""
    resident = resident_without_devices(pid) if stats else None
    if resident:
        stats = dict(stats, own_kib=resident[0], devices_kib=resident[1])
    return stats


def photo_folder_figures(photos, camera):
    folder = os.path.join(photos, camera)
    try:
        names = [n for n in os.listdir(folder) if n.endswith(".jpg")]
        total = sum(os.path.getsize(os.path.join(folder, n)) for n in names)
        temps = [n for n in os.listdir(folder) if n.startswith(".")]
    except OSError:
        return 0, 0, 0
    return len(names), total, len(temps)


def malloc_stats(camd):
    """glibc's own figures for camd's heap, by calling malloc_stats() in it with gdb (which
    pauses camd for a moment): {"arenas", "system", "in_use"} in bytes, or None."""
    if not shutil.which("gdb"):
        print("(--malloc-stats: gdb is not installed)", flush=True)
        return None
    start = os.path.getsize(camd.log_path)
    subprocess.run(["gdb", "-p", str(camd.pid), "-batch", "-ex", "call (void) malloc_stats()"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
    time.sleep(0.5)
    with open(camd.log_path, errors="replace") as f:
        f.seek(start)
        text = f.read()
    arenas = len(re.findall(r"^Arena \d+:", text, re.M))
    total = re.search(r"Total \(incl\. mmap\):\s*system bytes\s*=\s*(\d+)\s*in use bytes\s*=\s*(\d+)", text)
    if not total:
        return None
    return {"arenas": arenas, "system": int(total.group(1)), "in_use": int(total.group(2))}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--camd", default=default_camd())
    ap.add_argument("--seconds", type=float, default=600, help="length of the soak")
    ap.add_argument("--warmup", type=float, default=60, help="seconds before the start figures are taken")
    ap.add_argument("--device", default="testsrc", help="the camera: testsrc (synthetic) or a V4L2 device such as /dev/video0")
    ap.add_argument("--format", default=None, help="the camera's pixel format (a V4L2 device's, e.g. YUYV)")
    ap.add_argument("--size", default="1280x720")
    ap.add_argument("--fps", type=int, default=30)
    ap.add_argument("--streams", type=int, default=8, help="stream clients at most at once")
    ap.add_argument("--stream-gap", type=float, default=3,
                    help="a stream slot waits up to this many seconds before its next stream (longer: more time "
                         "with no stream, when camd makes the steady poller's JPEGs ahead of it)")
    ap.add_argument("--poll-period", type=float, default=0.5, help="the steady poller's period, seconds (0: none)")
    ap.add_argument("--keep-count", type=int, default=20)
    ap.add_argument("--interval", type=float, default=5, help="timelapse interval, seconds")
    ap.add_argument("--configure-every", type=float, default=60, help="seconds between configures (0: never)")
    ap.add_argument("--sample", type=float, default=10, help="seconds between samples")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--malloc-stats", action="store_true",
                    help="at the end, ask glibc (malloc_stats via gdb) how much heap it holds and how much is in use")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 32)
    rng = random.Random(seed)

    suite = Suite()
    extra = (f'format = "{args.format}"\n' if args.format else "") + \
        f"\n[camera.photos]\ninterval = {args.interval}\nkeep_count = {args.keep_count}\n"
    camd = Camd(binary=args.camd, workdir=args.workdir, size=args.size, fps=args.fps, extra_camera=extra,
                device=args.device, camera_id="synth" if args.device == "testsrc" else "cam")
    print(f"camd: {describe_binary(camd.binary)}; scratch {camd.workdir}; seed {seed}; {args.seconds:.0f} s soak; "
          f"load average {loadavg()}", flush=True)
    camd.start()
    t0 = time.monotonic()
    first_cam = camera_status(camd.sock, camd.camera)
    activity = Activity(camd, args, rng)
    activity.start()

    samples = []
    rest_start = rest_end = None
    print(f"{'t/s':>6} {'RSS':>10} {'own':>10} {'anon':>10} {'fds':>4} {'thr':>4} {'streams':>7} {'fps':>6} {'captured':>9} {'photos':>6} {'load':>15}", flush=True)
    next_sample = t0
    warm_done = False
    while activity.running() and camd.alive():
        now = time.monotonic()
        if not warm_done and now - t0 >= min(args.warmup, args.seconds / 2):
            rest_start = at_rest(camd, activity)
            warm_done = True
            print(f"  -- at rest after warm-up: {rest_start[0]}", flush=True)
            continue
        if now >= next_sample:
            stats = with_own_rss(proc_stats(camd.pid), camd.pid)
            try:
                cam = camera_status(camd.sock, camd.camera, timeout=10)
            except Exception:  # noqa: BLE001
                cam = None
            n, total, temps = photo_folder_figures(camd.photos, camd.camera)
            samples.append((now - t0, stats, cam, n, total, temps))
            if stats:
                print(f"{now - t0:6.0f} {mib(stats['rss_kib']):>10} {mib(stats.get('own_kib', 0)):>10} {mib(stats['anon_kib']):>10} {stats['fds']:4} {stats['threads']:4} "
                      f"{cam['stream_clients'] if cam else '?':>7} {cam['measured_fps'] if cam else '?':>6} "
                      f"{cam['frames_captured'] if cam else '?':>9} {n:>6} {loadavg():>15}", flush=True)
            next_sample += args.sample
        time.sleep(0.2)
    alive = camd.alive()
    hung = activity.join()
    if alive:
        rest_end = at_rest(camd, activity)
    last_cam = camera_status(camd.sock, camd.camera) if alive else None
    elapsed = time.monotonic() - t0
    n_photos, photo_bytes, temps = photo_folder_figures(camd.photos, camd.camera)
    end_stats = proc_stats(camd.pid) if alive else None
    heap = malloc_stats(camd) if alive and args.malloc_stats else None
    code, took = camd.stop()

    after_warm = [s for s in samples if s[0] >= min(args.warmup, args.seconds / 2) and s[1]]
    rss = [s[1]["rss_kib"] for s in after_warm]
    fds = [s[1]["fds"] for s in after_warm]
    thr = [s[1]["threads"] for s in after_warm]
    slope = 0.0
    if len(after_warm) >= 3:
        xs = [s[0] for s in after_warm]
        mx, my = sum(xs) / len(xs), sum(rss) / len(rss)
        den = sum((x - mx) ** 2 for x in xs)
        slope = sum((x - mx) * (y - my) for x, y in zip(xs, rss)) / den if den else 0  # KiB per second
    capture = (last_cam["frames_captured"] - first_cam["frames_captured"]) / elapsed if last_cam else 0
    rs, re_ = (rest_start or (None, None))[0], (rest_end or (None, None))[0]

    rows = [("binary", describe_binary(camd.binary)),
            ("source", f"{'synthetic testsrc' if args.device == 'testsrc' else args.device} {args.format or ''} {args.size} @ {args.fps} fps; "
                       f"timelapse every {args.interval} s, keep_count {args.keep_count}"),
            ("duration", f"{elapsed:.0f} s (warm-up {args.warmup:.0f} s), {len(samples)} samples; load average {loadavg()}"),
            ("capture rate over the soak", f"{capture:.2f} fps (frames_captured delta)"),
            ("streams opened / frames read", f"{activity.streams_opened} / {activity.stream_frames}; "
                                             f"{activity.sequence_resets} X-Frame-Sequence restarts (camera restarts under a live stream), "
                                             f"{activity.duplicates} duplicate frames")]
    for kind, k in sorted(activity.counts.items()):
        rows.append((f"requests: {kind}", f"{k['ok']} ok, non-2xx {k['bad'] or 0}, errors {k['errors'] or 0}"))
    if rs and re_:
        rows += [("at rest after warm-up: RSS / fds / threads", f"{mib(rs['rss_kib'])} / {rs['fds']} / {rs['threads']}"),
                 ("at rest at the end:     RSS / fds / threads", f"{mib(re_['rss_kib'])} / {re_['fds']} / {re_['threads']}"),
                 ("at rest: anonymous (heap) / file-backed RSS", f"{mib(rs['anon_kib'])} / {mib(rs['file_kib'])} after warm-up, "
                                                                 f"{mib(re_['anon_kib'])} / {mib(re_['file_kib'])} at the end"),
                 ("at rest: own RSS / the driver's buffers (smaps)", f"{mib(rs.get('own_kib', 0))} / {mib(rs.get('devices_kib', 0))} after warm-up, "
                                                                     f"{mib(re_.get('own_kib', 0))} / {mib(re_.get('devices_kib', 0))} at the end")]
    if rss:
        rows += [("under load after warm-up: RSS start / end / max", f"{mib(rss[0])} / {mib(rss[-1])} / {mib(max(rss))}"),
                 ("under load after warm-up: fds start / end / max", f"{fds[0]} / {fds[-1]} / {max(fds)}"),
                 ("under load after warm-up: threads start / end / max", f"{thr[0]} / {thr[-1]} / {max(thr)}"),
                 ("RSS trend after warm-up", f"{slope * 3600 / 1024:+.1f} MiB/hour (least squares)")]
    if len(after_warm) >= 2:
        first, last = after_warm[0], after_warm[-1]
        span, used = last[0] - first[0], last[1]["cpu_seconds"] - first[1]["cpu_seconds"]
        if span > 0:
            rows.append(("camd CPU after warm-up (user+system)", f"{used:.1f} s in {span:.0f} s, {100 * used / span:.1f}% of one core"))
    ages = sorted(activity.poll_ages)
    if ages:
        pct = lambda q: ages[min(len(ages) - 1, int(q * len(ages)))] * 1000  # noqa: E731
        rows.append((f"steady poll every {args.poll_period} s: frame age at the answer",
                     f"p50 {pct(0.5):.1f} ms, p99 {pct(0.99):.1f} ms, max {ages[-1] * 1000:.1f} ms over {len(ages)} answers"))
    if last_cam and first_cam:
        a, b = first_cam.get("snapshots", {}), last_cam.get("snapshots", {})
        rows.append(("snapshots: answered from a ready JPEG / made ahead of a poll / of them unused (over the soak)",
                     " / ".join(str(b.get(k, 0) - a.get(k, 0)) for k in ("answered_ready", "made_ahead", "made_ahead_unused"))))
    if last_cam and first_cam and args.device != "testsrc":
        # A V4L2 camera's frames are its driver's buffers, lent (issue 16); copied only while
        # consumers hold every buffer that may be lent.
        rows.append(("frames captured / copied out of the driver's buffers / dropped by the device (over the soak)",
                     " / ".join(str(last_cam.get(k, 0) - first_cam.get(k, 0)) for k in ("frames_captured", "frames_copied", "frames_dropped"))))
    rows += [("peak RSS (VmHWM)", mib(end_stats["hwm_kib"]) if end_stats else "?"),
             ("photos on disk at the end", f"{n_photos} ({photo_bytes / 1e6:.1f} MB), {temps} temporary files"),
             ("SIGTERM", f"exit status {code} after {took:.1f} s"),
             ] + ([("glibc malloc at the end: arenas, system / in use",
                    f"{heap['arenas']} arenas, {heap['system'] / 2**20:.1f} / {heap['in_use'] / 2**20:.1f} MiB "
                    "(system much above in use: memory kept by the allocator, not leaked)")] if heap else []) + [
             ("camd log", camd.log_path)]
    table(rows, "figures")
    if activity.events:
        print("failed requests (t, kind, answer, seconds since the last configure):")
        for t, kind, what, since in activity.events[:20]:
            print(f"  {t:7.1f} s  {kind}: {what}  ({since} s after a configure)" if since is not None else f"  {t:7.1f} s  {kind}: {what}")

    errors = sum(sum(k["errors"].values()) + sum(k["bad"].values()) for k in activity.counts.values())
    suite.check("soak: camd stayed up", alive, f"exit status {camd.proc.returncode}" if not alive else "")
    suite.check("soak: every request answered as expected", errors == 0 and hung == 0, f"{errors} failed, {hung} client threads hung")
    suite.check("soak: no stream client got the same frame twice", activity.duplicates == 0, f"{activity.duplicates} duplicates")
    if args.poll_period > 0:
        # camd serves a snapshot from a frame within its default age (an interval and an encode
        # or two): a frame a second old at its answer is one served stale (or a request stalled).
        suite.check("soak: every steady poll answered with a frame under 1 s old", bool(ages) and ages[-1] < 1.0,
                    f"max {ages[-1] * 1000:.0f} ms over {len(ages)} answers" if ages else "no answer")
    suite.check(f"soak: capture rate >= 95% of {args.fps} fps over the soak", capture >= 0.95 * args.fps, f"{capture:.2f} fps")
    if rs and re_:
        # camd's own memory: without the driver's buffers when smaps could be read, else VmRSS.
        key = "own_kib" if "own_kib" in rs and "own_kib" in re_ else "rss_kib"
        grow = re_[key] - rs[key]
        flat = grow <= max(8 * 1024, 0.10 * rs[key])
        suite.check(f"soak: {'own ' if key == 'own_kib' else ''}RSS flat at rest (end - warm-up <= 8 MiB or 10%)",
                    flat, f"{mib(rs[key])} -> {mib(re_[key])} ({grow / 1024:+.1f} MiB)")
        suite.check("soak: fds flat at rest (end - warm-up <= 2)", re_["fds"] - rs["fds"] <= 2, f"{rs['fds']} -> {re_['fds']}")
        suite.check("soak: threads flat at rest (end - warm-up <= 2)", re_["threads"] - rs["threads"] <= 2,
                    f"{rs['threads']} -> {re_['threads']}")
        verdict = "flat" if flat and re_["fds"] - rs["fds"] <= 2 and re_["threads"] - rs["threads"] <= 2 else "GROWING"
    else:
        suite.check("soak: figures at rest taken after warm-up and at the end", False)
        verdict = "unknown"
    suite.check(f"soak: photos on disk bounded by keep_count ({args.keep_count})", n_photos <= args.keep_count and temps == 0,
                f"{n_photos} photos, {temps} temporary files")
    suite.check("soak: camd exits within 5 s of SIGTERM", code == 0 and took <= 5, f"status {code} after {took:.1f} s")
    print(f"verdict: {verdict}")
    rc = suite.finish()
    if rc == 0 and not args.workdir:
        camd.cleanup()
    else:
        print(f"kept {camd.workdir}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
