#!/usr/bin/python3
# A stand-in for camd, for developing scripts/test-systemd before the real
# daemon exists (scripts/test-systemd --stand-in). It keeps camd's contract
# with systemd: takes the socket from LISTEN_FDS, sends READY=1 and STATUS=
# after a short start-up, pings WATCHDOG=1 every WatchdogSec/2, logs with <N>
# prefixes, exits 0 on SIGTERM. Its API is the smallest part of camd's:
# GET /v1/status and GET /v1/cameras/<id>/snapshot, which opens the device
# read-write (so device policy and group are exercised) and answers a fixed
# JPEG, not a captured frame.
import base64, glob, json, os, signal, socket, sys, threading, time

JPEG = base64.b64decode(
    "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDABALDA4MChAODQ4SERATGCgaGBYWGDEjJR0oOjM9PDkzODdASFxOQERXRTc4UG1RV19iZ2hnPk1xeXBkeFxl"
    "Z2P/2wBDARESEhgVGC8aGi9jQjhCY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2P/wAARCAAIAAgDASIAAhEB"
    "AxEB/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAECAwQFBgcICQoL/8QAtRAAAgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS"
    "0fAkM2JyggkKFhcYGRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKjpKWmp6ipqrKz"
    "tLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/8QAHwEAAwEBAQEBAQEBAQAAAAAAAAECAwQFBgcICQoL/8QAtREAAgEC"
    "BAQDBAcFBAQAAQJ3AAECAxEEBSExBhJBUQdhcRMiMoEIFEKRobHBCSMzUvAVYnLRChYkNOEl8RcYGRomJygpKjU2Nzg5OkNERUZHSElKU1RVVldYWVpj"
    "ZGVmZ2hpanN0dXZ3eHl6goOEhYaHiImKkpOUlZaXmJmaoqOkpaanqKmqsrO0tba3uLm6wsPExcbHyMnK0tPU1dbX2Nna4uPk5ebn6Onq8vP09fb3+Pn6"
    "/9oADAMBAAIRAxEAPwCnRRRX1B84f//Z")


def log(level, text):
    sys.stderr.write("<%d>camd-standin: %s\n" % (level, text))
    sys.stderr.flush()


def notify(message):
    path = os.environ.get("NOTIFY_SOCKET")
    if not path:
        return
    if path.startswith("@"):
        path = "\0" + path[1:]
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        s.sendto(message.encode(), path)
    finally:
        s.close()


def cameras():
    found = []
    for node in sorted(glob.glob("/sys/class/video4linux/video*")):
        name = open(node + "/name").read().strip()
        found.append({"id": os.path.basename(node), "device": "/dev/" + os.path.basename(node), "name": name})
    return found


def respond(conn, status, body, ctype="application/json"):
    head = "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % (status, ctype, len(body))
    conn.sendall(head.encode() + body)


def serve(conn):
    try:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(4096)
            if not chunk:
                return
            data += chunk
        method, path = data.split(b"\r\n", 1)[0].decode().split(" ")[:2]
        if method == "GET" and path == "/v1/status":
            body = {"version": "standin", "pid": os.getpid(), "cameras": cameras()}
            respond(conn, "200 OK", json.dumps(body).encode())
        elif method == "GET" and path.startswith("/v1/cameras/") and path.endswith("/snapshot"):
            cid = path.split("/")[3]
            try:
                fd = os.open("/dev/" + cid, os.O_RDWR)
                os.close(fd)
            except OSError as e:
                log(3, "cannot open /dev/%s: %s" % (cid, e))
                respond(conn, "503 Service Unavailable", json.dumps({"error": str(e)}).encode())
                return
            respond(conn, "200 OK", JPEG, "image/jpeg")
        else:
            respond(conn, "404 Not Found", b'{"error":"not found"}')
    except Exception as e:
        log(3, "request failed: %s" % e)
    finally:
        conn.close()


def main():
    if os.environ.get("LISTEN_PID") == str(os.getpid()) and int(os.environ.get("LISTEN_FDS", "0")) >= 1:
        server = socket.socket(fileno=3)
        log(6, "using the socket systemd passed")
    else:
        log(3, "no socket passed (LISTEN_FDS); the stand-in only runs socket-activated")
        return 75
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    time.sleep(1.5)  # like camd opening its cameras: READY=1 comes later than exec
    notify("READY=1\nSTATUS=%d camera(s)" % len(cameras()))
    log(5, "ready with %d camera(s)" % len(cameras()))
    usec = int(os.environ.get("WATCHDOG_USEC", "0"))
    if usec:
        def ping():
            while not stopping.wait(usec / 2e6):
                notify("WATCHDOG=1")
        threading.Thread(target=ping, daemon=True).start()
    # Like camd: a camera refused by the device policy (EPERM although the
    # file's group allows it) needs a restart, so exit 75 (EX_TEMPFAIL).
    def watch_devices():
        while not stopping.wait(0.5):
            if not os.path.exists("/dev/video0"):
                continue
            try:
                os.close(os.open("/dev/video0", os.O_RDWR))
            except PermissionError as e:
                if e.errno == 1:
                    log(3, "/dev/video0 refused by the device policy (EPERM); exiting 75 so systemd restarts camd")
                    os._exit(75)
            except OSError:
                pass
    threading.Thread(target=watch_devices, daemon=True).start()
    server.settimeout(0.5)
    while not stopping.is_set():
        try:
            conn, _ = server.accept()
        except (socket.timeout, InterruptedError):
            continue
        threading.Thread(target=serve, args=(conn,), daemon=True).start()
    notify("STOPPING=1")
    log(6, "stopping")
    return 0


if __name__ == "__main__":
    sys.exit(main())
