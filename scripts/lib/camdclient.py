"""camd's API for the test scripts: one HTTP/1.1 client, one multipart stream parser,
a camd process of our own, and PASS/FAIL bookkeeping.

Every check script, stress tool and benchmark imports this module (add
scripts/lib to sys.path first); none of them keeps an HTTP client or a
multipart parser of its own. Standard library only, so it runs in the VMs and
on a bare host alike. A "target" is camd's Unix socket path, or a
(host, port) pair for the TCP listener.

    python3 scripts/lib/camdclient.py request SOCKET METHOD PATH   # prints the status code
"""
import http.client
import json
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# ---------------------------------------------------------------- results

class Suite:
    """PASS/FAIL lines (and to `log_path` too, if given) and the closing "N passed, N failed",
    which scripts/test and the VM guests count."""

    def __init__(self, log_path=None):
        self.passed = self.failed = 0
        self.failures = []
        self.log = open(log_path, "w") if log_path else None

    def _line(self, line):
        print(line, flush=True)
        if self.log:
            self.log.write(line + "\n")
            self.log.flush()

    def check(self, name, ok, detail=""):
        ok = bool(ok)
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            self.failures.append(name)
        self._line(f"{'PASS' if ok else 'FAIL'}: {name}" + (f" ({detail})" if detail else ""))
        return ok

    def finish(self):
        self._line(f"{self.passed} passed, {self.failed} failed")
        return 1 if self.failed else 0


def table(rows, title=None):
    """Prints (name, value) rows as an aligned two-column table."""
    if title:
        print(f"\n== {title}")
    width = max((len(str(r[0])) for r in rows), default=0)
    for name, value in rows:
        print(f"  {str(name):<{width}}  {value}")
    sys.stdout.flush()


def columns(rows):
    """Prints rows (the first a header) as right-aligned columns."""
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(str(cell).rjust(width) for cell, width in zip(row, widths)))
    sys.stdout.flush()


def wait_for(predicate, timeout, step=0.25):
    """True once predicate() is true (exceptions count as not yet), False after `timeout` s."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if predicate():
                return True
        except Exception:
            pass
        time.sleep(step)
    return False


# ---------------------------------------------------------------- HTTP

def connect(target, timeout=30, rcvbuf=None):
    """A connected stream socket to camd: `target` is a Unix socket path or (host, port).
    `rcvbuf` sets SO_RCVBUF before connecting (a slow reader's small window, a benchmark's large one)."""
    if isinstance(target, (tuple, list)) and rcvbuf is None:
        return socket.create_connection(tuple(target), timeout=timeout)
    tcp = isinstance(target, (tuple, list))
    s = socket.socket(socket.AF_INET if tcp else socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        if rcvbuf:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        s.connect(tuple(target) if tcp else target)
    except OSError:
        s.close()
        raise
    return s


class Connection(http.client.HTTPConnection):
    """http.client on camd's Unix socket or TCP listener (a keep-alive connection)."""

    def __init__(self, target, timeout=30):
        super().__init__("camd", timeout=timeout)
        self.target = target

    def connect(self):
        self.sock = connect(self.target, self.timeout)


def call(target, method, path, body=None, timeout=30, headers=None):
    """One request: (status, headers, body bytes). The headers are http.client's message:
    case-insensitive `get`, `in` and `[]`. A dict or list body is sent as JSON.
    Raises on connection errors and timeouts."""
    conn = Connection(target, timeout)
    try:
        hdrs = dict(headers or {})
        data = None
        if body is not None:
            data = body if isinstance(body, (bytes, bytearray)) else json.dumps(body).encode()
            hdrs.setdefault("Content-Type", "application/json")
        conn.request(method, path, body=data, headers=hdrs)
        response = conn.getresponse()
        payload = response.read()
        return response.status, response.headers, payload
    finally:
        conn.close()


def timed_get(target, path, timeout=10):
    """One GET on a connection of its own, as a polling client makes it, timed step by step:
    (status, headers, body, steps), where `steps` are the seconds from the start until
    connected, until the status line and headers were read, until the body was read, and
    until the connection was closed. Raises on connection errors and timeouts."""
    started = time.perf_counter()
    connection = Connection(target, timeout)
    try:
        connection.connect()
        connected = time.perf_counter()
        connection.request("GET", path)
        response = connection.getresponse()
        headed = time.perf_counter()
        body = response.read()
        read = time.perf_counter()
    finally:
        connection.close()
    closed = time.perf_counter()
    steps = tuple(t - started for t in (connected, headed, read, closed))
    return response.status, response.headers, body, steps


def call_json(target, method, path, body=None, timeout=30):
    """(status, decoded JSON or None) of one request."""
    code, _, data = call(target, method, path, body, timeout)
    try:
        return code, json.loads(data)
    except ValueError:
        return code, None


def status(target, timeout=10):
    code, _, data = call(target, "GET", "/v1/status", timeout=timeout)
    if code != 200:
        raise RuntimeError(f"/v1/status answered {code}")
    return json.loads(data)


# The counters of a camera's status.snapshots, each a total since camd started.
SNAPSHOT_COUNTERS = ("answered_on_event_loop", "waited_on_event_loop", "answered_ready", "made_ahead", "made_ahead_unused")


def camera_status(target, camera, timeout=10):
    """One camera's entry in /v1/status."""
    for cam in status(target, timeout)["cameras"]:
        if cam["id"] == camera:
            return cam
    raise KeyError(camera)


def camera_detail(target, camera, timeout=10):
    code, _, data = call(target, "GET", f"/v1/cameras/{camera}", timeout=timeout)
    if code != 200:
        raise RuntimeError(f"GET /v1/cameras/{camera} answered {code}")
    return json.loads(data)


def metric(target, name, camera):
    """One camera's sample of a Prometheus metric from /metrics, or None."""
    _, _, data = call(target, "GET", "/metrics")
    for line in data.decode().splitlines():
        if line.startswith(f'{name}{{camera="{camera}"}}'):
            return float(line.rsplit(" ", 1)[1])
    return None


def stream_request(camera, fps=None):
    """The raw request for a camera's MJPEG stream, for clients that read the socket themselves."""
    q = f"?fps={fps}" if fps else ""
    return f"GET /v1/cameras/{camera}/stream{q} HTTP/1.1\r\nHost: camd\r\n\r\n".encode()


# ---------------------------------------------------------------- raw exchanges (fuzzing)

def raw_exchange(target, payload, timeout=5.0, max_bytes=1 << 20, half_close=False, head_request=False):
    """Sends raw bytes while reading the answer (so a server that answers early and stops
    reading cannot block us), until the peer closes, `max_bytes`, or one whole response
    arrived (with `half_close`, until the peer closes: the write side is shut after sending).
    Returns (response bytes, 'closed'|'complete'|'timeout'|'reset'|'limit'|'connect-failed: ...')."""
    deadline = time.time() + timeout
    out = bytearray()
    view = memoryview(payload)
    sel = selectors.DefaultSelector()
    try:
        s = connect(target, timeout)
    except (ConnectionRefusedError, FileNotFoundError) as e:
        return bytes(out), f"connect-failed: {e}"
    try:
        s.setblocking(False)
        sending = True
        if not len(view) and half_close:
            s.shutdown(socket.SHUT_WR)
            sending = False
        sel.register(s, selectors.EVENT_READ | (selectors.EVENT_WRITE if sending else 0))
        while True:
            left = deadline - time.time()
            if left <= 0:
                return bytes(out), "timeout"
            for _, events in sel.select(left):
                if events & selectors.EVENT_WRITE and sending:
                    try:
                        n = s.send(view[:65536])
                        view = view[n:]
                    except BlockingIOError:
                        pass
                    except (BrokenPipeError, ConnectionResetError):
                        view = view[len(view):]  # the server hung up; read what it said
                    if not len(view):
                        sending = False
                        if half_close:
                            try:
                                s.shutdown(socket.SHUT_WR)
                            except OSError:
                                pass
                        sel.modify(s, selectors.EVENT_READ)
                if events & selectors.EVENT_READ:
                    try:
                        chunk = s.recv(65536)
                    except BlockingIOError:
                        continue
                    except ConnectionResetError:
                        return bytes(out), "reset"
                    if not chunk:
                        return bytes(out), "closed"
                    out += chunk
                    if len(out) >= max_bytes:
                        return bytes(out), "limit"
                    if not half_close and response_complete(out, head_request):
                        return bytes(out), "complete"
    finally:
        sel.close()
        s.close()


def _head(buf):
    """(status code or None, lower-case headers, offset of the body) of a response head in
    `buf`, or None while the head is incomplete."""
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        return None
    lines = bytes(buf[:end]).decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    code = int(parts[1]) if len(parts) >= 2 and parts[0].startswith("HTTP/") and parts[1].isdigit() else None
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return code, headers, end + 4


def response_complete(buf, head_request=False):
    """True when `buf` holds one whole HTTP response with a Content-Length (or none needed)."""
    head = _head(buf)
    if head is None:
        return False
    if head_request:
        return True
    code, headers, start = head
    if "chunked" in headers.get("transfer-encoding", "").lower():
        return buf.endswith(b"0\r\n\r\n")
    if code in (204, 304):
        return True
    try:
        return len(buf) >= start + int(headers["content-length"])
    except (KeyError, ValueError):
        return False


def parse_response(buf):
    """(status, lower-case headers, body) of the first response in `buf`, or None if there is none."""
    head = _head(buf)
    if head is None or head[0] is None:
        return None
    code, headers, start = head
    body = bytes(buf[start:])
    if "content-length" in headers:
        try:
            body = body[:int(headers["content-length"])]
        except ValueError:
            pass
    elif "chunked" in headers.get("transfer-encoding", "").lower():
        decoder = Dechunker()
        body = b"".join(decoder.feed(body))
    return code, headers, body


# ---------------------------------------------------------------- the multipart stream

class Dechunker:
    """Undoes chunked transfer coding incrementally: feed() returns the payload pieces."""

    def __init__(self):
        self.line = bytearray()   # a chunk-size line being read
        self.left = 0             # payload bytes left in the current chunk
        self.crlf = 0             # CRLF bytes left after the current chunk
        self.ended = False        # the last chunk arrived
        self.bad = None

    def feed(self, data):
        mv, out = memoryview(data), []
        while len(mv) and not self.ended:
            if self.crlf:
                n = min(self.crlf, len(mv))
                self.crlf -= n
                mv = mv[n:]
            elif self.left:
                n = min(self.left, len(mv))
                out.append(mv[:n])
                self.left -= n
                mv = mv[n:]
                if self.left == 0:
                    self.crlf = 2
            else:
                i = bytes(mv[:64]).find(b"\n")
                if i < 0:
                    self.line += mv
                    mv = mv[len(mv):]
                    if len(self.line) > 64:
                        self.bad, self.ended = "chunk-size line too long", True
                    continue
                self.line += mv[:i + 1]
                mv = mv[i + 1:]
                line = bytes(self.line).strip()
                self.line = bytearray()
                try:
                    self.left = int(line.split(b";")[0], 16)
                except ValueError:
                    self.bad, self.ended = f"bad chunk-size line {line[:20]!r}", True
                    continue
                self.ended = self.left == 0
        return out


class MultipartStream:
    """The one parser of multipart/x-mixed-replace streams (camd's /stream, and µStreamer's
    for the benchmark): feed it the bytes of the HTTP response as they arrive. It reads the
    response head, undoes chunked transfer coding, and cuts parts by their Content-Length.

    By default bodies are skipped without being buffered (load and soak clients read
    for hours); `keep_bodies=True` keeps (headers, body, arrival time) of each part in
    `parts`. `on_part(headers, body or None)` is called as each part completes. Part
    headers are dicts with lower-case names. It counts frames, X-Frame-Sequence gaps,
    repeats and restarts, and sets `bad` to what was malformed, if anything."""

    def __init__(self, keep_bodies=False, on_part=None):
        self.keep_bodies = keep_bodies
        self.on_part = on_part
        self.head = bytearray()        # the HTTP response head, until complete
        self.headers_done = False
        self.http_status = None
        self.content_type = ""
        self.boundary = None           # from Content-Type; None: any "--" line
        self.dechunker = None          # set when the response is chunked
        self.buf = bytearray()         # part headers being read
        self.part_headers = None       # the headers of the part whose body is being read
        self.body = None               # the body being kept
        self.body_left = 0             # body bytes still to come
        self.crlf_left = 0             # CRLF after the body still to come
        self.parts = []                # (headers, body, arrival time) with keep_bodies
        self.frames = 0
        self.bytes = 0
        self.sequence_gaps = 0
        self.sequence_resets = 0
        self.duplicates = 0
        self.last_sequence = None
        self.last_capture_time = None
        self.bad = None

    @property
    def ended(self):
        """The response's last chunk arrived."""
        return self.dechunker is not None and self.dechunker.ended

    @property
    def in_frame(self):
        """Inside a part's body: a client hanging up now hangs up mid-frame."""
        return self.body_left > 0 or self.crlf_left > 0

    @property
    def left_in_frame(self):
        """Bytes of the current part's body (and the CRLF after it) still to come."""
        return self.body_left + self.crlf_left

    def feed(self, data):
        """Returns how many part headers were seen in `data`."""
        self.bytes += len(data)
        before = self.frames
        if not self.headers_done:
            self.head += data
            head = _head(self.head)
            if head is None:
                if len(self.head) > 65536:
                    self.bad = "no response head within 64 KiB"
                return 0
            code, headers, start = head
            self.http_status = code if code is not None else -1
            if self.http_status != 200:
                self.bad = f"HTTP {self.http_status}"
            self.content_type = headers.get("content-type", "")
            if "boundary=" in self.content_type:
                self.boundary = self.content_type.split("boundary=", 1)[1].split(";")[0].strip().strip('"')
            if "chunked" in headers.get("transfer-encoding", "").lower():
                self.dechunker = Dechunker()
            data = bytes(self.head[start:])
            self.head = bytearray()
            self.headers_done = True
        if self.dechunker is None:
            self._payload(memoryview(data))
        else:
            for piece in self.dechunker.feed(data):
                self._payload(piece)
            self.bad = self.bad or self.dechunker.bad
        return self.frames - before

    def _payload(self, mv):
        while len(mv):
            if self.body_left:
                n = min(self.body_left, len(mv))
                if self.body is not None:
                    self.body += mv[:n]
                self.body_left -= n
                mv = mv[n:]
                if self.body_left == 0:
                    self._part_done()
                continue
            if self.crlf_left:
                n = min(self.crlf_left, len(mv))
                self.crlf_left -= n
                mv = mv[n:]
                continue
            self.buf += mv
            mv = memoryview(b"")
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                if len(self.buf) > 65536:
                    self.bad = "no part header end within 64 KiB"
                    self.buf.clear()
                return
            head = bytes(self.buf[:end]).decode("latin-1")
            rest = bytes(self.buf[end + 4:])
            self.buf.clear()
            lines = [line for line in head.split("\r\n") if line != ""]
            wanted = f"--{self.boundary}" if self.boundary else None
            if not lines or not (lines[0] == wanted if wanted else lines[0].startswith("--")):
                self.bad = f"expected the boundary, got {lines[:1]!r}"
                return
            headers = {}
            for line in lines[1:]:
                key, _, value = line.partition(":")
                headers[key.strip().lower()] = value.strip()
            try:
                length = int(headers["content-length"])
            except (KeyError, ValueError):
                self.bad = "part without Content-Length"
                return
            self._count(headers)
            self.part_headers = headers
            self.body = bytearray() if self.keep_bodies else None
            self.body_left = length
            if length == 0:
                self._part_done()
            mv = memoryview(rest)

    def _count(self, headers):
        try:
            seq = int(headers.get("x-frame-sequence", "0"))
        except ValueError:
            seq = 0
        if self.last_sequence is not None and seq > self.last_sequence + 1:
            self.sequence_gaps += seq - self.last_sequence - 1
        if self.last_sequence is not None and seq <= self.last_sequence:
            # camd restarts the sequence when the camera restarts (a configure); a repeat is a duplicate frame
            if seq == self.last_sequence:
                self.duplicates += 1
            else:
                self.sequence_resets += 1
        self.last_sequence = seq
        try:
            self.last_capture_time = float(headers.get("x-capture-time", "nan"))
        except ValueError:
            pass
        self.frames += 1

    def _part_done(self):
        self.crlf_left = 2  # the CRLF after the body
        body = bytes(self.body) if self.body is not None else None
        if self.keep_bodies:
            self.parts.append((self.part_headers, body, time.time()))
        if self.on_part:
            self.on_part(self.part_headers, body)
        self.body = None


def read_stream(target, path, seconds=30, count=None, keep_bodies=True):
    """Reads a multipart stream at `path` for up to `seconds` or `count` whole parts:
    (HTTP status, Content-Type, [(headers, body, arrival time)])."""
    parser = MultipartStream(keep_bodies=keep_bodies)
    t0 = time.time()
    s = connect(target, 30)
    try:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: camd\r\n\r\n".encode())
        s.settimeout(1)
        while time.time() - t0 < seconds and (count is None or len(parser.parts) < count) and not parser.ended:
            try:
                data = s.recv(65536)
            except socket.timeout:
                continue
            if not data:
                break
            parser.feed(data)
    finally:
        s.close()
    parts = parser.parts[:count] if count else parser.parts
    return parser.http_status, parser.content_type, parts


# ---------------------------------------------------------------- a camd of our own

def default_camd():
    """The camd binary: $CAMD, else the repo's release build, else its debug build."""
    if os.environ.get("CAMD"):
        return os.environ["CAMD"]
    for flavour in ("release", "debug"):
        path = os.path.join(REPO, ".build", flavour, "camd")
        if os.path.exists(path):
            return path
    return "camd"


def describe_binary(path):
    try:
        st = os.stat(path)
        return f"{path} ({st.st_size // 1024} KiB, built {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(st.st_mtime))})"
    except OSError:
        return path


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


def start_camd(camd, config, photos, log_path, extra_env=None, args=()):
    """Starts camd with `config` (a process of ours; stdout and stderr appended to `log_path`)."""
    env = dict(os.environ)
    env.update(extra_env or {})
    log = open(log_path, "a")
    return subprocess.Popen([camd, "--config", config, "--photos", photos, *args], env=env,
                            stdout=log, stderr=log, stdin=subprocess.DEVNULL)


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


class Camd:
    """A camd process of our own, by default on the synthetic source, in a scratch folder.

    stderr (the log) goes to `<workdir>/camd.log`; the socket and photo folder
    are inside `workdir` too.
    """

    def __init__(self, binary=None, workdir=None, size="1280x720", fps=30, camera_id="synth",
                 extra_camera="", log_level="info", wrapper=None, device="testsrc", extra_daemon=""):
        self.binary = binary or default_camd()
        if os.sep in self.binary:
            self.binary = os.path.abspath(self.binary)
        self.wrapper = list(wrapper or [])  # e.g. ["strace", "-f", "-o", "x", "--"]
        self.workdir = workdir or tempfile.mkdtemp(prefix="camd-stress-")
        os.makedirs(self.workdir, exist_ok=True)
        self.sock = os.path.join(self.workdir, "camd.sock")
        self.photos = os.path.join(self.workdir, "photos")
        self.log_path = os.path.join(self.workdir, "camd.log")
        self.config = os.path.join(self.workdir, "camd.toml")
        self.camera = camera_id
        write_config(self.config,
                     f'[daemon]\nsocket = "{self.sock}"\nsocket_group = ""\nphoto_folder = "{self.photos}"\n'
                     f'log_level = "{log_level}"\n{extra_daemon}\n'
                     f'[[camera]]\nid = "{camera_id}"\ndevice = "{device}"\nsize = "{size}"\nfps = {fps}\n{extra_camera}\n')
        self.proc = None
        self.log = None
        self._pid = None

    def start(self, timeout=30):
        """Starts camd and waits until its camera runs and has captured a few frames."""
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(self.wrapper + [self.binary, "--config", self.config], stdout=self.log,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=self.workdir)
        self._pid = None
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"camd exited with {self.proc.returncode} at start; log: {self.log_path}\n{self.tail()}")
            try:
                st = camera_status(self.sock, self.camera, timeout=2)
                if st.get("state") == "running" and st.get("frames_captured", 0) > 5:
                    return self
            except Exception:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"camd did not come up within {timeout} s; log: {self.log_path}\n{self.tail()}")

    @property
    def pid(self):
        """camd's pid (with a wrapper such as strace, the wrapper's child that runs camd)."""
        if not self.wrapper:
            return self.proc.pid
        if self._pid is None:
            try:  # a wrapper that execs (prlimit, setpriv) keeps the pid
                if os.path.realpath(f"/proc/{self.proc.pid}/exe") == os.path.realpath(self.binary):
                    self._pid = self.proc.pid
            except OSError:
                pass
        deadline = time.time() + 10
        while self._pid is None and time.time() < deadline:
            for task in os.listdir(f"/proc/{self.proc.pid}/task"):
                try:
                    with open(f"/proc/{self.proc.pid}/task/{task}/children") as f:
                        kids = f.read().split()
                except OSError:
                    kids = []
                for kid in kids:
                    try:
                        if os.path.realpath(f"/proc/{kid}/exe") == os.path.realpath(self.binary):
                            self._pid = int(kid)
                    except OSError:
                        pass
            if self._pid is None:
                time.sleep(0.1)
        return self._pid

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def tail(self, lines=30):
        try:
            with open(self.log_path, "rb") as f:
                return b"\n".join(f.read().splitlines()[-lines:]).decode(errors="replace")
        except OSError:
            return ""

    def stop(self, timeout=15):
        """SIGTERM, then SIGKILL after `timeout`; returns (exit status, seconds taken)."""
        if not self.proc:
            return None, 0
        start = time.time()
        if self.proc.poll() is None:
            try:
                os.kill(self.pid, signal.SIGTERM)  # camd itself, not a wrapper around it
            except (OSError, TypeError):
                self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        if self.log:
            self.log.close()
        return self.proc.returncode, time.time() - start

    def cleanup(self):
        shutil.rmtree(self.workdir, ignore_errors=True)


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


# ---------------------------------------------------------------- /proc

def proc_stats(pid):
    """RSS and its peak (KiB), threads, open fds and CPU seconds of a process; None if it is gone."""
    try:
        fields = {}
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                name, _, value = line.partition(":")
                fields[name] = value.strip()
        fds = len(os.listdir(f"/proc/{pid}/fd"))
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read().rsplit(")", 1)[1].split()  # after "pid (comm)": state is field 3
    except (OSError, ValueError):
        return None

    def kib(key):
        return int(fields.get(key, "0 kB").split()[0])

    cpu = (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime
    return {"rss_kib": kib("VmRSS"), "hwm_kib": kib("VmHWM"), "threads": int(fields.get("Threads", "0")), "fds": fds,
            "anon_kib": kib("RssAnon"), "file_kib": kib("RssFile"), "cpu_seconds": cpu}


def smaps(pid):
    """Each mapping of a process, from /proc/PID/smaps in address order: dicts of `name` (its
    file, "[heap]", "[stack]", or "[anonymous]"), `perms`, `size_kib`, and of it `rss_kib`,
    `anon_kib` and `huge_kib` (anonymous memory in transparent huge pages). The one reader of
    smaps for the benchmarks and soaks."""
    mappings = []
    keys = {"Rss:": "rss_kib", "Anonymous:": "anon_kib", "AnonHugePages:": "huge_kib"}
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            fields = line.split()
            if "-" in fields[0] and len(fields) >= 5 and ":" in fields[3]:
                start, end = (int(x, 16) for x in fields[0].split("-"))
                mappings.append({"name": fields[5] if len(fields) > 5 else "[anonymous]", "perms": fields[1],
                                 "size_kib": (end - start) // 1024, "rss_kib": 0, "anon_kib": 0, "huge_kib": 0})
            elif fields[0] in keys and mappings:
                mappings[-1][keys[fields[0]]] = int(fields[1])
    return mappings


def without_devices(mappings):
    """(resident KiB without mappings of device files, resident KiB of those) of `smaps`'s
    mappings. A V4L2 driver's buffers are such mappings, and kernel 6.1 counts them in VmRSS in
    some runs and not in others (a daemon's whole 2.4 MiB of them, or none); smaps always does,
    so what is left without them is the daemon's own memory, the same either way."""
    devices = sum(m["rss_kib"] for m in mappings if m["name"].startswith("/dev/"))
    return sum(m["rss_kib"] for m in mappings) - devices, devices


def resident_without_devices(pid):
    """`without_devices` of a process, from its smaps; None if the process is gone."""
    try:
        return without_devices(smaps(pid))
    except OSError:
        return None


def fd_targets(pid):
    """What each open fd of a process points at, for showing a leak."""
    out = {}
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                out[int(fd)] = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                pass
    except OSError:
        pass
    return out


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


def mib(kib):
    return f"{kib / 1024:.1f} MiB"


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------- command line

def main(argv):
    """Small commands for shell scripts, so they need no Python of their own:
    `request TARGET METHOD PATH` prints the status code (or the errno name when connecting
    fails, e.g. EACCES); `free-port` prints a free TCP port."""
    if argv[:1] == ["free-port"]:
        print(free_port())
        return 0
    if argv[:1] == ["request"] and len(argv) == 4:
        _, target, method, path = argv
        try:
            code, _, _ = call(target, method, path, timeout=30)
        except OSError as error:
            import errno
            print(errno.errorcode.get(error.errno, str(error)))
            return 1
        print(code)
        return 0
    print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
    return 64


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
