"""Shared helpers for camd's guest-side check scripts (daemon and fault suites).

Each script: `from camdtest import *`, then call `setup(REPO, RESULTS, "name")`.
"""
import http.client
import io
import json
import os
import signal
import socket
import subprocess
import threading
import time

from PIL import Image

BARS = [(191, 191, 191), (191, 191, 0), (0, 191, 191), (0, 191, 0), (191, 0, 191), (191, 0, 0), (0, 0, 191), (0, 0, 0)]


class Suite:
    """PASS/FAIL lines to stdout and a log, and the closing "N passed, N failed"."""

    def __init__(self, results, name):
        self.passed = self.failed = 0
        self.log = open(os.path.join(results, f"{name}.log"), "w")

    def check(self, name, ok, detail=""):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        line = f"{'PASS' if ok else 'FAIL'}: {name}" + (f" ({detail})" if detail else "")
        print(line, flush=True)
        self.log.write(line + "\n")
        self.log.flush()

    def finish(self):
        line = f"{self.passed} passed, {self.failed} failed"
        print(line, flush=True)
        self.log.write(line + "\n")
        return 1 if self.failed else 0


class UnixHTTP(http.client.HTTPConnection):
    def __init__(self, path, timeout=60):
        super().__init__("camd", timeout=timeout)
        self.path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.path)


def call(sock, method, path, body=None, timeout=60):
    """One request on the Unix socket: (status, headers, body bytes)."""
    conn = UnixHTTP(sock, timeout)
    headers = {"Content-Type": "application/json"} if body is not None else {}
    conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
    response = conn.getresponse()
    data = response.read()
    conn.close()
    return response.status, dict(response.getheaders()), data


def read_stream(sock, path, seconds=30, count=None):
    """Reads camd's multipart stream at `path` for up to `seconds` or `count` parts, each
    cut by its Content-Length: (HTTP status, Content-Type, [(headers, body, arrival time)])."""
    conn = UnixHTTP(sock, 30)
    conn.request("GET", path)
    response = conn.getresponse()
    content_type = response.getheader("Content-Type", "")
    parts, received, t0 = [], b"", time.time()
    try:
        while time.time() - t0 < seconds and (count is None or len(parts) < count):
            head = received.find(b"\r\n\r\n")
            if head >= 0:
                headers = {}
                for line in received[:head].split(b"\r\n"):
                    key, colon, value = line.partition(b":")
                    if colon:
                        headers[key.strip().lower().decode()] = value.strip().decode()
                length = int(headers.get("content-length", "-1"))
                if length >= 0 and len(received) >= head + 4 + length:
                    parts.append((headers, received[head + 4:head + 4 + length], time.time()))
                    received = received[head + 4 + length:]
                    continue
            chunk = response.read1(65536)
            if not chunk:
                break
            received += chunk
    finally:
        conn.close()
    return response.status, content_type, parts


def camera_status(sock, camera):
    _, _, data = call(sock, "GET", f"/v1/cameras/{camera}")
    return json.loads(data)["status"]


def wait_for(predicate, timeout, step=0.25):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if predicate():
                return True
        except Exception:
            pass
        time.sleep(step)
    return False


def bars(jpeg):
    """(size, the average colour of each of the eight bars on a row below vivid's text)."""
    image = Image.open(io.BytesIO(jpeg)).convert("RGB")
    w, h = image.size
    row = h * 3 // 5
    colours = []
    for bar in range(8):
        cx = (2 * bar + 1) * w // 16
        pixels = [image.getpixel((x, y)) for x in range(cx - 3, cx + 4) for y in range(row - 3, row + 4)]
        colours.append(tuple(sum(p[i] for p in pixels) // len(pixels) for i in range(3)))
    return image.size, colours


def bars_ok(colours, tolerance=10):
    return all(abs(a - b) <= tolerance for got, want in zip(colours, BARS) for a, b in zip(got, want))


def mean_level(jpeg):
    image = Image.open(io.BytesIO(jpeg)).convert("L")
    data = list(image.getdata())
    return sum(data) / len(data)


class NotifyListener(threading.Thread):
    """A NOTIFY_SOCKET as systemd provides one: collects READY=1, WATCHDOG=1, STATUS=."""

    def __init__(self, path):
        super().__init__(daemon=True)
        if os.path.exists(path):
            os.unlink(path)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.messages = []

    def run(self):
        while True:
            try:
                data = self.sock.recv(4096).decode()
            except OSError:
                return
            self.messages.append((time.time(), data))

    def has(self, text):
        return any(text in m for _, m in self.messages)

    def count(self, text):
        return sum(1 for _, m in self.messages if text in m)


def start_camd(camd, config, photos, log_path, extra_env=None, args=()):
    env = dict(os.environ)
    env.update(extra_env or {})
    stderr = open(log_path, "a")
    return subprocess.Popen([camd, "--config", config, "--photos", photos, *args], env=env,
                            stdout=stderr, stderr=stderr, stdin=subprocess.DEVNULL)


def stop_camd(process, limit=15, sig=signal.SIGTERM):
    """Signals camd and waits; returns the seconds it took, or None if it had to be killed."""
    started = time.time()
    process.send_signal(sig)
    try:
        process.wait(limit)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        return None
    return time.time() - started


def write_config(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def vivid_config(path, socket_path, daemon_extra="", camera_extra=""):
    """A camd.toml with one camera, "vivid", on /dev/video0 at 640x480 YUYV 25 fps."""
    return write_config(path, f"""
[daemon]
socket = "{socket_path}"
{daemon_extra}

[[camera]]
id = "vivid"
device = "/dev/video0"
format = "YUYV"
size = "640x480"
fps = 25
{camera_extra}
""")


def process_figures(pid):
    """(fds, threads, RSS kB) of a process, from /proc."""
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    fields = {}
    for line in open(f"/proc/{pid}/status"):
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    return fds, int(fields["Threads"]), int(fields["VmRSS"].split()[0])
