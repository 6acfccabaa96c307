#!/usr/bin/env python3
"""Checks what `camctl devices --json` printed, for scripts/vivid-cli-checks.sh.

usage: camctl-devices-json.py FILE DEVICE ACCESSIBLE [OUTPUT_DEVICE]

ACCESSIBLE is "true" (DEVICE must be listed as accessible, with driver vivid)
or "false" (listed as not accessible, with a problem that names group video).
OUTPUT_DEVICE, if given, must not be listed. Prints what it found; exit
status 1 and the reason when something is off.
"""
import json
import sys


def check(path, device, accessible, output_device=None):
    """What was found, or raises ValueError with the reason."""
    try:
        data = json.load(open(path))
    except (OSError, ValueError) as error:
        raise ValueError(f"not JSON: {error}")
    if not isinstance(data, list):
        raise ValueError(f"top level is {type(data).__name__}, not an array")
    for index, entry in enumerate(data):
        # A device the user may not open has no card or driver name (camctl could not ask it).
        wanted = ("path", "accessible") + (("card", "driver") if isinstance(entry, dict) and entry.get("accessible") else ())
        missing = [k for k in wanted if not isinstance(entry, dict) or k not in entry]
        if missing:
            raise ValueError(f"element {index} lacks {missing}")
        if not isinstance(entry["accessible"], bool):
            raise ValueError(f"element {index}: accessible is {entry['accessible']!r}, not a bool")
    mine = [entry for entry in data if entry["path"] == device]
    if not mine:
        raise ValueError(f"no element with path {device}")
    if output_device and any(entry["path"] == output_device for entry in data):
        raise ValueError(f"lists the output device {output_device}")
    entry = mine[0]
    if accessible:
        if entry["accessible"] is not True or entry["driver"] != "vivid":
            raise ValueError(f"{device}: accessible {entry['accessible']!r}, driver {entry['driver']!r} (want true, vivid)")
        return f"{len(data)} device(s)"
    if entry["accessible"] is not False or "video" not in (entry.get("problem") or ""):
        raise ValueError(f"accessible={entry['accessible']!r}, problem={entry.get('problem')!r}")
    return entry["problem"][:120]


if __name__ == "__main__":
    try:
        print(check(sys.argv[1], sys.argv[2], sys.argv[3] == "true", sys.argv[4] if len(sys.argv) > 4 else None))
    except ValueError as error:
        print(error)
        sys.exit(1)
