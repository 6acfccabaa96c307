#!/usr/bin/env python3
"""What scripts/systemd-guest/test.sh asks of camd's answers and of the guest, so the
shell script holds no Python of its own.

    probe.py camera STATUS_JSON [listed]   the vivid camera's id in a saved /v1/status reply
    probe.py pid STATUS_JSON               the pid in a saved /v1/status reply
    probe.py open-device PATH              "opened", or why not (strerror), opening PATH read-write
    probe.py priorities                    the PRIORITY values in `journalctl -o json` on stdin
"""
import json
import os
import sys


def camera(path, listed=False):
    """The id of the vivid camera (the only camera in the VM): one naming vivid or
    /dev/video0 that runs, else any running one. With `listed`, any state will do,
    and the state follows the id ("video0 starting")."""
    cameras = json.load(open(path)).get("cameras") or []
    candidates = cameras if listed else [c for c in cameras if c.get("state", "running") == "running"]
    named = [c for c in candidates if any(k in json.dumps(c).lower() for k in ("vivid", "/dev/video0"))]
    for c in named or candidates:
        return f"{c.get('id', '')} {c.get('state', '')}" if listed else c.get("id", "")
    return ""


def open_device(path):
    try:
        os.close(os.open(path, os.O_RDWR))
        return "opened"
    except OSError as error:
        return error.strerror


def main(args):
    try:
        if args[0] == "camera":
            print(camera(args[1], args[2:] == ["listed"]))
        elif args[0] == "pid":
            print(json.load(open(args[1])).get("pid"))
        elif args[0] == "open-device":
            answer = open_device(args[1])
            print(answer)
            return 0 if answer == "opened" else 1
        elif args[0] == "priorities":
            print(" ".join(sorted({json.loads(line).get("PRIORITY", "?") for line in sys.stdin if line.strip()})))
        else:
            raise IndexError
    except IndexError:
        print(__doc__, file=sys.stderr)
        return 64
    except (OSError, ValueError, AttributeError):  # no reply saved, or not the JSON expected: print nothing
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
