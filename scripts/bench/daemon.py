#!/usr/bin/env python3
"""camd daemon benchmark on the host, with the built-in synthetic test source.

    scripts/bench/daemon.py [--camd PATH] [--requests 200] [--clients 1,10,50]
                            [--stream-seconds 20] [--idle-seconds 20] [--quiet-load 1.0]

Starts its own camd (scripts/lib/camdclient.py: scratch config, Unix socket
in a scratch folder, `device = "testsrc"` - the synthetic source, not a
camera) and measures, printing a table at the end:

  a. snapshot latency through the socket: p50/p99 of `--requests` sequential
     GET /v1/cameras/{id}/snapshot at 1280x720 and 1920x1080, 30 fps, against
     the anchor "one frame interval + one encode" (encode = camd's own mean
     encode time, `encode_milliseconds` in its status);
  b. 1920x1080 at 30 fps streamed to each of `--clients` clients for
     `--stream-seconds`: camd CPU seconds (utime+stime, /proc/PID/stat) per
     frame encoded and per frame delivered (summed over clients), frames
     delivered per client per second, and the clients' own CPU (one selector
     loop in a child process; it counts parts without decoding JPEG);
  c. idle camera (running, no clients): camd CPU % of one core over
     `--idle-seconds`, how often each of its threads woke a second (the
     capture thread's with the frames; the others' are timers); and its CPU
     with the camera stopped;
  d. VmHWM / VmRSS of camd idle and while 10 clients stream 1080p.

Everything is bounded in count and time; only Unix sockets in the scratch
folder are used. Nothing is asserted: it prints figures.
"""
import argparse
import json
import os
import platform
import selectors
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import camdclient  # noqa: E402  (scripts/lib/camdclient.py)
from camdclient import Camd, MultipartStream, connect, call, camera_status, proc_stats, stream_request  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")
REPO = camdclient.REPO


# ---------------------------------------------------------------- measuring helpers

def cpu_seconds(pid):
    """utime + stime of a process (all its threads), seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # fields 14 and 15 of proc(5)


def context_switches(pid):
    """Each thread's context switches so far (voluntary and not), summed by thread name: how
    often a thread woke. A thread gone since is not counted (its switches go with it)."""
    counts = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/comm") as f:
                name = f.read().strip()
            with open(f"/proc/{pid}/task/{task}/status") as f:
                switches = sum(int(line.split()[1]) for line in f if "ctxt_switches:" in line)
        except OSError:
            continue
        counts[name] = counts.get(name, 0) + switches
    return counts


def percentile(values, p):
    v = sorted(values)
    if not v:
        return float("nan")
    k = (len(v) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def machine():
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{os.cpu_count()} cpu(s), {model}, {platform.system()} {platform.release()}"


def repo_state():
    try:
        head = subprocess.run(["git", "-C", REPO, "rev-parse", "--short=12", "HEAD"], capture_output=True,
                              text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return f"{head}{' (working tree has changes)' if dirty else ''}"
    except (OSError, subprocess.SubprocessError):
        return "?"


def wait_quiet(limit, max_wait):
    """Waits (bounded) until the 1-minute load average is below `limit`; returns it."""
    deadline = time.time() + max_wait
    while True:
        load = os.getloadavg()[0]
        if load < limit or time.time() >= deadline:
            return load
        time.sleep(5)


def default_binary():
    if os.environ.get("CAMD"):
        return os.environ["CAMD"]
    path = os.path.join(REPO, ".build-bench", "release", "camd")
    return path if os.path.exists(path) else camdclient.default_camd()


# ---------------------------------------------------------------- stream clients (child process)

def client_main(sock_path, camera, count, max_seconds):
    """N stream clients in one selector loop. SIGUSR1 marks the start of the window,
    SIGUSR2 its end: then it prints one JSON line and exits."""
    marks = []
    signal.signal(signal.SIGUSR1, lambda *_: marks.append(("start", time.time())))
    signal.signal(signal.SIGUSR2, lambda *_: marks.append(("end", time.time())))
    sel = selectors.DefaultSelector()
    parsers = []
    for _ in range(count):
        s = connect(sock_path, None, rcvbuf=1 << 20)
        s.sendall(stream_request(camera))
        s.setblocking(False)
        p = MultipartStream()
        parsers.append(p)
        sel.register(s, selectors.EVENT_READ, p)
    buf = bytearray(1 << 18)
    view = memoryview(buf)
    start_counts = None
    ready_said = False
    closed = 0
    deadline = time.time() + max_seconds
    while time.time() < deadline:
        for key, _ in sel.select(0.1):
            try:
                n = key.fileobj.recv_into(buf)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                n = 0
            if n == 0:
                sel.unregister(key.fileobj)
                key.fileobj.close()
                closed += 1
                continue
            key.data.feed(view[:n])
        if not ready_said and all(p.frames > 0 for p in parsers):
            print(json.dumps({"ready": True}), flush=True)
            ready_said = True
        while marks:
            what, _ = marks.pop(0)
            if what == "start":
                start_counts = [p.frames for p in parsers]
            else:
                end_counts = [p.frames for p in parsers]
                start_counts = start_counts or [0] * count
                print(json.dumps({"frames": [e - s for s, e in zip(start_counts, end_counts)],
                                  "gaps": sum(p.sequence_gaps for p in parsers),
                                  "bad": [p.bad for p in parsers if p.bad][:3], "closed": closed}), flush=True)
                return 0
    print(json.dumps({"error": "no end mark within the time limit"}), flush=True)
    return 1


def stream_phase(camd, clients, seconds, warmup=3.0):
    """Streams to `clients` clients; returns the figures of one window of `seconds`."""
    child = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--client-mode", camd.sock, camd.camera,
                              str(clients), str(seconds + warmup + 60)], stdout=subprocess.PIPE, text=True)
    try:
        line = child.stdout.readline()  # {"ready": true} once every client has a frame
        if not line or not json.loads(line).get("ready"):
            raise RuntimeError(f"stream clients did not start: {line!r}")
        time.sleep(warmup)
        st0, c0, k0, t0 = camera_status(camd.sock, camd.camera), cpu_seconds(camd.pid), cpu_seconds(child.pid), time.time()
        child.send_signal(signal.SIGUSR1)
        mem_peak = None
        end = t0 + seconds
        while time.time() < end:  # sample RSS during the window
            time.sleep(min(1.0, max(0.0, end - time.time())))
            m = proc_stats(camd.pid)
            if m and (mem_peak is None or m["rss_kib"] > mem_peak["rss_kib"]):
                mem_peak = m
        child.send_signal(signal.SIGUSR2)
        c1, k1, t1 = cpu_seconds(camd.pid), cpu_seconds(child.pid), time.time()
        st1 = camera_status(camd.sock, camd.camera)
        result = json.loads(child.stdout.readline() or "{}")
        child.wait(30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(10)
    wall = t1 - t0
    encoded = st1["frames_encoded"] - st0["frames_encoded"]
    captured = st1["frames_captured"] - st0["frames_captured"]
    delivered = sum(result.get("frames", []))
    per_client = [f / wall for f in result.get("frames", [])]
    cpu = c1 - c0
    return {
        "clients": clients, "wall": wall, "cpu": cpu, "client_cpu": k1 - k0,
        "captured": captured, "encoded": encoded, "delivered": delivered,
        "cpu_per_encoded_ms": cpu / encoded * 1000 if encoded else float("nan"),
        "cpu_per_delivered_ms": cpu / delivered * 1000 if delivered else float("nan"),
        "fps_per_client_mean": sum(per_client) / len(per_client) if per_client else 0,
        "fps_per_client_min": min(per_client) if per_client else 0,
        "encoded_fps": encoded / wall, "captured_fps": captured / wall,
        "gaps": result.get("gaps"), "bad": result.get("bad"), "closed": result.get("closed"),
        "encode_ms": st1.get("encode_milliseconds"), "mem": mem_peak, "hwm": proc_stats(camd.pid),
        "load": camdclient.loadavg(),
    }


def stream_window(camd, seconds):
    """`stream_phase` with one client, without the memory samples: the figures a comparison
    table prints (vm-compare, libcamera-compare)."""
    s = stream_phase(camd, 1, seconds)
    s.pop("mem", None)
    s.pop("hwm", None)
    return s


def stop_keeping_log(camd, path, lines=200):
    """Stops camd and writes the last `lines` of its log to `path`; returns its exit status."""
    code, _ = camd.stop()
    with open(path, "w") as f:
        f.write(camd.tail(lines))
    return code


# ---------------------------------------------------------------- the other phases

def idle_phase(camd, seconds):
    st0, c0, t0 = camera_status(camd.sock, camd.camera), cpu_seconds(camd.pid), time.time()
    w0 = context_switches(camd.pid)
    time.sleep(seconds)
    c1, t1 = cpu_seconds(camd.pid), time.time()
    w1 = context_switches(camd.pid)
    st1 = camera_status(camd.sock, camd.camera)
    # Wake-ups a second at rest: the capture thread's come with the frames; the others' are
    # timers and loops that look for work (issue 16: idle CPU).
    woke = {name: (w1[name] - w0.get(name, 0)) / (t1 - t0) for name in w1 if w1[name] > w0.get(name, 0)}
    return {"cpu_pct": (c1 - c0) / (t1 - t0) * 100, "wall": t1 - t0,
            "wakeups_per_second": sum(woke.values()),
            "wakeups_per_second_not_capture": sum(v for name, v in woke.items() if not name.startswith("camd-cap")),
            "wakeups_by_thread": dict(sorted(woke.items(), key=lambda item: -item[1])),
            "captured": st1["frames_captured"] - st0["frames_captured"],
            "encoded": st1["frames_encoded"] - st0["frames_encoded"], "load": camdclient.loadavg()}


SNAPSHOT_MODES = {
    # back to back: a request within one frame interval of the last gets the JPEG already made
    "b2b": ("", 0.0),
    # 0.1 s apart: the JPEG in hand is always too old, so the newest raw frame is encoded at once
    "spaced": ("", 0.1),
    # ?max_age_ms=0: a frame captured after the request (waits for the next frame, then encodes)
    "next": ("?max_age_ms=0", 0.0),
}


def snapshot_phase(camd, requests, mode="spaced", warmup=5):
    query, gap = SNAPSHOT_MODES[mode]
    path = f"/v1/cameras/{camd.camera}/snapshot{query}"
    for _ in range(warmup):
        call(camd.sock, "GET", path, timeout=10)
    times, sizes, ages, errors = [], [], [], 0
    c0 = cpu_seconds(camd.pid)
    st0 = camera_status(camd.sock, camd.camera)
    deadline = time.time() + max(60, requests * (0.5 + gap))
    for _ in range(requests):
        if time.time() > deadline:
            break
        if gap:
            time.sleep(gap)
        t = time.perf_counter()
        try:
            code, headers, body = call(camd.sock, "GET", path, timeout=10)
        except OSError:
            errors += 1
            continue
        dt = time.perf_counter() - t
        if code != 200 or not body.startswith(b"\xff\xd8"):
            errors += 1
            continue
        times.append(dt * 1000)
        sizes.append(len(body))
        try:  # how old the frame was when the answer arrived (X-Capture-Time is CLOCK_REALTIME)
            ages.append((time.time() - float(headers["x-capture-time"])) * 1000)
        except (KeyError, TypeError, ValueError):
            pass
    cpu = cpu_seconds(camd.pid) - c0
    st1 = camera_status(camd.sock, camd.camera)
    encoded = st1["frames_encoded"] - st0["frames_encoded"]
    return {"mode": mode, "n": len(times), "errors": errors, "p50": percentile(times, 50), "p99": percentile(times, 99),
            "min": min(times, default=float("nan")), "max": max(times, default=float("nan")),
            "mean_bytes": sum(sizes) / len(sizes) if sizes else 0,
            "age_p50": percentile(ages, 50), "age_p99": percentile(ages, 99),
            "encoded": encoded, "cpu_per_request_ms": cpu / max(len(times), 1) * 1000,
            "encode_ms": st1.get("encode_milliseconds"), "fps": st1.get("measured_fps"),
            "load": camdclient.loadavg()}


def stop_camera_phase(camd, seconds):
    code, _, _ = call(camd.sock, "POST", f"/v1/cameras/{camd.camera}/stop", timeout=30)
    if code != 200:
        return None
    time.sleep(1)
    c0, t0 = cpu_seconds(camd.pid), time.time()
    time.sleep(seconds)
    return {"cpu_pct": (cpu_seconds(camd.pid) - c0) / (time.time() - t0) * 100, "load": camdclient.loadavg()}


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--camd", default=default_binary())
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--clients", default="1,10,50")
    ap.add_argument("--stream-seconds", type=float, default=20)
    ap.add_argument("--idle-seconds", type=float, default=20)
    ap.add_argument("--quiet-load", type=float, default=1.0,
                    help="wait (at most --quiet-wait s) for the 1-min load average to drop below this")
    ap.add_argument("--quiet-wait", type=float, default=120)
    ap.add_argument("--built-from", default="", help="what the binary was built from (a commit), for the table")
    ap.add_argument("--workdir")
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument("--client-mode", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.client_mode:
        sock, camera, count, limit = args.client_mode
        return client_main(sock, camera, int(count), float(limit))

    clients = [int(c) for c in args.clients.split(",") if c]
    print(f"machine: {machine()}")
    print(f"camd:    {camdclient.describe_binary(args.camd)}; repo HEAD {repo_state()}")
    load = wait_quiet(args.quiet_load, args.quiet_wait)
    print(f"load average at start: {camdclient.loadavg()}"
          + ("" if load < args.quiet_load else f" (still above {args.quiet_load} after {args.quiet_wait:.0f} s: figures are noisy)"),
          flush=True)
    results = {"machine": machine(), "binary": camdclient.describe_binary(args.camd), "repo": repo_state(),
               "snapshots": {}, "idle": {}, "streams": [], "memory": {}}

    for size in ("1280x720", "1920x1080"):
        camd = Camd(binary=args.camd, workdir=args.workdir and os.path.join(args.workdir, size),
                    size=size, fps=30, camera_id="bench", log_level="warning")
        try:
            camd.start()
            time.sleep(2)
            print(f"\n[{size}] idle camera, no clients, {args.idle_seconds:.0f} s ...", flush=True)
            idle = idle_phase(camd, args.idle_seconds)
            mem_idle = proc_stats(camd.pid)
            results["idle"][size] = idle
            print(f"  camd CPU {idle['cpu_pct']:.2f}% of a core; {idle['captured']} frames captured, "
                  f"{idle['encoded']} encoded; load {idle['load']}")
            print(f"  threads woke {idle['wakeups_per_second']:.1f} times a second, "
                  f"{idle['wakeups_per_second_not_capture']:.1f} of them not the capture thread: "
                  + ", ".join(f"{name} {rate:.1f}" for name, rate in idle["wakeups_by_thread"].items()))
            for mode in ("spaced", "b2b", "next"):
                print(f"[{size}] {args.requests} sequential snapshots, {mode} ...", flush=True)
                snap = snapshot_phase(camd, args.requests, mode)
                results["snapshots"][f"{size} {mode}"] = snap
                interval = 1000 / 30
                snap["anchor"] = interval + (snap["encode_ms"] or 0)
                print(f"  p50 {snap['p50']:.2f} ms, p99 {snap['p99']:.2f} ms (min {snap['min']:.2f}, max {snap['max']:.2f}); "
                      f"anchor {snap['anchor']:.1f} ms = {interval:.1f} ms frame + {snap['encode_ms'] or 0:.1f} ms encode; "
                      f"frame age at answer p50 {snap['age_p50']:.1f} ms; "
                      f"{snap['encoded']} frames encoded for {snap['n']} answers; camd CPU {snap['cpu_per_request_ms']:.2f} ms "
                      f"per answer; errors {snap['errors']}; load {snap['load']}", flush=True)
            if size == "1920x1080":
                results["memory"]["idle"] = mem_idle
                for n in clients:
                    print(f"[{size}] streaming to {n} client(s), {args.stream_seconds:.0f} s ...", flush=True)
                    r = stream_phase(camd, n, args.stream_seconds)
                    results["streams"].append(r)
                    print(f"  camd CPU {r['cpu']:.2f} s over {r['wall']:.1f} s = {r['cpu'] / r['wall'] * 100:.0f}% of a core; "
                          f"{r['captured']} captured, {r['encoded']} encoded, {r['delivered']} delivered; "
                          f"{r['cpu_per_encoded_ms']:.2f} ms CPU per encoded frame, {r['cpu_per_delivered_ms']:.3f} per delivered; "
                          f"per client {r['fps_per_client_mean']:.1f} fps (min {r['fps_per_client_min']:.1f}); "
                          f"client CPU {r['client_cpu'] / r['wall'] * 100:.0f}%; gaps {r['gaps']}; load {r['load']}", flush=True)
                    if n == 10:
                        results["memory"]["stream10"] = {"rss_kib": r["mem"]["rss_kib"], "hwm_kib": r["hwm"]["hwm_kib"]}
                    time.sleep(2)
                print(f"[{size}] camera stopped, no clients, {args.idle_seconds / 2:.0f} s ...", flush=True)
                results["idle"]["stopped"] = stop_camera_phase(camd, args.idle_seconds / 2)
        finally:
            camd.stop()
            if not args.workdir:
                camd.cleanup()

    # ---------------------------------------------------------------- the table
    print("\n== camd daemon benchmark (synthetic source, 30 fps)")
    print(f"machine: {results['machine']}")
    print(f"binary:  {results['binary']}")
    print(f"repo:    HEAD {results['repo']}{'; binary built from ' + args.built_from if args.built_from else ''}; "
          f"load average now {camdclient.loadavg()}")
    print("\nsnapshot latency, sequential requests on the Unix socket (no stream clients)")
    print("  spaced: 0.1 s apart, each answer needs a fresh encode; b2b: back to back, a JPEG made within one"
          " frame interval is reused; next: ?max_age_ms=0, waits for the next frame")
    print(f"  {'size, mode':<17} {'n':>4} {'p50 ms':>8} {'p99 ms':>8} {'encodes':>8} {'encode ms':>10} {'anchor ms':>10} "
          f"{'p50/anchor':>11}  goal p50 < anchor")
    for name, s in results["snapshots"].items():
        print(f"  {name:<17} {s['n']:>4} {s['p50']:>8.2f} {s['p99']:>8.2f} {s['encoded']:>8} {s['encode_ms'] or 0:>10.2f} "
              f"{s['anchor']:>10.1f} {s['p50'] / s['anchor']:>11.2f}  {'met' if s['p50'] < s['anchor'] else 'MISSED'}")
    print("\nstreaming 1920x1080 at 30 fps")
    print(f"  {'clients':>7} {'enc fps':>8} {'fps/client':>11} {'min':>6} {'CPU %':>6} {'ms CPU/encoded':>15} "
          f"{'ms CPU/delivered':>17} {'client CPU %':>13} {'gaps':>6}")
    for r in results["streams"]:
        print(f"  {r['clients']:>7} {r['encoded_fps']:>8.1f} {r['fps_per_client_mean']:>11.1f} {r['fps_per_client_min']:>6.1f} "
              f"{r['cpu'] / r['wall'] * 100:>6.0f} {r['cpu_per_encoded_ms']:>15.2f} {r['cpu_per_delivered_ms']:>17.3f} "
              f"{r['client_cpu'] / r['wall'] * 100:>13.0f} {r['gaps']:>6}")
    print("\nidle (camera running, no clients)  goal < 1% of a core")
    for size in ("1280x720", "1920x1080"):
        if size in results["idle"]:
            i = results["idle"][size]
            print(f"  {size:<10} {i['cpu_pct']:6.2f}% of a core  {'met' if i['cpu_pct'] < 1 else 'MISSED'}  "
                  f"({i['captured']} frames captured, {i['encoded']} encoded in {i['wall']:.0f} s)")
    if results["idle"].get("stopped"):
        print(f"  camera stopped: {results['idle']['stopped']['cpu_pct']:.2f}% of a core")
    print("\nmemory (camd, 1920x1080)")
    for name, m in results["memory"].items():
        if m:
            print(f"  {name:<9} VmRSS {camdclient.mib(m['rss_kib'])}, VmHWM {camdclient.mib(m['hwm_kib'])}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
