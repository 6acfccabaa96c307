#!/usr/bin/env python3
"""camd maps FFmpeg's libraries only when video is first used, and GStreamer's only when
RTSP starts (issue 16, memory).

    scripts/lazy-library-checks.py [--camd PATH]

On the synthetic source, no camera needed, about 20 s:
  - Sources/CFFmpeg/lazy.c and Sources/CGStreamer/lazy.c are what scripts/gen-lazy-stubs makes
    of their specs (the stubs match the headers installed here);
  - camd's ELF file names none of FFmpeg's or GStreamer's libraries as needed (readelf -d);
  - a running camd that has answered a snapshot has none of them mapped (linked, their
    trees were ~140 libraries);
  - a recording asked for then loads FFmpeg's: the movie is saved and ffprobe decodes it;
  - a camd with `rtsp` set loads GStreamer's, and ffprobe reads H.264 from its RTSP URL;
  - with libavformat hidden (a private mount namespace, as on a machine without FFmpeg),
    camd still starts and answers snapshots, and a recording is refused with the reason
    and what to install, and camd keeps running.
Prints PASS/FAIL lines and "N passed, N failed"; exits 1 if anything failed.
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from camdclient import Camd, Suite, call, default_camd, wait_for  # noqa: E402

CAMERA = "synth"
FFMPEG = ("libavformat.so", "libavcodec.so", "libavutil.so")
GSTREAMER = ("libgstreamer-1.0.so", "libgstrtspserver-1.0.so", "libglib-2.0.so", "libgobject-2.0.so")


def mapped_libraries(pid):
    with open(f"/proc/{pid}/maps") as f:
        return {line.split()[-1] for line in f if ".so" in line.split()[-1]}


def mapped(pid, family):
    return sorted(os.path.basename(n) for n in mapped_libraries(pid) if any(lib in n for lib in family))


def ffmpeg_mapped(pid):
    return mapped(pid, FFMPEG)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def library_path(prefix):
    """The file the dynamic loader opens for a library (`ldconfig -p`), links followed."""
    out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        name, _, path = line.strip().partition(" => ")
        if name.startswith(prefix) and path:
            return os.path.realpath(path)
    return None


def snapshot_ok(camd):
    code, _, body = call(camd.sock, "GET", f"/v1/cameras/{CAMERA}/snapshot", timeout=30)
    return code == 200 and body.startswith(b"\xff\xd8")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--camd", default=None)
    args = ap.parse_args()
    binary = os.path.abspath(args.camd or default_camd())
    suite = Suite()

    here = os.path.dirname(os.path.abspath(__file__))
    for spec in ("Sources/CFFmpeg/lazy.spec", "Sources/CGStreamer/lazy.spec"):
        generated = subprocess.run([os.path.join(here, "gen-lazy-stubs"), "--check", os.path.join(here, "..", spec)],
                                   capture_output=True, text=True)
        suite.check(f"{os.path.dirname(spec)}/lazy.c is what gen-lazy-stubs makes of its spec", generated.returncode == 0,
                    (generated.stdout + generated.stderr).strip()[-300:])

    dynamic = subprocess.run(["readelf", "-d", binary], capture_output=True, text=True).stdout
    needed = [line.split("[")[-1].rstrip("]") for line in dynamic.splitlines() if "(NEEDED)" in line]
    suite.check("camd's ELF file does not name FFmpeg's libraries as needed",
                needed and not [n for n in needed if n.startswith(("libavformat", "libavcodec", "libavutil"))],
                f"needed: {' '.join(needed)}")
    suite.check("camd's ELF file does not name GStreamer's or GLib's libraries as needed",
                needed and not [n for n in needed if n.startswith(("libgst", "libglib", "libgobject"))])

    camd = Camd(binary, size="640x480", fps=15, camera_id=CAMERA)
    try:
        camd.start(timeout=60)
        suite.check("a snapshot is answered", snapshot_ok(camd))
        before = mapped_libraries(camd.pid)
        suite.check("no FFmpeg library is mapped before video is used", not ffmpeg_mapped(camd.pid),
                    f"{len(before)} shared libraries mapped; FFmpeg's: {ffmpeg_mapped(camd.pid)}")
        suite.check("no GStreamer library is mapped without RTSP", not mapped(camd.pid, GSTREAMER),
                    f"{mapped(camd.pid, GSTREAMER)}")
        code, _, body = call(camd.sock, "POST", f"/v1/cameras/{CAMERA}/recordings", {"duration": 2})
        suite.check("a recording is started", code == 201, f"{code} {body[:200]!r}")
        movies = []

        def saved():
            movies[:] = json.loads(call(camd.sock, "GET", "/v1/media?kind=video")[2])
            return bool(movies)
        wait_for(saved, 60)
        suite.check("FFmpeg's libraries are mapped once a recording is made", ffmpeg_mapped(camd.pid),
                    f"{ffmpeg_mapped(camd.pid)}; {len(mapped_libraries(camd.pid))} shared libraries mapped now")
        frames = None
        if movies:
            path = os.path.join(camd.workdir, "movie.mp4")
            with open(path, "wb") as f:
                f.write(call(camd.sock, "GET", f"/v1/media/{movies[0]['name']}", timeout=30)[2])
            probe = subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                                    "stream=codec_name,nb_read_frames", "-of", "json", path], capture_output=True, text=True)
            try:
                stream = json.loads(probe.stdout)["streams"][0]
                frames = (stream["codec_name"], int(stream["nb_read_frames"]))
            except (ValueError, KeyError, IndexError):
                frames = probe.stderr.strip()[:200]
        suite.check("the movie is saved and decodes as H.264", isinstance(frames, tuple) and frames[0] == "h264" and frames[1] >= 15,
                    f"{movies[0]['name'] if movies else 'no movie'}: {frames}")
    finally:
        camd.stop()
        camd.cleanup()

    port = free_port()
    camd = Camd(binary, size="640x480", fps=15, camera_id=CAMERA, extra_daemon=f'rtsp = "127.0.0.1:{port}"\n')
    try:
        camd.start(timeout=60)
        suite.check("with rtsp set, GStreamer's libraries are mapped", mapped(camd.pid, GSTREAMER),
                    f"{mapped(camd.pid, GSTREAMER)}")
        probe = subprocess.run(["ffprobe", "-v", "error", "-rtsp_transport", "tcp", "-select_streams", "v:0", "-count_frames",
                                "-read_intervals", "%+2", "-show_entries", "stream=codec_name,nb_read_frames", "-of", "json",
                                f"rtsp://127.0.0.1:{port}/{CAMERA}"], capture_output=True, text=True, timeout=60)
        try:
            stream = json.loads(probe.stdout)["streams"][0]
            read = (stream["codec_name"], int(stream.get("nb_read_frames", 0)))
        except (ValueError, KeyError, IndexError):
            read = probe.stderr.strip()[:300]
        suite.check("an RTSP client reads H.264 from it", isinstance(read, tuple) and read[0] == "h264" and read[1] > 0,
                    f"{read}")
    finally:
        camd.stop()
        camd.cleanup()

    hidden = library_path("libavformat.so.")
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True, text=True)
    if probe.returncode != 0 or hidden is None:
        print(f"SKIP: camd without FFmpeg (unshare -m: {probe.stderr.strip() or 'ok'}; libavformat: {hidden})")
        return suite.finish()
    # A private mount namespace in which libavformat is an empty file: dlopen fails as on a
    # machine where FFmpeg is not installed.
    hide = ["unshare", "-m", "sh", "-c", f'mount --bind /dev/null "{hidden}" && exec "$@"', "sh"]
    camd = Camd(binary, size="640x480", fps=15, camera_id=CAMERA, wrapper=hide)
    try:
        camd.start(timeout=60)
        suite.check("without FFmpeg: camd starts and answers a snapshot", snapshot_ok(camd))
        code, _, body = call(camd.sock, "POST", f"/v1/cameras/{CAMERA}/recordings", {"duration": 2})
        text = body.decode(errors="replace")
        suite.check("without FFmpeg: a recording is refused with the reason and what to install",
                    code == 503 and "video_unavailable" in text and "FFmpeg's libraries could not be loaded" in text
                    and "libavformat59" in text,
                    f"{code} {text[:300]}")
        time.sleep(1)
        suite.check("without FFmpeg: camd keeps running and answering snapshots", camd.alive() and snapshot_ok(camd),
                    camd.tail(5) if not camd.alive() else "")
    finally:
        camd.stop()
        camd.cleanup()
    return suite.finish()


if __name__ == "__main__":
    sys.exit(main())
