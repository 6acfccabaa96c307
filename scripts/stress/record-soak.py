#!/usr/bin/env python3
"""A continuous recording for a long while on the synthetic source: memory, files and errors.

    scripts/stress/record-soak.py [--camd PATH] [--seconds 1800] [--segment 10] [--keep 5]
                                  [--size 1280x720] [--fps 30] [--workdir DIR]

camd records continuously (`video.record = "continuous"`) in files of --segment seconds,
keeping the newest --keep movies (`video.keep_count`), while a client takes a snapshot
every few seconds. Every 30 s it samples camd's RSS, fds and threads and counts the
movies. The encoder is opened and closed with every file's stream and FFmpeg's objects
(contexts, packets, pictures, the muxer's I/O) are made per file, so a leak in their
life cycle shows as RSS or fds growing with the number of files. Prints the samples and
checks: RSS flat after warm-up, fds and threads flat, --keep movies on disk, every one
decodes clean (ffmpeg), no hidden file left after the recording is turned off.
"""
import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from camdclient import Camd, Suite, call, camera_status, proc_stats, wait_for  # noqa: E402
from videos import decode_errors  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--camd")
    parser.add_argument("--seconds", type=float, default=1800)
    parser.add_argument("--segment", type=float, default=10)
    parser.add_argument("--keep", type=int, default=5)
    parser.add_argument("--size", default="1280x720")
    parser.add_argument("--fps", type=int, default=30)
    parser.add_argument("--workdir")
    args = parser.parse_args()
    suite = Suite()
    camd = Camd(binary=args.camd, workdir=args.workdir, size=args.size, fps=args.fps, log_level="notice",
                extra_camera=f'[camera.video]\nrecord = "continuous"\nsegment = {args.segment}\nkeep_count = {args.keep}\n')
    camd.start()
    print(f"camd {camd.binary}; {args.seconds:.0f} s of continuous recording in {args.segment:.0f} s files, "
          f"keep {args.keep}; {args.size} at {args.fps} fps; load {os.getloadavg()}")
    samples = []
    started = time.time()
    next_sample = started
    snapshots = failed_snapshots = 0
    while time.time() - started < args.seconds:
        code, _, _ = call(camd.sock, "GET", f"/v1/cameras/{camd.camera}/snapshot", timeout=30)
        snapshots += 1
        failed_snapshots += code != 200
        if time.time() >= next_sample:
            figures = proc_stats(camd.pid)
            status = camera_status(camd.sock, camd.camera)
            _, _, listing = call(camd.sock, "GET", "/v1/media?kind=video")
            sample = (time.time() - started, figures["rss_kib"] / 1024, figures["fds"], figures["threads"],
                      len(json.loads(listing)), status["video"]["frames_encoded"], status["video"]["recording"]["state"])
            samples.append(sample)
            print("  t=%5.0f s  RSS %6.1f MiB  fds %3d  threads %3d  movies %2d  frames %7d  %s" % sample, flush=True)
            next_sample += 30
        time.sleep(3)
    call(camd.sock, "POST", f"/v1/cameras/{camd.camera}/configure", body={"video": {"record": "off"}})
    stopped = wait_for(lambda: camera_status(camd.sock, camd.camera)["video"]["recording"]["state"] == "off", 60)
    folder = os.path.join(camd.photos, camd.camera)
    names = sorted(os.listdir(folder))
    movies = [n for n in names if n.endswith(".mp4") and not n.startswith(".")]
    errors = [f"{n}: {decode_errors(os.path.join(folder, n))[:120]}" for n in movies]
    errors = [e for e in errors if not e.endswith(": ")]
    camd.stop()

    warm = [s for s in samples if s[0] >= 120] or samples
    rss = [s[1] for s in warm]
    suite.check("RSS stays flat after the first 2 minutes (within 8 MiB)", max(rss) - min(rss) <= 8,
                f"{min(rss):.1f} to {max(rss):.1f} MiB over {len(warm)} samples")
    suite.check("fds and threads stay flat", max(s[2] for s in warm) - min(s[2] for s in warm) <= 4
                and max(s[3] for s in warm) - min(s[3] for s in warm) <= 4,
                f"fds {min(s[2] for s in warm)}-{max(s[2] for s in warm)}, threads {min(s[3] for s in warm)}-{max(s[3] for s in warm)}")
    files_made = samples[-1][5] / args.fps / args.segment if samples else 0
    suite.check(f"retention keeps {args.keep} movies (about {files_made:.0f} were made)", stopped and len(movies) == args.keep,
                f"{len(movies)} on disk after the last was named")
    suite.check("every movie kept decodes clean", not errors, "; ".join(errors[:3]))
    suite.check("no hidden file is left", not [n for n in names if n.startswith(".")], str(names))
    suite.check("every snapshot meanwhile was answered", failed_snapshots == 0, f"{failed_snapshots} of {snapshots} failed")
    return suite.finish()


if __name__ == "__main__":
    sys.exit(main())
