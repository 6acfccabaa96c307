"""Shared helpers for camd's stress scripts (load.py, fuzz-http.py, soak.py).

Python standard library only. Everything talks to camd over its Unix socket;
nothing here opens a network connection.
"""
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


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


# ---------------------------------------------------------------- results

class Suite:
    """PASS/FAIL lines and the closing "N passed, N failed"."""

    def __init__(self):
        self.passed = self.failed = 0
        self.failures = []

    def check(self, name, ok, detail=""):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            self.failures.append(name)
        print(f"{'PASS' if ok else 'FAIL'}: {name}" + (f" ({detail})" if detail else ""), flush=True)
        return ok

    def finish(self):
        print(f"{self.passed} passed, {self.failed} failed", flush=True)
        return 1 if self.failed else 0


def table(rows, title=None):
    """Prints (name, value) rows as an aligned two-column table."""
    if title:
        print(f"\n== {title}")
    width = max((len(str(r[0])) for r in rows), default=0)
    for name, value in rows:
        print(f"  {str(name):<{width}}  {value}")
    sys.stdout.flush()


# ---------------------------------------------------------------- the daemon

class Camd:
    """A camd process of our own, with the synthetic source, in a scratch folder.

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
        with open(self.config, "w") as f:
            f.write(f'[daemon]\nsocket = "{self.sock}"\nsocket_group = ""\nphoto_folder = "{self.photos}"\n'
                    f'log_level = "{log_level}"\n{extra_daemon}\n'
                    f'[[camera]]\nid = "{camera_id}"\ndevice = "{device}"\nsize = "{size}"\nfps = {fps}\n{extra_camera}\n')
        self.proc = None
        self.log = None

    def start(self, timeout=30):
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
        if self._pid is None:
            deadline = time.time() + 10
            while time.time() < deadline and self._pid is None:
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


# ---------------------------------------------------------------- HTTP on the Unix socket

class UnixHTTP(http.client.HTTPConnection):
    def __init__(self, path, timeout=30):
        super().__init__("camd", timeout=timeout)
        self.unix_path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.unix_path)


def call(sock, method, path, body=None, timeout=30, headers=None):
    """One request: (status, headers dict with lower-case names, body bytes). Raises on errors and timeouts."""
    conn = UnixHTTP(sock, timeout)
    try:
        hdrs = dict(headers or {})
        data = None
        if body is not None:
            data = body if isinstance(body, (bytes, bytearray)) else json.dumps(body).encode()
            hdrs.setdefault("Content-Type", "application/json")
        conn.request(method, path, body=data, headers=hdrs)
        response = conn.getresponse()
        payload = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, payload
    finally:
        conn.close()


def status(sock, timeout=10):
    code, _, data = call(sock, "GET", "/v1/status", timeout=timeout)
    if code != 200:
        raise RuntimeError(f"/v1/status answered {code}")
    return json.loads(data)


def camera_status(sock, camera, timeout=10):
    for cam in status(sock, timeout)["cameras"]:
        if cam["id"] == camera:
            return cam
    raise KeyError(camera)


def camera_detail(sock, camera, timeout=10):
    code, _, data = call(sock, "GET", f"/v1/cameras/{camera}", timeout=timeout)
    if code != 200:
        raise RuntimeError(f"GET /v1/cameras/{camera} answered {code}")
    return json.loads(data)


def raw_exchange(sock_path, payload, timeout=5.0, max_bytes=1 << 20, half_close=False, head_request=False):
    """Sends raw bytes while reading the answer (so a server that answers early and stops
    reading cannot block us), until the peer closes, `max_bytes`, or one whole response
    arrived (with `half_close`, until the peer closes: the write side is shut after sending).
    Returns (response bytes, 'closed'|'complete'|'timeout'|'reset'|'limit')."""
    import selectors
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    deadline = time.time() + timeout
    out = bytearray()
    view = memoryview(payload)
    sel = selectors.DefaultSelector()
    try:
        s.settimeout(timeout)
        s.connect(sock_path)
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
                        n = 0
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
    except (ConnectionRefusedError, FileNotFoundError) as e:
        return bytes(out), f"connect-failed: {e}"
    finally:
        sel.close()
        s.close()


def response_complete(buf, head_request=False):
    """True when `buf` holds one whole HTTP response with a Content-Length (or none needed)."""
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        return False
    if head_request:
        return True
    head = bytes(buf[:end]).decode("latin-1").split("\r\n")
    length = None
    for line in head[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            try:
                length = int(value.strip())
            except ValueError:
                return False
        if name.strip().lower() == "transfer-encoding" and "chunked" in value.lower():
            return buf.endswith(b"0\r\n\r\n")
    parts = head[0].split(" ")
    if len(parts) >= 2 and parts[1] in ("204", "304"):
        return True
    return length is not None and len(buf) >= end + 4 + length


def parse_response(buf):
    """(status, headers, body) of the first response in `buf`, or None if there is none."""
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        return None
    head = buf[:end].decode("latin-1").split("\r\n")
    parts = head[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/"):
        return None
    try:
        code = int(parts[1])
    except ValueError:
        return None
    headers = {}
    for line in head[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    body = buf[end + 4:]
    if "content-length" in headers:
        try:
            body = body[:int(headers["content-length"])]
        except ValueError:
            pass
    elif "chunked" in headers.get("transfer-encoding", "").lower():
        body = dechunk(body)
    return code, headers, body


def dechunk(data):
    out = bytearray()
    i = 0
    while True:
        j = data.find(b"\r\n", i)
        if j < 0:
            return bytes(out)
        try:
            n = int(data[i:j].split(b";")[0], 16)
        except ValueError:
            return bytes(out)
        if n == 0:
            return bytes(out)
        out += data[j + 2:j + 2 + n]
        i = j + 2 + n + 2


# ---------------------------------------------------------------- /proc

def proc_stats(pid):
    """RSS and its peak (KiB), threads and open fds of a process; None if it is gone."""
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
    kib = lambda k: int(fields.get(k, "0 kB").split()[0])
    cpu = (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime
    return {"rss_kib": kib("VmRSS"), "hwm_kib": kib("VmHWM"), "threads": int(fields.get("Threads", "0")), "fds": fds,
            "anon_kib": kib("RssAnon"), "file_kib": kib("RssFile"), "cpu_seconds": cpu}


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


# ---------------------------------------------------------------- MJPEG stream parsing

class StreamParser:
    """Incremental parser of camd's multipart MJPEG stream (HTTP/1.1, chunked) that
    skips JPEG bytes without buffering them. Feed it bytes; it counts parts,
    sequence gaps, and remembers the newest part's headers."""

    def __init__(self):
        self.head = bytearray()      # the HTTP response head, until complete
        self.headers_done = False
        self.http_status = None
        self.chunked = False
        self.chunk_line = bytearray()  # a chunk-size line being read
        self.chunk_left = 0            # payload bytes left in the current chunk
        self.chunk_crlf = 0            # CRLF bytes left after the current chunk
        self.ended = False             # the last chunk arrived
        self.buf = bytearray()         # multipart headers being read
        self.skip = 0                  # JPEG (+CRLF) bytes still to skip
        self.frames = 0
        self.bytes = 0
        self.sequence_gaps = 0
        self.sequence_resets = 0
        self.duplicates = 0
        self.last_sequence = None
        self.last_capture_time = None
        self.bad = None                # a description of malformed data, if any

    @property
    def in_frame(self):
        return self.skip > 0

    def feed(self, data):
        """Returns how many complete part headers were seen in `data`."""
        self.bytes += len(data)
        before = self.frames
        mv = memoryview(data)
        if not self.headers_done:
            self.head += mv
            end = self.head.find(b"\r\n\r\n")
            if end < 0:
                if len(self.head) > 65536:
                    self.bad = "no response head within 64 KiB"
                return 0
            lines = bytes(self.head[:end]).decode("latin-1").split("\r\n")
            first = lines[0].split(" ")
            self.http_status = int(first[1]) if len(first) > 1 and first[1].isdigit() else -1
            if self.http_status != 200:
                self.bad = f"HTTP {self.http_status}"
            self.chunked = any(l.lower().startswith("transfer-encoding:") and "chunked" in l.lower() for l in lines[1:])
            mv = memoryview(bytes(self.head[end + 4:]))
            self.head = bytearray()
            self.headers_done = True
        if not self.chunked:
            self._payload(mv)
            return self.frames - before
        while len(mv) and not self.ended:
            if self.chunk_crlf:
                n = min(self.chunk_crlf, len(mv))
                self.chunk_crlf -= n
                mv = mv[n:]
                continue
            if self.chunk_left:
                n = min(self.chunk_left, len(mv))
                self._payload(mv[:n])
                self.chunk_left -= n
                mv = mv[n:]
                if self.chunk_left == 0:
                    self.chunk_crlf = 2
                continue
            i = bytes(mv[:64]).find(b"\n")
            if i < 0:
                self.chunk_line += mv
                mv = mv[len(mv):]
                if len(self.chunk_line) > 64:
                    self.bad = "chunk-size line too long"
                    self.ended = True
                continue
            self.chunk_line += mv[:i + 1]
            mv = mv[i + 1:]
            line = bytes(self.chunk_line).strip()
            self.chunk_line = bytearray()
            try:
                size = int(line.split(b";")[0], 16)
            except ValueError:
                self.bad = f"bad chunk-size line {line[:20]!r}"
                self.ended = True
                continue
            if size == 0:
                self.ended = True
            self.chunk_left = size
        return self.frames - before

    def _payload(self, mv):
        while len(mv):
            if self.skip:
                n = min(self.skip, len(mv))
                self.skip -= n
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
            lines = [l for l in head.split("\r\n") if l != ""]
            if not lines or lines[0] != "--camdframe":
                self.bad = f"expected the boundary, got {lines[:1]!r}"
                return
            hdr = {}
            for line in lines[1:]:
                k, _, v = line.partition(":")
                hdr[k.strip().lower()] = v.strip()
            try:
                length = int(hdr["content-length"])
            except (KeyError, ValueError):
                self.bad = "part without Content-Length"
                return
            try:
                seq = int(hdr.get("x-frame-sequence", "0"))
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
                self.last_capture_time = float(hdr.get("x-capture-time", "nan"))
            except ValueError:
                pass
            self.frames += 1
            self.skip = length + 2  # the JPEG and the CRLF after it
            mv = memoryview(rest)


def stream_request(camera, fps=None):
    q = f"?fps={fps}" if fps else ""
    return f"GET /v1/cameras/{camera}/stream{q} HTTP/1.1\r\nHost: camd\r\n\r\n".encode()
