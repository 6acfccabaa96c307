#!/usr/bin/env python3
"""Runs INSIDE the throwaway VM started by scripts/bench/vm-poll-trace (as root).

    python3 vm-poll-trace-guest.py --out DIR --camd PATH [--polls N] [--period S]

Where a poll's answer time goes, on the daemon's side, for camd and for µStreamer on vivid
(640x480 YUYV, 25 fps, as vm-compare's poll phase runs them): a client polls each every
`--period` s, first untraced while camd learns the period, then `--polls` times while
`perf record` takes the system calls and scheduling of the daemon's threads and of the
client. Each poll is split at the system calls that mark it:

  client's send   from the client's connect() to its send() of the request
  to accept       from connect() to the daemon's accept() returning the connection
  accept to read  from there to the daemon's read() returning the request
  read to write   from there to the daemon's write() of the answer (its own work)
  write           the write() itself
  to the client   from the write() to the client's first read() with bytes
  total           from connect() to that read()

and the other threads of the daemon that made system calls between the connect and the
answer are counted (what ran beside the poll). perf slows what it traces: compare the two
daemons within one run, not with vm-compare's figures. Results: DIR/vm-poll-trace.txt,
DIR/vm-poll-trace.json, and each daemon's `perf script` text (DIR/NAME.script).
"""
import argparse
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
_spec = importlib.util.spec_from_file_location("vm_compare_guest", os.path.join(HERE, "vm-compare-guest.py"))
guest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(guest)

EVENTS = "raw_syscalls:sys_enter,raw_syscalls:sys_exit,sched:sched_switch,sched:sched_wakeup"
# x86-64 system call numbers
CONNECT, ACCEPT, ACCEPT4 = 42, 43, 288
READS = (0, 19, 45, 47)  # read, readv, recvfrom, recvmsg
WRITES = (1, 20, 44, 46)  # write, writev, sendto, sendmsg
LINE = re.compile(r"^\s*(\S.*?)\s+(\d+)/(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+):\s*(.*)$")
PARTS = ("client's send", "to accept", "accept to read", "read to write", "write", "to the client", "total")


def traced(name, target, path, pid, args, age_of):
    """The daemon at `pid` polled untraced until it has learned the period, then traced."""
    guest.poll_client(target, path, args.period, 8, pid, age_of, 0.1)
    data = os.path.join(guest.WORK, f"{name}.data")
    # Attached to the two processes: the whole system (-a) is mostly perf's own calls, and with
    # --exclude-perf the client's and the event loop's were missing. Attached, perf stops taking
    # theirs after some polls in some runs: the table says how many polls it split.
    recorder = subprocess.Popen(["perf", "record", "-q", "-m", "1024", "-p", f"{pid},{os.getpid()}", "-o", data, "-e", EVENTS,
                                 "--", "sleep", str(args.period * args.polls + 12)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(8)  # perf takes seconds to start in the emulated VM
    result = guest.poll_client(target, path, args.period, args.polls, pid, age_of, 0.1)
    recorder.wait()
    script = os.path.join(args.out, f"{name}.script")
    with open(script, "w") as f:
        subprocess.run(["perf", "script", "-i", data, "-F", "comm,pid,tid,cpu,time,event,trace"], stdout=f,
                       stderr=subprocess.DEVNULL, check=False)
    return {"p50": result["p50"], "split": split(script, os.getpid())}


def split(script, client):
    """Each traced poll's parts (PARTS), in ms, from `perf script` text."""
    events = []
    with open(script) as f:
        for line in f:
            m = LINE.match(line)
            if m:
                comm, pid, tid, _, t, kind, rest = m.groups()
                number = re.match(r"NR (\d+)", rest)
                events.append((float(t) * 1000, int(pid), int(tid), kind, int(number.group(1)) if number else None, rest))
    connects = [i for i, e in enumerate(events) if e[1] == client and e[3] == "raw_syscalls:sys_enter" and e[4] == CONNECT]
    polls = []
    for n, start in enumerate(connects):
        window = events[start:connects[n + 1] if n + 1 < len(connects) else len(events)]

        def first(test):
            return next((e for e in window if test(e)), None)
        t0 = events[start][0]
        accepted = first(lambda e: e[1] != client and e[3] == "raw_syscalls:sys_exit" and e[4] in (ACCEPT, ACCEPT4)
                         and not e[5].endswith("= -11"))
        if not accepted:
            continue
        loop = accepted[2]
        read = first(lambda e: e[2] == loop and e[0] > accepted[0] and e[3] == "raw_syscalls:sys_exit" and e[4] in READS
                     and re.search(r"= [1-9]", e[5]))
        write = first(lambda e: e[2] == loop and e[0] > accepted[0] and e[3] == "raw_syscalls:sys_enter" and e[4] in WRITES)
        if not read or not write:
            continue
        written = first(lambda e: e[2] == loop and e[0] > write[0] and e[3] == "raw_syscalls:sys_exit" and e[4] in WRITES)
        sent = first(lambda e: e[1] == client and e[3] == "raw_syscalls:sys_enter" and e[4] in WRITES)
        received = first(lambda e: e[1] == client and e[0] > write[0] and e[3] == "raw_syscalls:sys_exit" and e[4] in READS
                         and re.search(r"= [1-9]", e[5]))
        if not written or not sent or not received:
            continue
        beside = {e[2] for e in window if e[1] != client and e[2] != loop and e[3] == "raw_syscalls:sys_enter" and e[0] < written[0]}
        polls.append({"client's send": sent[0] - t0, "to accept": accepted[0] - t0, "accept to read": read[0] - accepted[0],
                      "read to write": write[0] - read[0], "write": written[0] - write[0], "to the client": received[0] - write[0],
                      "total": received[0] - t0, "threads beside": len(beside)})
    return polls


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--camd", required=True)
    ap.add_argument("--polls", type=int, default=25)
    ap.add_argument("--period", type=float, default=2.0)
    args = ap.parse_args()
    args.idle = 2
    os.makedirs(guest.WORK, exist_ok=True)
    os.chdir(guest.WORK)
    res = {"guest": f"{os.cpu_count()} vCPU(s), kernel {os.uname().release}, QEMU TCG (emulated)"}
    try:
        if not guest.load_vivid():
            raise RuntimeError("vivid did not create /dev/video0")
        guest.run([args.camd, "--help"], timeout=120)  # the runtime's first load over 9p, untimed
        camd = guest.vivid_camd(args, "trace")
        guest.reset_fps()
        camd.start(timeout=120)
        try:
            time.sleep(3)
            res["camd"] = traced("camd", camd.sock, "/v1/cameras/vivid/snapshot", camd.pid, args, guest.camd_age)
        finally:
            camd.stop()
        guest.ustreamer_phase(args, then=lambda proc, _: res.update(
            ustreamer=traced("ustreamer", guest.USTREAMER, "/snapshot", proc.pid, args, guest.ustreamer_age)),
            log_name="ustreamer-trace.log")
    except Exception:  # noqa: BLE001 - the host must hear about any failure through the share
        import traceback
        res["error"] = traceback.format_exc()
    lines = [f"where a poll's answer time goes, every {args.period:g} s, traced with perf ({res['guest']})"]
    if "error" in res:
        lines += ["ERROR:", res["error"]]
    if "camd" in res and "ustreamer" in res:
        c, u = res["camd"]["split"], res["ustreamer"]["split"]
        lines.append(f"{'p50, ms':<24} {'camd':>8} {'µStreamer':>10}   (polls split: {len(c)} and {len(u)})")
        for part in PARTS + ("threads beside",):
            a, b = [p[part] for p in c], [p[part] for p in u]
            if a and b:
                lines.append(f"{part:<24} {statistics.median(a):>8.2f} {statistics.median(b):>10.2f}")
        lines.append(f"{'answer p50 as the client timed it':<24} {res['camd']['p50']:>8.2f} {res['ustreamer']['p50']:>10.2f}")
    with open(os.path.join(args.out, "vm-poll-trace.json"), "w") as f:
        json.dump(res, f, indent=1)
    with open(os.path.join(args.out, "vm-poll-trace.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    os.sync()
    return 0


if __name__ == "__main__":
    sys.exit(main())
