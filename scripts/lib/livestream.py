"""camd's live H.264 (`GET /v1/cameras/{id}/video`) read as it arrives: the one reader of
the fragmented MP4 stream in the scripts.

camd writes the init segment (ftyp, moov), then per frame a `prft` (its capture time as
NTP), a `moof` and an `mdat`. `LiveMP4Stream.feed(data, now)` takes the bytes of the HTTP
response as they come off the socket (head, chunked coding and all) and returns the
frames completed by them, each with its capture time, the time the first byte of its
fragment arrived, its decode time, whether it is a keyframe, and its size. Standard
library only, so it runs in the VMs too.
"""
import bisect
import struct
import time
from collections import namedtuple

from camdclient import Dechunker, _head, connect

# capture: wall-clock seconds (prft); arrival: `now` of the read that brought the
# fragment's first byte; decode: seconds on the stream's timeline; size: moof + mdat bytes.
LiveFrame = namedtuple("LiveFrame", "capture arrival decode keyframe size")

NTP_UNIX_OFFSET = 2_208_988_800


def boxes(data, start=0, end=None):
    """(type, body start, box end) of each box in data[start:end]."""
    end = len(data) if end is None else end
    while start + 8 <= end:
        size, kind = struct.unpack_from(">I4s", data, start)
        header = 8
        if size == 1:
            size = struct.unpack_from(">Q", data, start + 8)[0]
            header = 16
        if size < header or start + size > end:
            return
        yield kind.decode("latin-1"), start + header, start + size
        start += size


def child(data, start, end, path):
    """The body range of the first box along `path` ("moov/trak/mdia/mdhd") within data[start:end]."""
    for name in path.split("/"):
        for kind, body, box_end in boxes(data, start, end):
            if kind == name:
                start, end = body, box_end
                break
        else:
            return None
    return start, end


def timescale(moov, start, end):
    """The first track's timescale, from its mdhd."""
    found = child(moov, start, end, "trak/mdia/mdhd")
    if not found:
        return None
    body = found[0]
    version = moov[body]
    return struct.unpack_from(">I", moov, body + (20 if version == 1 else 12))[0]


def first_sample(moof, start, end):
    """(base decode time, is keyframe) of a fragment's first sample, from tfdt and trun."""
    traf = child(moof, start, end, "traf")
    if not traf:
        return None, None
    decode, keyframe = None, None
    for kind, body, _ in boxes(moof, *traf):
        if kind == "tfdt":
            decode = struct.unpack_from(">Q" if moof[body] == 1 else ">I", moof, body + 4)[0]
        elif kind == "trun":
            flags = struct.unpack_from(">I", moof, body)[0] & 0xFFFFFF
            at = body + 8 + (4 if flags & 0x1 else 0)
            if flags & 0x4:
                sample_flags = struct.unpack_from(">I", moof, at)[0]
            else:
                at += 4 if flags & 0x100 else 0
                at += 4 if flags & 0x200 else 0
                sample_flags = struct.unpack_from(">I", moof, at)[0] if flags & 0x400 else 0
            keyframe = not sample_flags & 0x0001_0000  # sample_is_non_sync_sample
    return decode, keyframe


class LiveMP4Stream:
    """One client's live stream, fed the response's bytes as they are read."""

    def __init__(self, keep_bytes=False):
        self.head = bytearray()
        self.status = None
        self.headers = {}
        self.dechunker = None
        self.buffer = bytearray()
        self.offset = 0            # stream offset of buffer[0]
        self.arrivals = []         # (stream offset, time) of each piece of payload
        self.timescale = None
        self.init_segment = None
        self.pending = None        # (capture, arrival) from a prft, until its moof
        self.bytes = bytearray() if keep_bytes else None
        self.received = 0

    def _payload(self, data):
        if self.status is None:
            self.head += data
            parsed = _head(self.head)
            if parsed is None:
                return []
            self.status, self.headers, body = parsed
            data = bytes(self.head[body:])
            self.head = bytearray()
            if "chunked" in self.headers.get("transfer-encoding", "").lower():
                self.dechunker = Dechunker()
        return self.dechunker.feed(data) if self.dechunker else [data]

    def feed(self, data, now):
        """The frames whose fragments `data` completed."""
        frames = []
        for piece in self._payload(data):
            if not len(piece):
                continue
            self.arrivals.append((self.offset + len(self.buffer), now))
            self.buffer += piece
            self.received += len(piece)
            if self.bytes is not None:
                self.bytes += piece
        used = 0
        for kind, body, end in boxes(self.buffer):
            arrival = self._arrival(self.offset + body)
            if kind == "moov":
                self.timescale = timescale(self.buffer, body, end)
                self.init_segment = True
            elif kind == "prft":
                ntp = struct.unpack_from(">Q", self.buffer, body + 8)[0]
                self.pending = ((ntp >> 32) - NTP_UNIX_OFFSET + (ntp & 0xFFFFFFFF) / 2**32, arrival)
            elif kind == "moof":
                decode, keyframe = first_sample(self.buffer, body, end)
                capture, first_byte = self.pending or (None, arrival)
                self.pending = None
                self._moof = (capture, first_byte, decode, keyframe, end - body + 8)
            elif kind == "mdat" and getattr(self, "_moof", None):
                capture, first_byte, decode, keyframe, size = self._moof
                self._moof = None
                seconds = decode / self.timescale if decode is not None and self.timescale else None
                frames.append(LiveFrame(capture, first_byte, seconds, keyframe, size + end - body + 8))
            used = end
        if used:
            del self.buffer[:used]
            self.offset += used
            keep = bisect.bisect_right(self.arrivals, (self.offset, float("inf"))) - 1
            if keep > 0:
                del self.arrivals[:keep]
        return frames

    def _arrival(self, offset):
        index = bisect.bisect_right(self.arrivals, (offset, float("inf"))) - 1
        return self.arrivals[max(index, 0)][1]

    @property
    def ended(self):
        return self.dechunker is not None and self.dechunker.ended


def request(camera):
    """The raw request for a camera's live H.264, for clients that read the socket themselves."""
    return f"GET /v1/cameras/{camera}/video HTTP/1.1\r\nHost: camd\r\n\r\n".encode()


class LiveClient:
    """A client of a camera's live H.264 on a non-blocking socket, for a selector loop:
    `read(now)` takes what arrived, adds the frames it completed to `frames` (counted only,
    with `keep=False`) and answers False once camd closed the stream."""

    def __init__(self, camd, rcvbuf=None, keep=True):
        self.sock = connect(camd.sock, rcvbuf=rcvbuf)
        self.sock.sendall(request(camd.camera))
        self.sock.setblocking(False)
        self.stream = LiveMP4Stream()
        self.keep = keep
        self.frames = [] if keep else 0
        self.paused = False
        self.added = time.time()

    def read(self, now):
        try:
            data = self.sock.recv(1 << 20)
        except BlockingIOError:
            return True
        if not data:
            return False
        got = self.stream.feed(data, now)
        if self.keep:
            self.frames += got
        else:
            self.frames += len(got)
        return True
