#!/usr/bin/env python3
"""Host load test of camd with its synthetic source (no camera needed).

Starts its own camd (synthetic source, 1280x720 or 1920x1080, 30 fps) in a
scratch folder and runs four phases against its Unix socket:

  1. load:      N stream clients (default 50) reading for --seconds, plus waves
                of M concurrent status/snapshot requests (default 200) for the
                same time; capture rate measured before, during and after.
  2. slow:      5 normal stream clients, one reading at ~1 KB/s, one that never
                reads; the normal clients must keep the full rate and camd's RSS
                must stay bounded; then the stalled client drains what was queued.
  3. mid-frame: 200 clients that read half a frame and hang up; afterwards status
                answers, stream_clients is 0 and the fd count is back to baseline.
  4. sigterm:   SIGTERM while 5 clients stream and one idle keep-alive connection
                is open; the streams must end and camd must exit within 5 s.

Prints a table of figures and "N passed, N failed"; exit status 1 if any failed.
Python standard library only. Only this machine's Unix socket is used.

    scripts/stress/load.py                      # release build if present, else debug
    scripts/stress/load.py --camd .build/debug/camd --size 1920x1080 --seconds 30
"""
import argparse
import multiprocessing
import os
import selectors
import socket
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from camdclient import (Camd, MultipartStream, Suite, call, camera_status, connect, default_camd,  # noqa: E402
                        describe_binary, fd_targets, loadavg, mib, proc_stats, status, stream_request, table)


# ---------------------------------------------------------------- stream clients (own process)

def stream_clients(sock_path, camera, asked, duration, warmup, results):
    """Runs len(asked) stream clients in one selector loop for `duration` seconds.
    Puts one dict per client on `results`; frames are counted after `warmup` seconds."""
    sel = selectors.DefaultSelector()
    clients = []
    start = time.monotonic()
    for i, fps in enumerate(asked):
        c = {"id": i, "asked": fps, "parser": MultipartStream(), "error": None, "ended": None,
             "window_frames": 0, "first": None, "last": None}
        try:
            s = connect(sock_path, 10)
            s.sendall(stream_request(camera, fps))
            s.setblocking(False)
            c["sock"] = s
            sel.register(s, selectors.EVENT_READ, c)
        except OSError as e:
            c["error"] = f"connect: {e}"
            c["sock"] = None
        clients.append(c)
    buf = bytearray(1 << 18)
    view = memoryview(buf)
    window_start = start + warmup
    end = start + duration
    while True:
        now = time.monotonic()
        if now >= end:
            break
        for key, _ in sel.select(timeout=min(0.5, end - now)):
            c = key.data
            try:
                n = c["sock"].recv_into(view)
            except BlockingIOError:
                continue
            except OSError as e:
                c["error"] = f"recv: {e}"
                sel.unregister(c["sock"])
                continue
            if n == 0:
                c["ended"] = time.monotonic() - start
                sel.unregister(c["sock"])
                continue
            got = c["parser"].feed(view[:n])
            if got:
                t = time.monotonic()
                if t >= window_start:
                    c["window_frames"] += got
                    c["first"] = c["first"] or t
                    c["last"] = t
    window = end - window_start
    for c in clients:
        p = c["parser"]
        if c["sock"]:
            c["sock"].close()
        results.put({"id": c["id"], "asked": c["asked"], "status": p.http_status, "frames": p.frames,
                     "bytes": p.bytes, "gaps": p.sequence_gaps, "resets": p.sequence_resets, "duplicates": p.duplicates, "bad": p.bad, "error": c["error"],
                     "ended": c["ended"], "fps": c["window_frames"] / window if window > 0 else 0})


# ---------------------------------------------------------------- request waves (own process)

def request_waves(sock_path, camera, concurrency, duration, timeout, results):
    """`concurrency` threads send one request each per wave (all at once: a barrier),
    wave after wave for `duration` seconds. Half status, half snapshot."""
    deadline = time.monotonic() + duration
    go = [True]
    waves = [0]

    def decide():
        go[0] = time.monotonic() < deadline
        if go[0]:
            waves[0] += 1

    barrier = threading.Barrier(concurrency, action=decide)
    lock = threading.Lock()
    tally = {}  # kind -> {"codes": {}, "errors": {}, "latencies": []}

    def worker(i):
        kind = "status" if i % 2 == 0 else "snapshot"
        path = "/v1/status" if kind == "status" else f"/v1/cameras/{camera}/snapshot"
        while True:
            try:
                barrier.wait(timeout=timeout + 30)
            except threading.BrokenBarrierError:
                return
            if not go[0]:
                return
            t = time.monotonic()
            code, err = None, None
            try:
                code, headers, body = call(sock_path, "GET", path, timeout=timeout)
                if code == 200 and kind == "snapshot" and not (body[:2] == b"\xff\xd8" and body[-2:] == b"\xff\xd9"):
                    err = "snapshot body is not a whole JPEG"
            except Exception as e:  # noqa: BLE001 - every failure is counted
                err = type(e).__name__ + (f": {e}" if str(e) else "")
            latency = time.monotonic() - t
            with lock:
                k = tally.setdefault(kind, {"codes": {}, "errors": {}, "latencies": []})
                if code is not None:
                    k["codes"][code] = k["codes"].get(code, 0) + 1
                if err:
                    k["errors"][err[:120]] = k["errors"].get(err[:120], 0) + 1
                k["latencies"].append(latency)

    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(duration + timeout + 90)
    barrier.abort()
    results.put({"waves": waves[0], "tally": tally, "hung_threads": sum(t.is_alive() for t in threads)})


# ---------------------------------------------------------------- monitoring

class Monitor:
    """Samples camd's /proc figures and its camera status every `interval` seconds in a thread."""

    def __init__(self, camd, interval=1.0):
        self.camd = camd
        self.interval = interval
        self.samples = []  # (t, proc stats, camera status or None)
        self.status_errors = 0
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        while not self.stop_event.is_set():
            t = time.monotonic()
            stats = proc_stats(self.camd.pid)
            try:
                cam = camera_status(self.camd.sock, self.camd.camera, timeout=10)
            except Exception:  # noqa: BLE001
                cam = None
                self.status_errors += 1
            self.samples.append((t, stats, cam))
            self.stop_event.wait(max(0, self.interval - (time.monotonic() - t)))

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop_event.set()
        self.thread.join(15)

    def peak(self, field):
        values = [s[1][field] for s in self.samples if s[1]]
        return max(values) if values else 0

    def fps_range(self):
        values = [s[2]["measured_fps"] for s in self.samples if s[2]]
        return (min(values), max(values)) if values else (0, 0)


def capture_rate(camd, seconds):
    """Frames captured per second over `seconds` (from frames_captured), and encoded per second."""
    a = camera_status(camd.sock, camd.camera)
    t0 = time.monotonic()
    time.sleep(seconds)
    b = camera_status(camd.sock, camd.camera)
    dt = time.monotonic() - t0
    return ((b["frames_captured"] - a["frames_captured"]) / dt, (b["frames_encoded"] - a["frames_encoded"]) / dt,
            b["measured_fps"])


def counter_rate(before, after, dt, field):
    return (after[field] - before[field]) / dt if before and after and dt > 0 else 0


def wait_settled(camd, baseline_fds, timeout=15):
    """Waits until no stream clients remain and the fd count is at most the baseline; returns (ok, stats, cam)."""
    deadline = time.time() + timeout
    stats = cam = None
    while time.time() < deadline:
        stats = proc_stats(camd.pid)
        try:
            cam = camera_status(camd.sock, camd.camera)
        except Exception:  # noqa: BLE001
            cam = None
        if stats and cam and cam["stream_clients"] == 0 and stats["fds"] <= baseline_fds:
            return True, stats, cam
        time.sleep(0.5)
    return False, stats, cam


# ---------------------------------------------------------------- phases

def phase_load(camd, args, suite, figures):
    camera_fps = args.fps
    asked = [None if a == "full" else float(a) for a in args.stream_fps.split(",")]
    asked = [asked[i % len(asked)] for i in range(args.clients)]
    before_stats = proc_stats(camd.pid)
    cap_before, enc_before, mfps_before = capture_rate(camd, 5)
    print(f"before load: capture {cap_before:.2f} fps, encode {enc_before:.2f} fps, "
          f"RSS {mib(before_stats['rss_kib'])}, fds {before_stats['fds']}, threads {before_stats['threads']}", flush=True)

    ctx = multiprocessing.get_context("fork")
    stream_q, req_q = ctx.Queue(), ctx.Queue()
    streams = ctx.Process(target=stream_clients, args=(camd.sock, camd.camera, asked, args.seconds + 2, 3, stream_q))
    waves = ctx.Process(target=request_waves, args=(camd.sock, camd.camera, args.requests, args.seconds, args.timeout, req_q))
    with Monitor(camd) as mon:
        start_cam = camera_status(camd.sock, camd.camera)
        t0 = time.monotonic()
        streams.start()
        time.sleep(1)  # streams connected first, so every wave meets 50 live streams
        waves.start()
        stream_results = [stream_q.get(timeout=args.seconds + 120) for _ in asked]
        req = req_q.get(timeout=args.seconds + args.timeout + 180)
        streams.join(30)
        waves.join(30)
        end_cam = camera_status(camd.sock, camd.camera)
        dt = time.monotonic() - t0
    cap_during = counter_rate(start_cam, end_cam, dt, "frames_captured")
    enc_during = counter_rate(start_cam, end_cam, dt, "frames_encoded")
    during_clients = max((s[2]["stream_clients"] for s in mon.samples if s[2]), default=0)
    fps_lo, fps_hi = mon.fps_range()
    time.sleep(2)
    cap_after, enc_after, mfps_after = capture_rate(camd, 5)
    after_stats = proc_stats(camd.pid)

    # requests
    total = answered_2xx = non2xx = errors = 0
    rows = []
    for kind, k in sorted(req["tally"].items()):
        n = len(k["latencies"])
        ok = sum(v for c, v in k["codes"].items() if 200 <= c < 300)
        bad = sum(v for c, v in k["codes"].items() if not 200 <= c < 300)
        err = sum(k["errors"].values())
        total += n
        answered_2xx += ok
        non2xx += bad
        errors += err
        lat = sorted(k["latencies"])
        p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] * 1000 if lat else 0
        rows.append((f"  {kind} requests", f"{n} sent, {ok} 2xx, {bad} non-2xx {dict(k['codes'])}, {err} errors"
                                            f"{' ' + str(k['errors']) if err else ''}; latency p50 {p(0.5):.0f} ms, "
                                            f"p95 {p(0.95):.0f} ms, max {p(1.0):.0f} ms"))
    # streams
    fpss = [r["fps"] for r in stream_results]
    full = [r for r in stream_results if r["asked"] is None]
    thinned = [r for r in stream_results if r["asked"] is not None]
    want = lambda r: min(r["asked"] or camera_fps, camera_fps)
    slow_clients = [r for r in stream_results if r["fps"] < 0.9 * want(r)]
    broken = [r for r in stream_results if r["status"] != 200 or r["bad"] or r["error"] or r["ended"] or r["resets"] or r["duplicates"]]
    figures += [("load: binary", describe_binary(camd.binary)),
                ("load: source", f"{'synthetic testsrc' if args.device == 'testsrc' else args.device} {args.size} @ {args.fps} fps"),
                ("load: duration", f"{args.seconds} s; load average now {loadavg()}"),
                ("load: stream clients", f"{len(stream_results)} ({len(full)} full rate, {len(thinned)} thinned"
                                         f"{' to ' + str(sorted(set(r['asked'] for r in thinned))) if thinned else ''});"
                                         f" camd saw up to {during_clients}"),
                ("load: delivered fps per client", f"min {min(fpss):.1f}, median {statistics.median(fpss):.1f}, max {max(fpss):.1f}"
                                                   + (f"; full-rate median {statistics.median([r['fps'] for r in full]):.1f}" if full else "")
                                                   + (f"; thinned median {statistics.median([r['fps'] for r in thinned]):.1f}" if thinned else "")),
                ("load: stream frames / bytes", f"{sum(r['frames'] for r in stream_results)} frames, "
                                                f"{sum(r['bytes'] for r in stream_results) / 1e6:.0f} MB, "
                                                f"{sum(r['gaps'] for r in stream_results)} sequence gaps (frames skipped for slow readers)"),
                ("load: request waves", f"{req['waves']} waves x {args.requests} concurrent = {total} requests"),
                *rows,
                ("load: capture fps before/during/after", f"{cap_before:.2f} / {cap_during:.2f} / {cap_after:.2f} (frames_captured deltas)"),
                ("load: encode fps before/during/after", f"{enc_before:.2f} / {enc_during:.2f} / {enc_after:.2f} (frames_encoded deltas)"),
                ("load: measured_fps before/during/after", f"{mfps_before} / {fps_lo}..{fps_hi} / {mfps_after} (status field)"),
                ("load: RSS before / peak / after", f"{mib(before_stats['rss_kib'])} / {mib(mon.peak('rss_kib'))} "
                                                    f"(VmHWM {mib(after_stats['hwm_kib'])}) / {mib(after_stats['rss_kib'])}"),
                ("load: fds before / peak / after", f"{before_stats['fds']} / {mon.peak('fds')} / {after_stats['fds']}"),
                ("load: threads before / peak / after", f"{before_stats['threads']} / {mon.peak('threads')} / {after_stats['threads']}"),
                ("load: monitor status failures", mon.status_errors)]

    suite.check("load: every status/snapshot request answered 2xx", total > 0 and non2xx == 0 and errors == 0
                and req["hung_threads"] == 0, f"{total} requests, {non2xx} non-2xx, {errors} errors, {req['hung_threads']} hung")
    suite.check("load: every stream client got 200 and well-formed parts until the end", not broken,
                "; ".join(f"client {r['id']}: status {r['status']} bad {r['bad']} error {r['error']} ended {r['ended']} "
                          f"sequence restarts {r['resets']} duplicates {r['duplicates']}"
                          for r in broken[:5]))
    suite.check(f"load: every stream client delivered >= 90% of its asked rate", not slow_clients,
                f"{len(slow_clients)} of {len(stream_results)} below; slowest {min(fpss):.1f} fps" if slow_clients
                else f"slowest {min(fpss):.1f} fps")
    floor = args.capture_floor
    suite.check(f"load: capture rate during load >= {floor:.0%} of before", cap_during >= floor * cap_before,
                f"{cap_during:.2f} vs {cap_before:.2f} fps ({cap_during / cap_before:.1%})" if cap_before else "no frames before")
    suite.check("load: capture rate after load >= 95% of before", cap_after >= 0.95 * cap_before,
                f"{cap_after:.2f} vs {cap_before:.2f} fps")
    growth = mon.peak("rss_kib") - before_stats["rss_kib"]
    suite.check(f"load: peak RSS growth <= {args.rss_growth_mib} MiB", growth <= args.rss_growth_mib * 1024,
                f"+{mib(growth)}")
    suite.check("load: status answered throughout (monitor)", mon.status_errors == 0, f"{mon.status_errors} failures")


def slow_reader(sock_path, camera, rate, duration, out):
    """Reads the stream at about `rate` bytes per second with a small receive buffer."""
    p = MultipartStream()
    try:
        s = connect(sock_path, 10, rcvbuf=4096)
        s.sendall(stream_request(camera))
        end = time.monotonic() + duration
        step = 0.1
        while time.monotonic() < end:
            s.settimeout(5)
            data = s.recv(max(1, int(rate * step)))
            if not data:
                out["ended"] = True
                break
            p.feed(data)
            time.sleep(step)
        out["socket"] = s
    except OSError as e:
        out["error"] = str(e)
    out["parser"] = p


def phase_slow(camd, args, suite, figures):
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    # the stalled client: connects, asks, never reads
    stalled = connect(camd.sock, 10)
    stalled.sendall(stream_request(camd.camera))
    slow = {}
    slow_thread = threading.Thread(target=slow_reader, args=(camd.sock, camd.camera, 1024, args.slow_seconds, slow), daemon=True)
    slow_thread.start()
    time.sleep(1)
    start_stats = proc_stats(camd.pid)
    normal = ctx.Process(target=stream_clients, args=(camd.sock, camd.camera, [None] * 5, args.slow_seconds, 3, q))
    with Monitor(camd) as mon:
        normal.start()
        results = [q.get(timeout=args.slow_seconds + 60) for _ in range(5)]
        normal.join(30)
    slow_thread.join(args.slow_seconds + 30)
    mid = len(mon.samples) // 2
    rss = [s[1]["rss_kib"] for s in mon.samples if s[1]]
    second_half = rss[mid:] if len(rss) > 4 else rss
    # Drain the stalled client: how much did camd queue for it, and how old is it?
    drain_start = time.time()
    p = MultipartStream()
    queued = 0
    oldest_lag = None
    stalled.settimeout(2)
    drain_end = time.monotonic() + 5
    while time.monotonic() < drain_end:
        try:
            data = stalled.recv(1 << 16)
        except socket.timeout:
            break
        if not data:
            break
        before = p.frames
        p.feed(data)
        if p.frames > before and p.last_capture_time:
            if p.last_capture_time < drain_start - 0.05:
                queued += p.frames - before
                lag = drain_start - p.last_capture_time
                oldest_lag = lag if oldest_lag is None else max(oldest_lag, lag)
            else:
                break
    stalled_bytes_before_fresh = p.bytes
    stalled.close()
    if slow.get("socket"):
        slow["socket"].close()
    fpss = [r["fps"] for r in results]
    sp = slow.get("parser")
    figures += [("slow: normal clients fps", ", ".join(f"{f:.1f}" for f in fpss)),
                ("slow: 1 KB/s client", f"{sp.frames if sp else 0} frame headers in {args.slow_seconds} s, {sp.bytes if sp else 0} bytes"
                                        f"{', error ' + slow['error'] if slow.get('error') else ''}"),
                ("slow: stalled client", f"{args.slow_seconds} s without reading; then {queued} queued frames drained "
                                         f"({stalled_bytes_before_fresh} bytes), oldest {oldest_lag or 0:.1f} s old"),
                ("slow: RSS start / peak / end", f"{mib(start_stats['rss_kib'])} / {mib(max(rss))} / {mib(rss[-1])}"),
                ("slow: RSS second half min..max", f"{mib(min(second_half))}..{mib(max(second_half))}")]
    want = args.fps
    suite.check("slow: the 5 normal clients kept >= 90% of the full rate next to a slow and a stalled client",
                all(r["fps"] >= 0.9 * want and r["status"] == 200 and not r["bad"] for r in results),
                ", ".join(f"{f:.1f}" for f in fpss))
    suite.check(f"slow: RSS growth while a client stalls <= {args.slow_rss_mib} MiB",
                max(rss) - start_stats["rss_kib"] <= args.slow_rss_mib * 1024, f"+{mib(max(rss) - start_stats['rss_kib'])}")
    suite.check("slow: RSS flat in the second half (<= 8 MiB spread)", max(second_half) - min(second_half) <= 8 * 1024,
                f"{mib(max(second_half) - min(second_half))}")
    limit = 3 * args.fps  # three seconds' worth
    suite.check(f"slow: frames queued for a stalled client bounded (<= {limit})", queued <= limit, f"{queued} frames")


def phase_midframe(camd, args, suite, figures):
    ok, base_stats, cam = wait_settled(camd, 10 ** 6)
    time.sleep(1)
    base = proc_stats(camd.pid)
    base_targets = fd_targets(camd.pid)
    failures = 0
    t0 = time.monotonic()
    for i in range(args.midframe):
        try:
            s = connect(camd.sock, 10)
            s.sendall(stream_request(camd.camera))
            p = MultipartStream()
            while True:
                data = s.recv(2048)
                if not data:
                    failures += 1
                    break
                p.feed(data)
                # inside the first frame, with at most half of its JPEG read
                if p.frames >= 1 and p.in_frame:
                    break
            # read until about half the frame is in, then hang up
            while p.in_frame and p.left_in_frame > 6000:
                data = s.recv(min(2048, p.left_in_frame - 6000))
                if not data:
                    break
                p.feed(data)
            s.close()
        except OSError:
            failures += 1
    took = time.monotonic() - t0
    settled, after, cam = wait_settled(camd, base["fds"], timeout=15)
    extra = {fd: t for fd, t in fd_targets(camd.pid).items() if fd not in base_targets}
    try:
        st = status(camd.sock)
        answered = True
    except Exception:  # noqa: BLE001
        answered = False
    figures += [("mid-frame: hang-ups", f"{args.midframe} clients read ~half a frame and closed, in {took:.1f} s; {failures} connect/read failures"),
                ("mid-frame: fds before / after", f"{base['fds']} / {after['fds'] if after else '?'}"
                                                 + (f" (new: {sorted(set(extra.values()))[:5]})" if extra else "")),
                ("mid-frame: RSS before / after", f"{mib(base['rss_kib'])} / {mib(after['rss_kib']) if after else '?'}"),
                ("mid-frame: threads before / after", f"{base['threads']} / {after['threads'] if after else '?'}")]
    suite.check("mid-frame: status answers after 200 mid-frame hang-ups", answered)
    suite.check("mid-frame: stream_clients back to 0 and fd count back to baseline", settled,
                f"stream_clients {cam['stream_clients'] if cam else '?'}, fds {after['fds'] if after else '?'} vs {base['fds']}")
    suite.check("mid-frame: RSS growth <= 16 MiB", after and after["rss_kib"] - base["rss_kib"] <= 16 * 1024,
                f"+{mib(after['rss_kib'] - base['rss_kib'])}" if after else "")



def phase_sigterm(camd, args, suite, figures):
    """SIGTERM while 5 clients stream and one idle keep-alive connection is open.
    The streams must end, and camd must exit within 5 s. If it has not exited after
    --sigterm-wait seconds, the idle connection is closed by the client, to show
    whether it was what held camd up; SIGKILL after another 10 s."""
    import signal as _signal
    ends = {}

    def streamer(i):
        p = MultipartStream()
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.settimeout(60)
            s.connect(camd.sock)
            s.sendall(stream_request(camd.camera))
            while True:
                data = s.recv(65536)
                if not data:
                    ends[i] = ("eof", time.monotonic(), p.frames)
                    break
                p.feed(data)
                if p.ended:  # the last chunk: the stream is over; close like curl does
                    ends[i] = ("end", time.monotonic(), p.frames)
                    break
        except OSError as e:
            ends[i] = (f"error {e}", time.monotonic(), p.frames)
        finally:
            s.close()

    threads = [threading.Thread(target=streamer, args=(i,), daemon=True) for i in range(5)]
    for t in threads:
        t.start()
    idle = connect(camd.sock, 10)
    idle.sendall(b"GET /v1/status HTTP/1.1\r\nHost: camd\r\n\r\n")
    got = b""
    from camdclient import response_complete
    while not response_complete(got):
        got += idle.recv(65536)
    time.sleep(3)
    t0 = time.monotonic()
    os.kill(camd.pid, _signal.SIGTERM)
    exited = None
    idle_closed = None
    while time.monotonic() - t0 < args.sigterm_wait + 10:
        if camd.proc.poll() is not None:
            exited = time.monotonic() - t0
            break
        if idle_closed is None and time.monotonic() - t0 >= args.sigterm_wait:
            idle.close()
            idle_closed = time.monotonic() - t0
        time.sleep(0.05)
    if idle_closed is None:
        idle.close()
    for t in threads:
        t.join(5)
    if exited is None:
        camd.proc.kill()
        camd.proc.wait(10)
    stream_end = max((e[1] - t0 for e in ends.values()), default=None)
    kinds = sorted(set(e[0] for e in ends.values()))
    text = (f"streams ended {stream_end:.1f} s after SIGTERM ({', '.join(kinds)}); " if stream_end is not None else "streams did not end; ")
    text += f"camd exited {exited:.1f} s after SIGTERM" if exited is not None else "camd did not exit; SIGKILLed"
    text += f" (the client closed its idle connection at {idle_closed:.1f} s)" if idle_closed is not None else ""
    figures.append(("sigterm: 5 streams + 1 idle keep-alive connection", text))
    suite.check("sigterm: every stream ended cleanly within 5 s", len(ends) == 5 and stream_end is not None and stream_end <= 5
                and all(e[0] in ("end", "eof") for e in ends.values()),
                f"{len(ends)} ended, last {stream_end:.1f} s after SIGTERM" if stream_end is not None else "none ended")
    suite.check("sigterm: camd exits within 5 s while a keep-alive connection is open", exited is not None and exited <= 5,
                f"exited after {exited:.1f} s" if exited is not None else "did not exit")
    return exited is not None

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--camd", default=default_camd(), help="the camd binary (default: $CAMD, .build/release, .build/debug)")
    ap.add_argument("--device", default="testsrc",
                    help="the camera: the synthetic source (default), or a V4L2 device such as /dev/video0 (vivid in the VM suite)")
    ap.add_argument("--size", default="1280x720", help="frame size (the synthetic source makes 1280x720 or 1920x1080)")
    ap.add_argument("--fps", type=int, default=30)
    ap.add_argument("--seconds", type=float, default=30, help="length of the load phase")
    ap.add_argument("--clients", type=int, default=50, help="stream clients in the load phase")
    ap.add_argument("--stream-fps", default="full",
                    help="asked rates cycled over the clients, 'full' for no ?fps=, e.g. full,full,full,full,10")
    ap.add_argument("--requests", type=int, default=200, help="concurrent status/snapshot requests per wave")
    ap.add_argument("--timeout", type=float, default=30, help="per-request timeout, seconds")
    ap.add_argument("--capture-floor", type=float, default=0.95,
                    help="the capture rate during load must be at least this share of the rate before (default 0.95)")
    ap.add_argument("--rss-growth-mib", type=float, default=256, help="allowed peak RSS growth under load")
    ap.add_argument("--slow-seconds", type=float, default=30)
    ap.add_argument("--slow-rss-mib", type=float, default=32)
    ap.add_argument("--midframe", type=int, default=200)
    ap.add_argument("--phases", default="load,slow,midframe,sigterm", help="which phases to run")
    ap.add_argument("--sigterm-wait", type=float, default=15, help="seconds to wait for camd to exit before closing the idle connection")
    ap.add_argument("--workdir", help="scratch folder (default: a new temporary one, removed on success)")
    args = ap.parse_args()

    suite = Suite()
    figures = []
    camd = Camd(binary=args.camd, workdir=args.workdir, size=args.size, fps=args.fps, device=args.device)
    print(f"camd: {describe_binary(camd.binary)}; scratch {camd.workdir}; load average {loadavg()}", flush=True)
    camd.start()
    start_stats = proc_stats(camd.pid)
    phases = args.phases.split(",")
    try:
        if "load" in phases:
            phase_load(camd, args, suite, figures)
        if "slow" in phases and camd.alive():
            phase_slow(camd, args, suite, figures)
        if "midframe" in phases and camd.alive():
            phase_midframe(camd, args, suite, figures)
    finally:
        alive = camd.alive()
        end_stats = proc_stats(camd.pid) if alive else None
        if alive and "sigterm" in phases:
            phase_sigterm(camd, args, suite, figures)
        code, took = camd.stop()
    suite.check("camd stayed up through every phase", alive, f"exit status {camd.proc.returncode}" if not alive else "")
    if "sigterm" not in phases:
        suite.check("camd exits within 5 s of SIGTERM after the test", took <= 5 and code == 0, f"status {code} after {took:.1f} s")
    figures += [("camd: peak RSS (VmHWM)", mib(end_stats["hwm_kib"]) if end_stats else "?"),
                ("camd: RSS / fds / threads at start", f"{mib(start_stats['rss_kib'])} / {start_stats['fds']} / {start_stats['threads']}"),
                ("camd: RSS / fds / threads at end", f"{mib(end_stats['rss_kib'])} / {end_stats['fds']} / {end_stats['threads']}"
                 if end_stats else "?"),
                ("camd: log", camd.log_path)]
    table(figures, "figures")
    with open(camd.log_path, "rb") as f:
        log = f.read().decode(errors="replace")
    bad_lines = [l for l in log.splitlines() if any(w in l.lower() for w in ("error", "critical", "fatal", "crash"))]
    if bad_lines:
        print(f"\ncamd log has {len(bad_lines)} error lines, e.g.:\n  " + "\n  ".join(bad_lines[:5]))
    rc = suite.finish()
    if rc == 0 and not args.workdir:
        camd.cleanup()
    else:
        print(f"kept {camd.workdir}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
