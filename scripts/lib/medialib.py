"""A media library of many photos for the media page's checks and benchmark
(scripts/media-checks.py, scripts/bench/media-page.py).

camd's photo store takes files put into a camera's folder by another program at its next
start (PhotoOutput scans the folders once; the capture time is the file's modification
time). So a few distinct photos are taken through the API (POST snapshot: the synthetic
source's square moves, so each differs), camd is stopped, and they are copied under more
names a second apart, which is much faster than thousands of snapshots and gives the
same files camd would have saved.
"""
import json
import os
import shutil
import time

from camdclient import call


def snapshots(camd, count):
    """Takes `count` photos through the API; returns their file paths."""
    paths = []
    for _ in range(count):
        code, _, body = call(camd.sock, "POST", f"/v1/cameras/{camd.camera}/snapshot", timeout=30)
        if code != 201:
            raise RuntimeError(f"POST snapshot answered {code}: {body[:200]!r}")
        paths.append(os.path.join(camd.photos, camd.camera, json.loads(body)["name"]))
        time.sleep(0.05)
    return paths


def seed(camd, total, distinct=8, start=None):
    """Fills camd's library with `total` photos (`distinct` of them taken, the rest copies),
    one a second apart ending now, then starts camd again so it lists them all.
    camd must be running on entry; it is running on return."""
    sources = snapshots(camd, min(distinct, total))
    camd.stop()
    folder = os.path.join(camd.photos, camd.camera)
    end = start if start is not None else time.time()
    for index in range(len(sources), total):
        name = f"{camd.camera}-copy-{index:06d}.jpg"
        path = os.path.join(folder, name)
        shutil.copyfile(sources[index % len(sources)], path)
        stamp = end - (total - index)
        os.utime(path, (stamp, stamp))
    camd.start(timeout=60)
    return total
