#!/usr/bin/env python3
"""The functions camd runs, for the link order that puts them together (issue 16: memory).

    scripts/bench/hot-functions.py --camd BINARY [--out FILE]       # about 5 minutes
    scripts/bench/hot-functions.py --check --camd BINARY [--out FILE]

The kernel maps a program's code from its file 64 KiB at a time (fault-around), so one
function run anywhere in a 64 KiB block makes the whole block resident. In camd's binary
the code that runs, about 2 MiB, was spread over 23 MiB of text, and nearly every block
held some of it. lld's `--symbol-ordering-file` puts the functions listed first, together;
Package.swift passes Sources/camd/hot-functions.txt to it for release builds. The list
only moves code: a name no longer in the binary is skipped, and a function missing from
the list still runs, from a block of its own.

The list is the functions valgrind's callgrind saw run in a release camd on the host's
synthetic source: start, status, metrics, the web page, snapshots, steady polls every
0.5 s and every 2 s, a photo, an MJPEG stream, stop. It needs a binary built with one
section per function (scripts/lib/release-flags.sh): functions that share a section move
together, as the toolchain's own libraries' do (built without), which are listed last so
that their cold code does not sit between the hot. Names are sorted, so that a new list
diffs against the old one. Adding the functions on the pages camd touched on vivid's V4L2
camera (`scripts/bench/vm-compare --pages-only`) was tried: no less memory in the VM.

--check prints how many of the list's names the binary has and how large the block of
listed code is: a list gone stale after many changes shows as names not found.
SwiftPM does not know the list is an input of the link: after writing it, remove the
binary (`rm .build/release/camd`) so that the next build links it anew.
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import camdclient  # noqa: E402
from camdclient import Camd, call, read_stream  # noqa: E402

DEFAULT_OUT = os.path.join(camdclient.REPO, "Sources", "camd", "hot-functions.txt")
HEADER = """\
# camd's hot functions, first in its code when linked (lld --symbol-ordering-file; Package.swift).
# Written by scripts/bench/hot-functions.py from what callgrind saw run. Write it anew after large
# changes: a stale list costs memory, not correctness.
"""


def code_symbols(binary):
    """(address, size, name) of every function in `binary`, by address."""
    listing = subprocess.run(["nm", "-n", "-S", "--defined-only", binary], capture_output=True, text=True,
                             check=True).stdout
    symbols = []
    for line in listing.splitlines():
        fields = line.split()
        if len(fields) == 4 and fields[2] in "tTwW":
            symbols.append((int(fields[0], 16), int(fields[1], 16), fields[3]))
    return symbols


def in_shared_sections(binary):
    """Names of the functions that share their file's one `.text` section with the rest of
    the file: in the toolchain's static libraries (the standard library, Foundation and the
    runtime are built without a section per function), and in any object of the build
    beside `binary` built without one. Listing one moves its whole section."""
    libraries = glob.glob(os.path.join(os.path.dirname(os.path.realpath(shutil.which("swiftc"))),
                                       "..", "lib", "swift_static", "linux", "*.a"))
    objects = glob.glob(os.path.join(os.path.dirname(os.path.realpath(binary)), "*.build", "*.o"))
    names = set()
    for start in range(0, len(libraries + objects), 200):
        table = subprocess.run(["objdump", "-t", *(libraries + objects)[start:start + 200]], capture_output=True,
                               text=True).stdout
        names.update(m.group(1) for m in re.finditer(r"^[0-9a-f]+ [lgw ]\S* +F \.text\t[0-9a-f]+ (\S+)$", table, re.M))
    return names


def ran_under_callgrind(source):
    """Names of the functions a release camd runs on the synthetic source, seen by callgrind."""
    workdir = tempfile.mkdtemp(prefix="camd-hot-")
    # valgrind 3.19 cannot read Swift 6's DWARF 5: a copy without debug information it can.
    binary = os.path.join(workdir, "camd")
    subprocess.run(["objcopy", "--strip-debug", source, binary], check=True)
    camd = Camd(binary=binary, size="640x480", fps=10, log_level="warning",
                wrapper=["valgrind", "--tool=callgrind", "--demangle=no", "--dump-line=no",
                         "--compress-strings=no", f"--callgrind-out-file={workdir}/callgrind.out.%p"])
    camd.start(timeout=300)
    try:
        snapshot = f"/v1/cameras/{camd.camera}/snapshot"
        for target in ("/v1/status", "/metrics", "/", "/v1/cameras", f"/v1/cameras/{camd.camera}"):
            call(camd.sock, "GET", target, timeout=120)
        for period, count in ((0.5, 12), (2.0, 8)):  # steady polls: learnt, then answered from a JPEG made ahead
            due = time.monotonic()
            for _ in range(count):
                time.sleep(max(0.0, due - time.monotonic()))
                due += period
                code, _, _ = call(camd.sock, "GET", snapshot, timeout=120)
                assert code == 200, f"{snapshot}: {code}"
        call(camd.sock, "GET", f"{snapshot}?max_age_ms=0", timeout=120)
        code, _, _ = call(camd.sock, "POST", snapshot, timeout=120)  # saved as a photo
        assert code in (200, 201), f"POST {snapshot}: {code}"
        _, _, parts = read_stream(camd.sock, f"/v1/cameras/{camd.camera}/stream", seconds=8)
        print(f"hot-functions: callgrind run: MJPEG stream gave {len(parts)} parts", file=sys.stderr)
    finally:
        camd.stop(timeout=300)
    names = set()
    for dump in glob.glob(os.path.join(workdir, "callgrind.out*")):
        with open(dump, errors="replace") as f:
            for line in f:
                if line.startswith(("fn=", "cfn=")):
                    # callgrind marks a function's recursion depth as NAME'2
                    names.add(re.sub(r"'\d+$", "", line.split("=", 1)[1].strip()))
    return names


def check(binary, listed, symbols):
    present = {name for _, _, name in symbols}
    found = {name for name in listed if name in present}
    addresses = [(address, size) for address, size, name in symbols if name in found]
    print(f"hot-functions: {len(found)} of {len(listed)} listed names are in {binary}")
    if addresses:
        low = min(a for a, _ in addresses)
        high = max(a + s for a, s in addresses)
        listed_bytes = sum(s for _, s in addresses)
        print(f"hot-functions: the listed code is {listed_bytes / 2**20:.2f} MiB, laid out in "
              f"{(high - low) / 2**20:.2f} MiB from {low:#x} (the rest is code sharing their sections)")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--camd", required=True, help="a release camd built with one section per function")
    parser.add_argument("--ran", help="the names callgrind saw run, from an earlier run on the same binary")
    parser.add_argument("--out", default=DEFAULT_OUT)
    parser.add_argument("--check", action="store_true", help="only say how much of --out the binary has")
    args = parser.parse_args()
    symbols = code_symbols(args.camd)
    if args.check:
        with open(args.out) as f:
            listed = [line.split("#", 1)[0].strip() for line in f]
        check(args.camd, [name for name in listed if name], symbols)
        return
    present = {name for _, _, name in symbols}
    if args.ran:
        with open(args.ran) as f:
            ran = {line.strip() for line in f} & present
    else:
        ran = ran_under_callgrind(args.camd) & present
        saved = os.path.join(tempfile.gettempdir(), "camd-hot-functions-ran.txt")
        with open(saved, "w") as f:
            f.writelines(name + "\n" for name in sorted(ran))
        print(f"hot-functions: the names callgrind saw run are also in {saved} (for --ran)")
    shared = in_shared_sections(args.camd)
    # The functions that move alone first, densely; the shared sections after them, so that
    # their cold code is not interleaved with the hot.
    listed = sorted(ran - shared) + sorted(ran & shared)
    with open(args.out, "w") as f:
        f.write(HEADER)
        f.writelines(name + "\n" for name in listed)
    print(f"hot-functions: {len(ran)} functions ran under callgrind, {len(ran & shared)} of them in shared sections; "
          f"wrote {len(listed)} names to {args.out}")
    check(args.camd, listed, symbols)


if __name__ == "__main__":
    main()
