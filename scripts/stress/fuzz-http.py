#!/usr/bin/env python3
"""Bounded random fuzzer of camd's HTTP request parser and JSON bodies.

Starts its own camd (synthetic source, 320x240 by default so encoding costs
little) in a scratch folder, optionally under strace to record every file it
writes, and sends it generated inputs over its Unix socket:

  request lines    bad methods, versions, targets, line endings, random bytes
  headers          over the limits (field 8 KiB, all 32 KiB, 100 fields) and malformed
  framing          bad/duplicate Content-Length, chunked edge cases, truncated bodies
  configure        invalid JSON, non-objects, unknown fields, wrong types, out-of-range
                   values for every field of POST /v1/cameras/{id}/configure (mixed with
                   valid fields, so a partial apply would show)
  controls         PUT /v1/cameras/{id}/controls with bad bodies
  photo names      .., /, %00, %2F, hidden, long, symlinks to outside the photo folder
  queries          bad fps, max_age_ms, limit, since, until, camera
  routes           unknown endpoints and camera ids
  mutations        byte-level mutations of harmless seed requests

Each input has an expectation: "json4xx" (a 4xx with {"error":{"code","message"}}),
"reject" (a 4xx, or the connection closed, for unparseable requests), or "any"
(anything but a 5xx). Every input must be answered or closed within the
per-request timeout. After every batch, GET /v1/status must answer; a crash is
recorded with camd's log and camd is restarted. At the end: the camera's
settings must equal those before the run (every configure sent is invalid),
files outside the photo folder (canaries, symlink targets) must be untouched,
and with strace, no file may have been written outside the photo folder.

Failing inputs are saved under --out (failures.jsonl and one .bin each).

    scripts/stress/fuzz-http.py --seconds 120 --count 20000
    scripts/stress/fuzz-http.py --seed 7 --no-strace --camd .build/debug/camd
"""
import argparse
import base64
import hashlib
import json
import os
import random
import re
import shutil
import socket
import sys
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from camdclient import (Camd, Suite, call, camera_detail, default_camd, describe_binary, loadavg, mib,  # noqa: E402
                        parse_response, proc_stats, raw_exchange, status, table)

CAM = "synth"


class Input:
    __slots__ = ("category", "payload", "expect", "half_close", "note")

    def __init__(self, category, payload, expect, half_close=False, note=""):
        self.category = category
        self.payload = payload
        self.expect = expect
        self.half_close = half_close
        self.note = note


def req(method, target, headers=None, body=b"", version="HTTP/1.1", content_length=True):
    """A well-formed request, as bytes."""
    if isinstance(body, str):
        body = body.encode()
    lines = [f"{method} {target} {version}", "Host: camd"]
    for name, value in (headers or []):
        lines.append(f"{name}: {value}")
    if content_length and (body or method in ("POST", "PUT")):
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace") + body


def configure(body, camera=CAM):
    if not isinstance(body, (bytes, bytearray)):
        body = json.dumps(body).encode() if not isinstance(body, str) else body.encode("utf-8", "surrogatepass")
    return req("POST", f"/v1/cameras/{camera}/configure", [("Content-Type", "application/json")], body)


# ---------------------------------------------------------------- generators

class Generators:
    def __init__(self, rng, marker):
        self.r = rng
        self.marker = marker  # in every name we make up, so stray files can be found

    def pick(self, seq):
        return seq[self.r.randrange(len(seq))]

    def junk(self, n=None):
        n = n if n is not None else self.r.randint(1, 64)
        return bytes(self.r.randrange(256) for _ in range(n))

    # --- request lines
    def request_line(self):
        r = self.r
        kind = r.randrange(9)
        if kind == 0:
            m = self.pick(["FOO", "get", "Get", "G ET", "GETT", "\x00GET", "GET\x7f", "PO ST", "M" * r.randint(20, 5000), "", "\xffGET"])
            return Input("request-line", f"{m} /v1/status HTTP/1.1\r\nHost: camd\r\n\r\n".encode("latin-1"), "reject", note="bad method")
        if kind == 1:
            v = self.pick(["HTTP/1.2", "HTTP/2.0", "HTTP/3", "HTTP/0.9", "HTTP/1", "HTTPS/1.1", "HTTP/1.1x", "http/1.1",
                           "HTTP/11.1", "HTTP/-1.1", "HTTP/1.1 extra", "HTTP/1.\x001", ""])
            return Input("request-line", f"GET /v1/status {v}\r\nHost: camd\r\n\r\n".encode("latin-1"), "reject", note="bad version")
        if kind == 2:
            t = self.pick(["", "*", "v1/status", "/%", "/%zz", "/v1/\x00status", "/v1/sta tus", "/v1/\tstatus", "/\x7f",
                           "/v1/status\x00", "\\v1\\status", "/" + "a" * r.randint(9000, 70000), "//\x01\x02"])
            return Input("request-line", f"GET {t} HTTP/1.1\r\nHost: camd\r\n\r\n".encode("latin-1"), "reject", note="bad target")
        if kind == 3:
            # valid but odd targets: any answer but a 5xx
            t = self.pick(["http://camd/v1/status", "/v1/status#frag", "/v1/status?", "/v1/status?a=%zz", "/v1//status",
                           "/v1/./status", "/v1/../v1/status", "/V1/STATUS", "/v1/status/", "/v1/status;x",
                           "/" + "a/" * r.randint(100, 3000), "/v1/cameras/" + "%41" * r.randint(1, 2000)])
            return Input("request-line", f"GET {t} HTTP/1.1\r\nHost: camd\r\n\r\n".encode("latin-1"), "any", note="odd target")
        if kind == 4:
            ending = self.pick([b"\n", b"\r", b"\r\r\n", b"\n\r"])
            return Input("request-line", b"GET /v1/status HTTP/1.1" + ending + b"Host: camd" + ending + ending, "any",
                         half_close=True, note="odd line endings")
        if kind == 5:
            return Input("request-line", self.junk(r.randint(1, 4096)), "reject", half_close=True, note="random bytes")
        if kind == 6:
            # a request cut anywhere, then EOF
            full = req("GET", "/v1/status")
            return Input("request-line", full[:r.randrange(1, len(full) - 1)], "reject", half_close=True, note="truncated head")
        if kind == 7:
            m = self.pick(["OPTIONS", "TRACE", "PATCH", "HEAD", "CONNECT", "PROPFIND", "DELETE", "PUT", "POST"])
            t = self.pick(["/v1/status", "/v1/cameras", f"/v1/cameras/{CAM}", "/metrics", "/v1/devices", "/v1/photos"])
            return Input("request-line", req(m, t), "any" if m in ("HEAD", "CONNECT") else "json4xx", note="method not allowed")
        # leading empty lines, spaces
        pre = self.pick([b"\r\n", b"\r\n\r\n", b" ", b"\t"])
        return Input("request-line", pre + req("GET", "/v1/status"), "any", note="leading junk")

    # --- headers
    def headers(self):
        r = self.r
        kind = r.randrange(8)
        if kind == 0:
            n = self.pick([8 * 1024 + 64, 9000, 16 * 1024, 33 * 1024, 100 * 1024, 300 * 1024])
            return Input("headers", req("GET", "/v1/status", [("X-Big", "a" * n)]), "reject", note=f"one {n}-byte field")
        if kind == 1:
            n = self.pick([101, 102, 150, 1000, 5000])
            return Input("headers", req("GET", "/v1/status", [(f"X-{i}", "v") for i in range(n)]), "reject", note=f"{n} fields")
        if kind == 2:
            size = self.pick([40, 60, 99])
            return Input("headers", req("GET", "/v1/status", [(f"X-{i}", "b" * 1000) for i in range(size)]), "reject",
                         note=f"{size} KB of headers")
        if kind == 3:
            n = self.pick([1, 50, 98])
            return Input("headers", req("GET", "/v1/status", [(f"X-{i}", "c" * 100) for i in range(n)]), "any", note=f"{n} small fields (under the limits)")
        if kind == 4:
            bad = self.pick([b"NoColon", b": empty-name", b"Sp ace: x", b"Host : x", b" leading: ws", b"X-Nul: a\x00b",
                             b"X-CR: a\rb", b"X-\xff: x", b"X-Obs: a\r\n fold", b"X-Del\x7f: x", b"\x00: x",
                             b"X-Long-Name" + b"n" * 9000 + b": x"])
            head = b"GET /v1/status HTTP/1.1\r\nHost: camd\r\n" + bad + b"\r\n\r\n"
            return Input("headers", head, "any", note="malformed field")
        if kind == 5:
            h = self.pick([[("Host", "a"), ("Host", "b")], [], [("Connection", "upgrade"), ("Upgrade", "h2c")],
                           [("Connection", "close, close, keep-alive")], [("Expect", "100-continue")], [("Expect", "bogus")],
                           [("Content-Type", "text/plain")], [("Authorization", "Bearer " + "x" * 5000)],
                           [("Accept-Encoding", "gzip, br, " * 100)], [("Range", "bytes=0-1")]])
            data = req("GET", "/v1/status", h)
            if not any(k == "Host" for k, _ in h):
                data = data.replace(b"Host: camd\r\n", b"")
            return Input("headers", data, "any", note="odd but legal fields")
        if kind == 6:
            # a field that never ends, then EOF
            return Input("headers", b"GET /v1/status HTTP/1.1\r\nX: " + b"a" * r.randint(1, 20000), "reject", half_close=True,
                         note="unterminated field")
        # Many requests pipelined on one connection, the last one bad
        n = r.randint(2, 50)
        data = req("GET", "/v1/status") * n + b"BAD\r\n\r\n"
        return Input("headers", data, "any", half_close=True, note=f"{n} pipelined, then garbage")

    # --- framing
    def framing(self):
        r = self.r
        body = json.dumps({"quality": 0}).encode()  # invalid: must never change anything
        path = f"/v1/cameras/{CAM}/configure"
        kind = r.randrange(12)
        if kind == 0:
            cl = self.pick(["-1", "abc", "1e3", "0x10", " ", "", "99999999999999999999999", "18446744073709551616", "+5", "5 5"])
            return Input("framing", f"POST {path} HTTP/1.1\r\nHost: camd\r\nContent-Length: {cl}\r\n\r\n".encode() + body,
                         "reject", half_close=True, note=f"Content-Length {cl!r}")
        if kind == 1:
            return Input("framing", f"POST {path} HTTP/1.1\r\nHost: camd\r\nContent-Length: {len(body)}\r\nContent-Length: {len(body) + 5}\r\n\r\n".encode() + body,
                         "reject", half_close=True, note="two different Content-Lengths")
        if kind == 2:
            chunked = f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n"
            return Input("framing", f"POST {path} HTTP/1.1\r\nHost: camd\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n".encode() + chunked,
                         "reject", half_close=True, note="Content-Length and chunked")
        if kind == 3:
            size = self.pick(["zz", "-1", "ffffffffffffffffff", "FFFFFFFFFFFFFFFF", "7fffffffffffffff", "1;ext=" + "e" * 9000, "", " 5"])
            return Input("framing", f"POST {path} HTTP/1.1\r\nHost: camd\r\nTransfer-Encoding: chunked\r\n\r\n{size}\r\n".encode() + body + b"\r\n0\r\n\r\n",
                         "reject", half_close=True, note=f"chunk size {size[:20]!r}")
        if kind == 4:
            te = self.pick(["gzip", "chunked, gzip", "identity", "chunkedx", "x, chunked, y", "CHUNKED"])
            return Input("framing", f"POST {path} HTTP/1.1\r\nHost: camd\r\nTransfer-Encoding: {te}\r\n\r\n".encode() + body,
                         "reject", half_close=True, note=f"Transfer-Encoding {te}")
        if kind == 5:
            # promise more than is sent, then EOF
            return Input("framing", f"POST {path} HTTP/1.1\r\nHost: camd\r\nContent-Length: {len(body) + r.randint(1, 100000)}\r\n\r\n".encode() + body,
                         "reject", half_close=True, note="body shorter than Content-Length")
        if kind == 6:
            n = self.pick([64 * 1024 + 1, 65 * 1024, 200 * 1024, 1024 * 1024])
            big = b'{"quality": 0, "pad": "' + b"x" * (n - 25) + b'"}'
            return Input("framing", req("POST", path, [("Content-Type", "application/json")], big), "json4xx", note=f"{len(big)}-byte JSON body")
        if kind == 7:
            n = self.pick([64 * 1024 + 1, 300 * 1024])
            payload = b'{"quality": 0, "pad": "' + b"y" * n + b'"}'
            chunks = b"".join(f"{len(payload[i:i + 4000]):x}\r\n".encode() + payload[i:i + 4000] + b"\r\n" for i in range(0, len(payload), 4000))
            return Input("framing", f"POST {path} HTTP/1.1\r\nHost: camd\r\nTransfer-Encoding: chunked\r\n\r\n".encode() + chunks + b"0\r\n\r\n",
                         "json4xx", note=f"chunked body of {len(payload)} bytes")
        if kind == 8:
            # huge Content-Length with a small body and EOF
            cl = self.pick([10 ** 9, 2 ** 31, 2 ** 63 - 1])
            return Input("framing", f"POST {path} HTTP/1.1\r\nHost: camd\r\nContent-Length: {cl}\r\n\r\n".encode() + body,
                         "reject", half_close=True, note=f"Content-Length {cl}")
        if kind == 9:
            return Input("framing", req("GET", "/v1/status", body=b"x" * r.randint(1, 70000)), "any", note="GET with a body")
        if kind == 10:
            return Input("framing", f"POST {path} HTTP/1.1\r\nHost: camd\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{{\"qu\r\n".encode(),
                         "reject", half_close=True, note="chunked body cut off")
        # chunked, valid framing, invalid content
        chunked = f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\nX-Trailer: y\r\n\r\n"
        return Input("framing", f"POST {path} HTTP/1.1\r\nHost: camd\r\nTransfer-Encoding: chunked\r\n\r\n".encode() + chunked,
                     "json4xx", note="chunked with a trailer")

    # --- configure bodies: always invalid
    def valid_noise(self):
        """Valid configure fields that would change the settings if applied."""
        r = self.r
        options = [("quality", r.randint(1, 100)), ("fps", self.pick([5, 10, 15, 29.97])), ("size", self.pick(["160x120", "640x480"])),
                   ("autostart", self.pick([True, False])), ("idle_stop", r.randint(1, 86400)), ("format", "YUYV"),
                   ("controls", {"brightness": r.randint(0, 255)}),
                   ("photos", {"interval": r.choice([1, 60]), "keep_count": r.randint(1, 9)})]
        return dict(r.sample(options, r.randint(0, 3)))

    def invalid_field(self):
        r = self.r
        big = self.pick([1e15, 1e16, 1e300, -1e300, 2 ** 63, -(2 ** 63) - 1, 10 ** 30])
        # Counts and byte sizes: 1e16 is a whole number JSON may write, so only what no 64-bit integer holds.
        too_big = self.pick([1e300, -1e300, 2 ** 63, -(2 ** 63) - 1, 10 ** 30])
        wrong = [1, 1.5, True, False, [], {}, [1, 2], {"a": 1}, "", "x"]
        table = {
            "device": [1, 1.5, True, [], {}, ["/dev/video0"], {"path": "/dev/video0"}],
            # (a FourCC of 1 to 4 characters is well-formed even if no camera offers it: see the format probe)
            "format": [1, True, [], {}, "", "TOOLONG", "\u00e9\u00e9\u00e9\u00e9", "Y U V", "MJPEGX", "YUYV2"],
            "size": [1280, True, [], {}, ["1280", "720"], "", "x", "1280", "1280x", "x720", "0x0", "0x720", "1280x0", "-1280x720",
                     "1280x-720", "16385x720", "1280x16385", "99999999999999999999x1", "1280x720x3", "axb", "1280.5x720",
                     "1280 x 720", "\u0661\u0662x\u0661\u0662", "1e3x720"],
            "fps": ["30", True, [], {}, 0, -1, -0.0, 1000.5, 1001, 1e308, -1e-300, big],
            "quality": ["90", True, [], {}, 0, 101, -1, 50.5, 1e-9, 1000, big],
            "controls": [1, "x", True, [], [["brightness", 1]], {"brightness": {}}, {"brightness": []}, {"brightness": None},
                         {"b": [1]}, {"": {}}],
            "autostart": [1, 0, "true", "yes", [], {}],
            # durations: seconds or "90s"-style text, at most 100 years (docs/configuration.md, "Kinds of values")
            "idle_stop": ["soon", "30 s", "-5s", "1e136", True, [], {}, -1, 1e308, 4e9, -0.5],
            "photos": [1, "x", True, [], [1], {"intervl": 1}, {"interval": "10x"}, {"interval": 0}, {"interval": 0.05},
                       {"interval": -1}, {"interval": 4e9}, {"interval": True}, {"interval": []},
                       {"name": 1}, {"name": "x.png"}, {"name": "../x.jpg"}, {"name": "a/b.jpg"}, {"name": ".hidden.jpg"},
                       {"name": ""}, {"name": "/etc/x.jpg"}, {"name": ".jpg"}, {"name": "x.jpg/"}, {"name": "x.JPG"},
                       {"name": []}, {"keep_count": 0}, {"keep_count": -1}, {"keep_count": 1.5}, {"keep_count": "5"},
                       {"keep_count": True}, {"keep_count": too_big}, {"keep_bytes": 0}, {"keep_bytes": -5}, {"keep_bytes": "2X"},
                       {"keep_bytes": 1.5}, {"keep_bytes": too_big}, {"keep_age": 0}, {"keep_age": "0s"}, {"keep_age": -1},
                       {"keep_age": "7 days"}, {"keep_age": []}, {"unknown": 1}, {"interval": 10, "name": "ok.jpg", "x": 1}],
        }
        field = self.pick(list(table) + ["unknown"])
        if field == "unknown":
            key = self.pick(["qualty", "Quality", "QUALITY", "fsp", "", " ", "id", "photo", "settings", "quality ", "\u0000",
                             "size\u0000", "x" * r.randint(1, 5000), self.marker])
            return key, self.pick(wrong + [90])
        return field, self.pick(table[field])

    def configure(self):
        r = self.r
        kind = r.randrange(10)
        if kind <= 4:
            field, value = self.invalid_field()
            body = self.valid_noise()
            body.pop(field, None)
            items = list(body.items())
            items.insert(r.randint(0, len(items)), (field, value))
            text = "{" + ", ".join(json.dumps(k) + ": " + json.dumps(v) for k, v in items) + "}"
            return Input("configure", configure(text), "json4xx", note=f"{field}={json.dumps(value)[:60]}")
        if kind == 5:
            text = self.pick(["{", "}", "{'quality': 90}", "{quality: 90}", "{\"quality\": 90", "[",
                              "{\"quality\": NaN}", "{\"quality\": Infinity}", "{\"quality\": -Infinity}", "{\"quality\": 0x5A}",
                              "{\"quality\": 090}", "{\"quality\": .5}", "{\"quality\": 1.}", "{\"quality\": +1}",
                              "{\"a\":1}{\"b\":2}", "{\"quality\": 90} x", "nul", "tru", "\"unterminated", "{\"q\\u12\": 1}",
                              "{\"\\ud800\": 1}", "/* c */ {}", "{\"quality\": 1e400}", "{\"fps\": -1e400}",
                              "\u00ef\u00bb\u00bf{\"quality\": 0}", "{\"quality\"\u0000: 90}"])
            return Input("configure", configure(text), "json4xx", note=f"bad JSON {text[:40]!r}")
        if kind == 6:
            text = self.pick(["[]", "[{\"quality\": 90}]", "\"quality\"", "90", "true", "false", "null", "0", "-1", "1e999", "\"\""])
            return Input("configure", configure(text), "json4xx", note=f"not an object: {text}")
        if kind == 7:
            depth = self.pick([100, 513, 1000, 5000, 20000])
            opener, closer = self.pick([("[", "]"), ("{\"a\":", "}")])
            text = "{\"controls\": " + opener * depth + "1" + closer * depth + "}"
            if len(text) > 65536:
                text = opener * depth + "1" + closer * depth
            return Input("configure", configure(text), "json4xx", note=f"nesting {depth} deep")
        if kind == 8:
            raw = self.pick([b"\xff\xfe{\x00\"\x00q\x00\"\x00:\x000\x00}\x00", b"{\"quality\": \"\xff\xfe\"}", b"{\"device\": \"\xc0\xaf\"}",
                             '{"quality": 0}'.encode("utf-16"), '{"quality": 0}'.encode("utf-32"),
                             '{"quality": 0}'.encode("utf-16-be"), b"\x00" * 10, self.junk(r.randint(1, 2000)),
                             b"{\"size\": \"\xed\xa0\x80x1\"}"])
            return Input("configure", configure(raw), "json4xx", note="bad encoding")
        # duplicate keys, the last one bad; or a big object with one bad entry
        if r.random() < 0.5:
            field, value = self.invalid_field()
            good = self.valid_noise()
            text = "{" + ", ".join(json.dumps(k) + ": " + json.dumps(v) for k, v in good.items())
            text += (", " if good else "") + json.dumps(field) + ": " + json.dumps(value) + "}"
            return Input("configure", configure(text), "json4xx", note=f"{field} last")
        n = r.randint(100, 3000)
        controls = {f"c{i}": i for i in range(n)}
        controls[f"c{r.randrange(n)}"] = self.pick([{}, [], None])
        return Input("configure", configure({"controls": controls}), "json4xx", note=f"{n} controls, one bad")

    # --- PUT controls (the synthetic source has none, so nothing can ever be set)
    def controls(self):
        r = self.r
        path = f"/v1/cameras/{CAM}/controls"
        body = self.pick([b"", b"{}", b"[]", b"{", b"null", b"{\"brightness\": {}}", b"{\"brightness\": []}", b"{\"brightness\": null}",
                          b"{\"brightness\": 1}", b"{\"brightness\": \"max\"}", b"{\"brightness\": 1e400}",
                          ("{" + ", ".join(f'"c{i}": {i}' for i in range(r.randint(1, 3000))) + "}").encode(),
                          ("{\"" + "b" * r.randint(100, 60000) + "\": 1}").encode(), self.junk(r.randint(1, 500)),
                          b"{\"brightness\": 1, \"brightness\": {}}", b"{\"\": 1}", b"{\"\\u0000\": 1}"])
        return Input("controls", req("PUT", path, [("Content-Type", "application/json")], body), "json4xx", note=body[:40].decode("latin-1"))

    # --- photo names
    def photo_name(self):
        r = self.r
        names = ["..", ".", "...", "../x.jpg", "..%2Fx.jpg", "%2e%2e", "%2e%2e%2fcamd.toml", "%2E%2E%2F%2E%2E%2Fetc%2Fpasswd",
                 "..%2f..%2f..%2fetc%2fpasswd", "x.jpg%00", "%00", "%00.jpg", "a%00b.jpg", "x.jpg%2F", "%2Fetc%2Fpasswd",
                 ".hidden.jpg", ".camd-tmp-x.jpg", "x.JPG", "x.jpeg", "x.png", "x", "x.jpg.", "x.jpg ", " x.jpg",
                 "x" * 251 + ".jpg", "x" * 256 + ".jpg", "y" * 5000 + ".jpg", "%ff%fe.jpg", "\u00e9.jpg", "%C3%A9.jpg",
                 "link-out.jpg", "link-passwd.jpg", "link-dir.jpg", "hard-out.jpg", "fifo.jpg", "dir.jpg",
                 f"{self.marker}.jpg", "x%20y.jpg", "*.jpg", "?.jpg", "x;rm.jpg", "%252e%252e", "....//x.jpg",
                 "camd.toml", "..\\x.jpg", "x.jpg\\..\\..", "nonexistent-20260101-000000-000-000001.jpg"]
        name = urllib.parse.quote(self.pick(names), safe="%/\\;*")
        method = self.pick(["GET", "GET", "DELETE", "HEAD"])
        if "hard-out" in name:  # a hard link is a regular file; the probe reports how it is treated
            return Input("photo-name", f"GET /v1/photos/{name} HTTP/1.1\r\nHost: camd\r\n\r\n".encode(), "any", note="hard link")
        # Extra path segments after /photos/: routes must not match outside names.
        target = self.pick([f"/v1/photos/{name}", f"/v1/photos/{name}", f"/v1/photos/../{name}", f"/v1/photos/{CAM}/{name}",
                            f"/v1/photos//{name}", f"/v1/photos/{name}/"])
        return Input("photo-name", f"{method} {target} HTTP/1.1\r\nHost: camd\r\n\r\n".encode("utf-8"),
                     "any" if method == "HEAD" else "json4xx", note=f"{method} {target[:80]}")

    # --- queries
    def query(self):
        bad_fps = ["0", "-1", "1001", "nan", "NaN", "inf", "-inf", "", "abc", "1e400", "--1", "1,5", "\u0661", "30x",
                   "0.0", "-0", "1e-400", "%00", "1001.0"]
        kind = self.r.randrange(5)
        if kind == 0:
            v = self.pick(bad_fps)
            return Input("query", req("GET", f"/v1/cameras/{CAM}/stream?fps={v}"), "json4xx", note=f"stream fps={v!r}")
        if kind == 1:
            v = self.pick(["-1", "3600001", "nan", "inf", "x", "", "1e400", "-0.001"])
            return Input("query", req("GET", f"/v1/cameras/{CAM}/snapshot?max_age_ms={v}"), "json4xx", note=f"max_age_ms={v!r}")
        if kind == 2:
            v = self.pick(["0", "-1", "100001", "x", "1.5", "", "99999999999999999999999"])
            return Input("query", req("GET", f"/v1/photos?limit={v}"), "json4xx", note=f"limit={v!r}")
        if kind == 3:
            name = self.pick(["since", "until"])
            v = self.pick(["yesterday", "2026-13-01T00:00:00Z", "x", "2026-11-22", "1e", "--"])
            return Input("query", req("GET", f"/v1/photos?{name}={v}"), "json4xx", note=f"{name}={v!r}")
        v = self.pick(["../x", "a/b", "%2e%2e", "x" * 100, "%20", "a%00", "a.b", "%2F"])
        return Input("query", req("GET", f"/v1/photos?camera={v}"), "json4xx", note=f"camera={v!r}")

    # --- routes
    def route(self):
        r = self.r
        cam = self.pick([CAM, "nosuch", "", "..", "%2e%2e", "x" * r.randint(65, 5000), "\u00e9", "a b", CAM + "/..", "SYNTH"])
        tail = self.pick(["", "/", "/configure", "/start", "/stop", "/snapshot", "/controls", "/stream", "/nope", "/snapshot/x"])
        method = self.pick(["GET", "POST", "PUT", "DELETE", "PATCH"])
        cam = urllib.parse.quote(cam, safe="%/")
        target = f"/v1/cameras/{cam}{tail}"
        # Anything that could change or stream the real camera is left out (it is not invalid).
        if cam == CAM and (tail in ("", "/", "/start", "/stop", "/snapshot", "/controls", "/stream", "/configure")):
            cam = "nosuch"
            target = f"/v1/cameras/{cam}{tail}"
        if r.random() < 0.3:
            target = self.pick(["/", "/v2/status", "/v1", "/v1/", "/metrics/x", "/v1/status/x", "/v1/photos/a/b/c",
                                "/" + self.marker, "/.well-known/x", "/v1/devices/x"])
        body = b'{"quality": 0}' if method in ("POST", "PUT") else b""
        # an empty id collapses: /v1/cameras// is /v1/cameras, a valid listing
        expect = "any" if "/v1/cameras//" in target or target.endswith("/v1/cameras/") else "json4xx"
        if target == "/" and method == "GET":
            expect = "any"  # the web page
        return Input("route", req(method, target, body=body), expect, note=f"{method} {target[:80]}")

    # --- byte-level mutations of harmless seeds
    SEEDS = [b"GET /v1/status HTTP/1.1\r\nHost: camd\r\n\r\n",
             b"GET /v1/cameras HTTP/1.1\r\nHost: camd\r\nAccept: */*\r\n\r\n",
             b"GET /v1/cameras/synth HTTP/1.1\r\nHost: camd\r\n\r\n",
             b"GET /metrics HTTP/1.1\r\nHost: camd\r\n\r\n",
             b"GET /v1/photos?camera=synth&limit=5 HTTP/1.1\r\nHost: camd\r\n\r\n",
             b"PUT /v1/cameras/synth/controls HTTP/1.1\r\nHost: camd\r\nContent-Length: 17\r\n\r\n{\"brightness\": 1}",
             b"POST /v1/cameras/nosuch/configure HTTP/1.1\r\nHost: camd\r\nContent-Length: 14\r\n\r\n{\"quality\": 0}",
             b"POST /v1/cameras/synth/configure HTTP/1.1\r\nHost: camd\r\nContent-Type: application/json\r\nContent-Length: 31\r\n\r\n{\"quality\": 0, \"fps\": \"thirty\"}",
             b"POST /v1/cameras/synth/configure HTTP/1.1\r\nHost: camd\r\nTransfer-Encoding: chunked\r\n\r\ne\r\n{\"quality\": 0}\r\n0\r\n\r\n"]

    def mutation(self):
        r = self.r
        seed = self.pick(self.SEEDS)
        data = bytearray(seed)
        for _ in range(r.randint(1, 8)):
            op = r.randrange(7)
            if not data:
                data += self.junk(4)
            i = r.randrange(len(data))
            if op == 0:
                data[i] ^= 1 << r.randrange(8)
            elif op == 1:
                data[i] = r.randrange(256)
            elif op == 2:
                data[i:i] = self.junk(r.randint(1, 16))
            elif op == 3:
                del data[i:i + r.randint(1, 16)]
            elif op == 4:
                j = r.randrange(len(data))
                data[i:i] = data[j:j + r.randint(1, 64)]
            elif op == 5:
                data[i:i] = self.pick([b"\r\n", b"\r\n\r\n", b"\x00", b":", b" ", b"%", b"\"", b"{", b"}", b"9999999999"])
            else:
                data[i:i] = bytes(data[i:i + r.randint(1, 32)]) * r.randint(2, 200)
        data = bytes(data)
        # A mutation that turns a seed into a valid state-changing request is not a bug; leave those out.
        if re.search(rb"/(start|stop|stream|snapshot)", data) or (b"/synth/configure" in data and b"quality\": 0" not in data):
            return Input("mutation", seed, "any", half_close=True, note="seed (mutation discarded)")
        return Input("mutation", data, "any", half_close=True, note=f"mutated seed {self.SEEDS.index(seed)}")

    def any_input(self):
        gens = [(self.request_line, 12), (self.headers, 12), (self.framing, 12), (self.configure, 25), (self.controls, 6),
                (self.photo_name, 10), (self.query, 8), (self.route, 8), (self.mutation, 20)]
        total = sum(w for _, w in gens)
        x = self.r.uniform(0, total)
        for g, w in gens:
            x -= w
            if x <= 0:
                return g()
        return gens[-1][0]()


# ---------------------------------------------------------------- judging

def exchange(sock_path, inp, timeout):
    """Sends one input; returns (response bytes, how the exchange ended)."""
    return raw_exchange(sock_path, inp.payload, timeout=timeout, max_bytes=4 << 20, half_close=inp.half_close,
                        head_request=inp.payload.startswith((b"HEAD ", b"CONNECT ")))


def judge(inp, out, how):
    """(outcome label, failure reason or None)."""
    parsed = parse_response(out) if out else None
    if how.startswith("connect-failed"):
        return "connect-failed", how
    if how == "timeout" and parsed is None:
        return "timeout", "no answer and no close within the timeout (hang)"
    if parsed is None:
        if out:
            return "garbage", f"unparseable answer {out[:80]!r}"
        label = "close" if how == "closed" else how
        if inp.expect == "json4xx":
            return label, "connection closed without an answer to a well-formed request"
        return label, None
    code, headers, body = parsed
    label = str(code)
    is_json_error = False
    if 400 <= code < 500:
        try:
            doc = json.loads(body)
            e = doc.get("error") if isinstance(doc, dict) else None
            is_json_error = isinstance(e, dict) and isinstance(e.get("code"), str) and isinstance(e.get("message"), str) and e["code"] and e["message"]
        except (ValueError, UnicodeDecodeError):
            is_json_error = False
        if not is_json_error:
            label += "-bare"
    if code >= 500:
        return label, f"server error {code}: {body[:200]!r}"
    if inp.expect == "json4xx":
        if not 400 <= code < 500:
            return label, f"expected a 4xx JSON error, got {code}: {body[:200]!r}"
        if not is_json_error:
            return label, f"4xx without a JSON error body: {body[:200]!r}"
    if inp.expect == "reject" and 200 <= code < 400:
        return label, f"an invalid request was accepted ({code})"
    return label, None


# ---------------------------------------------------------------- the run

STRACE_CALLS = ("openat,open,creat,mkdir,mkdirat,rename,renameat,renameat2,unlink,unlinkat,link,linkat,symlink,symlinkat,"
                "truncate,utimensat,chmod,fchmodat,chown,fchownat,lchown,mknod,mknodat,rmdir")


def written_paths(strace_log, cwd):
    """Paths camd changed, from strace's log: (syscall, path) for each successful write-like call."""
    found = []
    line_re = re.compile(r'^\d+\s+(\w+)\((.*)\)\s+=\s+(-?\d+)')
    try:
        with open(strace_log, errors="replace") as f:
            lines = f.readlines()
    except OSError:
        return None
    for line in lines:
        m = line_re.match(line)
        if not m or int(m.group(3)) < 0:
            continue
        call, args = m.group(1), m.group(2)
        if call in ("open", "openat", "creat") and call != "creat" and not re.search(r"O_WRONLY|O_RDWR|O_CREAT|O_TRUNC", args):
            continue
        # each quoted path, with the directory fd before it if any
        for dirfd, path in re.findall(r'(?:(?:AT_FDCWD|\d+)<([^>]*)>,\s*)?"((?:[^"\\]|\\.)*)"', args):
            if call in ("open", "openat", "creat", "utimensat", "chmod", "fchmodat", "chown", "fchownat", "lchown",
                        "truncate", "mkdir", "mkdirat", "unlink", "unlinkat", "rmdir", "mknod", "mknodat"):
                pass
            full = path if path.startswith("/") else os.path.join(dirfd or cwd, path)
            found.append((call, os.path.normpath(full)))
            if call in ("open", "openat", "creat", "utimensat", "chmod", "fchmodat", "truncate"):
                break  # only the first string is a path
    return found


def tree(root, skip):
    """{relative path: (type, size, mtime ns, link target)} for everything under root except `skip` prefixes."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            rel = os.path.relpath(p, root)
            if any(rel == s or rel.startswith(s + "/") for s in skip):
                continue
            st = os.lstat(p)
            out[rel] = (st.st_mode >> 12, st.st_size, st.st_mtime_ns, os.readlink(p) if os.path.islink(p) else None)
    return out


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def prepare_photo_folder(workdir, photos, marker):
    """Canaries outside the photo folder and traps inside it, made before camd starts."""
    outside = os.path.join(workdir, "outside")
    os.makedirs(outside, exist_ok=True)
    canary = os.path.join(outside, "canary.jpg")
    with open(canary, "wb") as f:
        f.write(b"\xff\xd8canary " + marker.encode() + b"\xff\xd9")
    cam = os.path.join(photos, CAM)
    os.makedirs(cam, exist_ok=True)
    os.symlink(canary, os.path.join(cam, "link-out.jpg"))
    os.symlink("/etc/passwd", os.path.join(cam, "link-passwd.jpg"))
    os.symlink(outside, os.path.join(cam, "link-dir.jpg"))
    os.link(canary, os.path.join(cam, "hard-out.jpg"))
    os.mkfifo(os.path.join(cam, "fifo.jpg"))
    os.makedirs(os.path.join(cam, "dir.jpg"), exist_ok=True)
    os.symlink(outside, os.path.join(photos, "evilcam"))  # a camera folder that is a symlink
    return outside, canary



# ---------------------------------------------------------------- targeted probes

def restore(camd, settings):
    """Puts the camera's settings back and waits until it runs."""
    body = {k: v for k, v in settings.items() if k != "id"}
    body.setdefault("format", None)
    photos = dict(body.get("photos") or {})
    for key in ("interval", "keep_count", "keep_bytes", "keep_age"):
        photos.setdefault(key, None)
    body["photos"] = photos
    call(camd.sock, "POST", f"/v1/cameras/{CAM}/configure", body=body, timeout=30)
    deadline = time.time() + 20
    while time.time() < deadline:
        d = camera_detail(camd.sock, CAM)
        if d["status"]["state"] == "running":
            return d
        call(camd.sock, "POST", f"/v1/cameras/{CAM}/start", timeout=30)
        time.sleep(0.5)
    return camera_detail(camd.sock, CAM)


def probe_configure(camd, suite, settings, label, body, findings):
    """A configure request camd should refuse: 4xx, settings unchanged, camera still running."""
    code, _, data = call(camd.sock, "POST", f"/v1/cameras/{CAM}/configure", body=body if isinstance(body, bytes) else json.dumps(body).encode())
    time.sleep(1.5)
    d = camera_detail(camd.sock, CAM)
    ok = 400 <= code < 500 and d["settings"] == settings and d["status"]["state"] == "running"
    detail = f"HTTP {code}; state {d['status']['state']}" + (f" ({d['status'].get('reason') or d['status'].get('last_error') or ''})"[:200]
                                                            if d["status"]["state"] != "running" else "")
    suite.check(f"probe: {label} is refused and the camera keeps running", ok, detail)
    if not ok:
        findings.append((label, body, code, data[:200], d["status"]["state"]))
    restore(camd, settings)


def run_probes(camd, args, suite, settings, figures):
    findings = []
    probe_configure(camd, suite, settings, "configure format=MJPG (a FourCC the source does not offer)", {"format": "MJPG"}, findings)
    probe_configure(camd, suite, settings, "configure format=\"YU\" (a two-letter FourCC)", {"format": "YU"}, findings)
    probe_configure(camd, suite, settings, "configure device=/etc/passwd (a regular file)", {"device": "/etc/passwd"}, findings)
    probe_configure(camd, suite, settings, "configure device=/dev/null (not a video device)", {"device": "/dev/null"}, findings)
    probe_configure(camd, suite, settings, "configure photos.name with a NUL (\"a\\u0000b.jpg\")", {"photos": {"name": "a\u0000b.jpg"}}, findings)
    probe_configure(camd, suite, settings, "configure with a trailing comma in the JSON", b'{"quality": 50,}', findings)

    # A NUL in the name pattern: if accepted, what does a save write?
    code, _, _ = call(camd.sock, "POST", f"/v1/cameras/{CAM}/configure", body={"photos": {"name": "nul\u0000x.jpg"}})
    if code == 200:
        time.sleep(1.5)
        code, _, data = call(camd.sock, "POST", f"/v1/cameras/{CAM}/snapshot")
        listing = sorted(os.listdir(os.path.join(camd.photos, CAM)))
        suite.check("probe: a photo saved with a NUL in its name pattern lands in the photo folder as a .jpg",
                    code >= 400 or any(n.startswith("nul") and n.endswith(".jpg") for n in listing),
                    f"save answered {code} {data[:160]!r}; folder has {[n for n in listing if n.startswith('nul')]}")
        restore(camd, settings)

    # A name with a space: saved, then fetched and deleted by its URL-encoded name.
    code, _, _ = call(camd.sock, "POST", f"/v1/cameras/{CAM}/configure", body={"photos": {"name": "my photo {seq}.jpg"}})
    time.sleep(1.5)
    code, _, data = call(camd.sock, "POST", f"/v1/cameras/{CAM}/snapshot")
    if code == 201:
        name = json.loads(data)["name"]
        quoted = urllib.parse.quote(name)
        g, _, _ = call(camd.sock, "GET", f"/v1/photos/{quoted}")
        dcode, _, _ = call(camd.sock, "DELETE", f"/v1/photos/{quoted}")
        suite.check("probe: a photo whose name has a space can be fetched and deleted by its URL-encoded name",
                    g == 200 and dcode == 204, f"saved {name!r}; GET /v1/photos/{quoted} -> {g}, DELETE -> {dcode}")
    else:
        suite.check("probe: a photo whose name has a space can be saved", False, f"save answered {code} {data[:160]!r}")
    restore(camd, settings)

    # Hard link to a file outside the photo folder (can only be made by someone who may write there).
    g, _, data = call(camd.sock, "GET", "/v1/photos/hard-out.jpg")
    figures.append(("probe: hard link to a file outside", f"GET /v1/photos/hard-out.jpg -> {g}"
                    + (" (served the outside file's bytes)" if g == 200 and b"canary" in data else "")))

    # Idle connections: does camd ever close a connection that sends half a request?
    idle = []
    for _ in range(3):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(camd.sock)
        s.sendall(b"GET /v1/status HTTP/1.1\r\nHost: camd\r\n")
        s.setblocking(False)
        idle.append(s)
    t0 = time.time()
    closed_after = None
    while time.time() - t0 < args.idle_wait and closed_after is None:
        time.sleep(0.5)
        for s in idle:
            try:
                if s.recv(100) == b"":
                    closed_after = time.time() - t0
            except BlockingIOError:
                pass
            except OSError:
                closed_after = time.time() - t0
    for s in idle:
        s.close()
    figures.append(("probe: idle half-request connection", f"closed by camd after {closed_after:.0f} s" if closed_after
                    else f"still open after {args.idle_wait:.0f} s (no idle timeout)"))
    return findings


def probe_fd_exhaustion(args, suite, figures):
    """A camd with few fds (prlimit) and more idle connections than it can hold: it must
    answer again once they go, and stay up."""
    if not shutil.which("prlimit"):
        return
    limit = 64
    c = Camd(binary=args.camd, size=args.size, camera_id=CAM, wrapper=["prlimit", f"--nofile={limit}:{limit}", "--"])
    try:
        c.start()
        base = proc_stats(c.pid)
        socks = []
        for _ in range(limit + 20):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(5)
            try:
                s.connect(c.sock)
                s.sendall(b"GET /v1/status HTTP/1.1\r\n")
                socks.append(s)
            except OSError:
                s.close()
                break
        time.sleep(2)
        held = proc_stats(c.pid)
        out, how = raw_exchange(c.sock, b"GET /v1/status HTTP/1.1\r\nHost: camd\r\n\r\n", timeout=5)
        while_full = "answered" if how == "complete" else how
        for s in socks:
            s.close()
        recovered = None
        t0 = time.time()
        while time.time() - t0 < 15:
            out, how = raw_exchange(c.sock, b"GET /v1/status HTTP/1.1\r\nHost: camd\r\n\r\n", timeout=3)
            if how == "complete" and out.startswith(b"HTTP/1.1 200"):
                recovered = time.time() - t0
                break
            time.sleep(0.5)
        after = proc_stats(c.pid)
        figures.append(("probe: fd exhaustion (RLIMIT_NOFILE 64)",
                        f"{len(socks)} idle connections held {held['fds'] if held else '?'} fds; a new status request: {while_full}; "
                        f"after they closed: answered in {recovered:.1f} s, fds {after['fds'] if after else '?'} (baseline {base['fds']})"
                        if recovered is not None else f"{len(socks)} idle connections; status while full: {while_full}; never answered again"))
        suite.check("probe: after running out of fds on idle connections, camd answers again once they close", recovered is not None
                    and c.alive(), f"alive {c.alive()}")
    finally:
        c.stop()
        c.cleanup()

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--camd", default=default_camd())
    ap.add_argument("--seconds", type=float, default=120, help="stop after this long")
    ap.add_argument("--count", type=int, default=20000, help="stop after this many inputs")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--workers", type=int, default=4, help="inputs in flight at once")
    ap.add_argument("--timeout", type=float, default=10, help="per-input timeout, seconds")
    ap.add_argument("--batch", type=int, default=250, help="inputs between status checks")
    ap.add_argument("--size", default="320x240")
    ap.add_argument("--no-strace", action="store_true", help="do not record camd's file writes with strace")
    ap.add_argument("--out", default=None, help="where failing inputs go (default: <scratch>/fuzz-out)")
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--no-probes", action="store_true", help="skip the targeted probes after the random run")
    ap.add_argument("--idle-wait", type=float, default=20, help="how long the idle-connection probe waits")
    args = ap.parse_args()

    seed = args.seed if args.seed is not None else random.randrange(1 << 32)
    rng = random.Random(seed)
    marker = f"fuzzmark{seed:x}"
    gen = Generators(rng, marker)
    suite = Suite()

    use_strace = not args.no_strace and shutil.which("strace") is not None
    camd = Camd(binary=args.camd, workdir=args.workdir, size=args.size, camera_id=CAM)
    out_dir = args.out or os.path.join(camd.workdir, "fuzz-out")
    os.makedirs(out_dir, exist_ok=True)
    strace_log = os.path.join(camd.workdir, "strace.log")
    if use_strace:
        camd.wrapper = ["strace", "-f", "--seccomp-bpf", "-qq", "-y", "-s", "4096", "-o", strace_log, "-e",
                        f"trace={STRACE_CALLS}", "--"]
    outside, canary = prepare_photo_folder(camd.workdir, camd.photos, marker)
    passwd_hash = sha("/etc/passwd")
    canary_hash = sha(canary)
    print(f"camd: {describe_binary(camd.binary)}; scratch {camd.workdir}; seed {seed}; strace {'on' if use_strace else 'off'}; "
          f"load average {loadavg()}", flush=True)
    camd.start()
    before_tree = tree(camd.workdir, skip=["photos", "camd.log", "strace.log", "fuzz-out", "camd.sock"])
    before = camera_detail(camd.sock, CAM)
    before_stats = proc_stats(camd.pid)

    histogram = {}      # outcome -> count
    by_category = {}    # category -> {outcome: count}
    failures = []
    crashes = []
    status_failures = 0
    tried = 0
    lock = threading.Lock()
    failures_file = open(os.path.join(out_dir, "failures.jsonl"), "w")
    start = time.monotonic()

    def record_failure(i, inp, label, reason, out):
        entry = {"input": i, "category": inp.category, "note": inp.note, "expect": inp.expect, "half_close": inp.half_close,
                 "outcome": label, "reason": reason, "response": out[:300].decode("latin-1"),
                 "payload_b64": base64.b64encode(inp.payload).decode(), "payload_head": inp.payload[:200].decode("latin-1")}
        with open(os.path.join(out_dir, f"input-{i:06d}.bin"), "wb") as f:
            f.write(inp.payload)
        failures.append(entry)
        failures_file.write(json.dumps(entry) + "\n")
        failures_file.flush()

    latencies = {}      # category -> [seconds]
    slow = []           # inputs answered slowly (but in time)

    def run_one(i, inp):
        t = time.monotonic()
        out, how = exchange(camd.sock, inp, args.timeout)
        took = time.monotonic() - t
        label, reason = judge(inp, out, how)
        with lock:
            latencies.setdefault(inp.category, []).append(took)
            if took > min(2.0, args.timeout / 2):
                slow.append((took, i, inp.category, inp.note, label, inp.payload[:100]))
            histogram[label] = histogram.get(label, 0) + 1
            cat = by_category.setdefault(inp.category, {})
            cat[label] = cat.get(label, 0) + 1
            if reason:
                record_failure(i, inp, label, reason, out)

    peak = dict(before_stats)
    batch_no = 0
    while tried < args.count and time.monotonic() - start < args.seconds:
        batch = [gen.any_input() for _ in range(min(args.batch, args.count - tried))]
        first = tried
        queue = list(enumerate(batch, start=first))
        qlock = threading.Lock()

        def worker():
            while True:
                with qlock:
                    if not queue or time.monotonic() - start >= args.seconds + args.timeout:
                        return
                    i, inp = queue.pop(0)
                try:
                    run_one(i, inp)
                except Exception as e:  # noqa: BLE001 - the harness must not stop on one input
                    with lock:
                        record_failure(i, inp, "harness-error", repr(e), b"")

        threads = [threading.Thread(target=worker, daemon=True) for _ in range(args.workers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(args.batch * args.timeout)
        tried += len(batch) - len(queue)
        batch_no += 1
        # camd must still serve
        alive = camd.alive()
        ok = False
        if alive:
            try:
                status(camd.sock, timeout=10)
                ok = True
            except Exception:  # noqa: BLE001
                ok = False
        stats = proc_stats(camd.pid) if alive else None
        if stats:
            for k in ("rss_kib", "fds", "threads"):
                peak[k] = max(peak[k], stats[k])
        if not ok:
            status_failures += 1
            path = os.path.join(out_dir, f"batch-{batch_no:04d}-inputs.jsonl")
            with open(path, "w") as f:
                for i, inp in enumerate(batch, start=first):
                    f.write(json.dumps({"input": i, "category": inp.category, "note": inp.note,
                                        "payload_b64": base64.b64encode(inp.payload).decode()}) + "\n")
            crash = {"batch": batch_no, "alive": alive, "exit": camd.proc.returncode if not alive else None,
                     "inputs": path, "log_tail": camd.tail(40)}
            crashes.append(crash)
            print(f"!! camd {'died' if not alive else 'stopped answering'} in batch {batch_no} (inputs {first}..{tried - 1}); "
                  f"inputs saved to {path}\n{crash['log_tail']}", flush=True)
            if not alive or len(crashes) > 3:
                shutil.copy(camd.log_path, os.path.join(out_dir, f"camd-log-batch-{batch_no}.txt"))
            if len(crashes) > 3:
                break
            if not alive:
                camd.start()
        if batch_no % 10 == 0:
            el = time.monotonic() - start
            print(f"  {tried} inputs in {el:.0f} s; failures {len(failures)}; RSS {mib(stats['rss_kib']) if stats else '?'}, "
                  f"fds {stats['fds'] if stats else '?'}", flush=True)
    elapsed = time.monotonic() - start
    failures_file.close()

    # after the run
    time.sleep(1)
    after = camera_detail(camd.sock, CAM) if camd.alive() else None
    after_stats = proc_stats(camd.pid) if camd.alive() else None
    after_tree = tree(camd.workdir, skip=["photos", "camd.log", "strace.log", "fuzz-out", "camd.sock"])
    same = after is not None and after["settings"] == before["settings"]
    suite.check("fuzz: the camera's settings are unchanged by all the rejected configure requests", same,
                "" if same else f"before {json.dumps(before['settings'])}\nafter  {json.dumps(after['settings']) if after else None}")
    suite.check("fuzz: the camera is still running", after is not None and after["status"]["state"] == "running",
                after["status"]["state"] if after else "camd gone")
    probe_figures = []
    if not args.no_probes and camd.alive():
        print("probes:", flush=True)
        run_probes(camd, args, suite, before["settings"], probe_figures)
    code, took = camd.stop()
    writes = written_paths(strace_log, camd.workdir) if use_strace else None
    photos_real = os.path.realpath(camd.photos)
    allowed = [photos_real + "/", camd.sock]
    # A thread naming itself (pthread_setname_np writes /proc/thread-self/comm) writes no file.
    stray = sorted({(c, p) for c, p in writes or []
                    if not (p + "/").startswith(allowed[0]) and p != camd.sock and not re.fullmatch(r"/proc/[\w/-]+/comm", p)})
    log = open(camd.log_path, errors="replace").read()
    unhandled = [l for l in log.splitlines() if "unhandled error" in l]

    hist_rows = [(k, v) for k, v in sorted(histogram.items(), key=lambda kv: -kv[1])]
    figures = [("binary", describe_binary(camd.binary)),
               ("seed", seed),
               ("inputs tried", f"{tried} in {elapsed:.0f} s ({tried / max(elapsed, 1e-9):.0f}/s, {args.workers} at a time)"),
               ("outcomes", ", ".join(f"{k}: {v}" for k, v in hist_rows)),
               *[(f"  {cat}", ", ".join(f"{k}: {v}" for k, v in sorted(h.items(), key=lambda kv: -kv[1]))
                  + f"  [mean {1000 * sum(latencies[cat]) / len(latencies[cat]):.0f} ms, max {1000 * max(latencies[cat]):.0f} ms]")
                 for cat, h in sorted(by_category.items())],
               ("failures", f"{len(failures)} (saved in {out_dir})"),
               ("status checks failed / crashes", f"{status_failures} / {sum(1 for c in crashes if not c['alive'])}"),
               ("RSS start / peak / end", f"{mib(before_stats['rss_kib'])} / {mib(peak['rss_kib'])} / {mib(after_stats['rss_kib']) if after_stats else '?'}"),
               ("fds start / peak / end", f"{before_stats['fds']} / {peak['fds']} / {after_stats['fds'] if after_stats else '?'}"),
               ("threads start / peak / end", f"{before_stats['threads']} / {peak['threads']} / {after_stats['threads'] if after_stats else '?'}"),
               ("'unhandled error' log lines", len(unhandled)),
               ("files camd wrote (strace)", f"{len(writes)} write calls, {len(stray)} outside the photo folder" if writes is not None else "not recorded"),
               ("camd log", camd.log_path)] + probe_figures
    if not args.no_probes:
        probe_fd_exhaustion(args, suite, figures)
    table(figures, "figures")
    if failures:
        print("\nfirst failures:")
        seen = set()
        for f in failures:
            key = (f["category"], f["reason"][:60])
            if key in seen:
                continue
            seen.add(key)
            print(f"  #{f['input']} {f['category']} ({f['note'][:60]}): {f['reason'][:160]}\n      sent {f['payload_head'][:120]!r}")
            if len(seen) >= 15:
                break
    if slow:
        print(f"\n{len(slow)} inputs took over {min(2.0, args.timeout / 2):.0f} s, e.g.:")
        for took, i, cat, note, label, head in sorted(slow, reverse=True)[:5]:
            print(f"  #{i} {cat} ({note[:50]}) {took:.1f} s -> {label}; sent {head!r}")
    if stray:
        print("\nwritten outside the photo folder:\n  " + "\n  ".join(f"{c} {p}" for c, p in stray[:20]))

    suite.check(f"fuzz: {tried} inputs, none got a 5xx, hung, or a wrong kind of answer", not failures and tried > 0,
                f"{len(failures)} failures")
    suite.check("fuzz: camd never crashed and answered status after every batch", not crashes, f"{len(crashes)} incidents")
    suite.check("fuzz: no 'unhandled error' (500) in camd's log", not unhandled, unhandled[0][:160] if unhandled else "")
    suite.check("fuzz: /etc/passwd, the canary outside the photo folder and the traps are untouched",
                sha("/etc/passwd") == passwd_hash and os.path.exists(canary) and sha(canary) == canary_hash
                and os.path.islink(os.path.join(camd.photos, CAM, "link-out.jpg"))
                and os.path.islink(os.path.join(camd.photos, CAM, "link-passwd.jpg"))
                and os.path.islink(os.path.join(camd.photos, "evilcam")))
    suite.check("fuzz: nothing under the scratch folder outside the photo folder changed", before_tree == after_tree,
                str(sorted(set(before_tree.items()) ^ set(after_tree.items())))[:300])
    if writes is not None:
        suite.check("fuzz: strace saw no file written outside the photo folder (and the socket)", not stray,
                    "; ".join(f"{c} {p}" for c, p in stray[:5]))
    suite.check("fuzz: camd exits within 5 s of SIGTERM", code == 0 and took <= 5, f"status {code} after {took:.1f} s")
    rc = suite.finish()
    print(f"kept {camd.workdir}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
