#!/bin/bash
# Runs INSIDE the throwaway test VM (as root), started by scripts/test-mjpeg:
#
#   bash scripts/mjpeg-guest.sh RESULTS_DIR REPO_DIR MODULE_DIR
#
# MODULE_DIR holds v4l2loopback.ko built for this kernel. Loads it as an MJPEG
# camera (/dev/video10, card "loopcam") and runs scripts/mjpeg-checks.py, which
# feeds it and drives camctl and camd. Reports through files in RESULTS_DIR (the
# VM's writable share; the guest's exit status does not reach the host):
#   00-setup.log    the module load and the device
#   checks.log      the checks' output: PASS/FAIL lines, "N passed, N failed"
#   guest-status    0 when the checks passed, written last
# Never create Unix sockets in RESULTS_DIR (a socket on the 9p share hangs the
# guest); the checks use the guest's own /run.
set -u
export LC_ALL=C NO_COLOR=1

RES=${1:?usage: mjpeg-guest.sh RESULTS_DIR REPO_DIR MODULE_DIR}
REPO=${2:?usage: mjpeg-guest.sh RESULTS_DIR REPO_DIR MODULE_DIR}
MODDIR=${3:?usage: mjpeg-guest.sh RESULTS_DIR REPO_DIR MODULE_DIR}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SWIFT_BIN=${CAMD_SWIFT_BIN:-/opt/swift/usr/bin}
CHECK_TIMEOUT=${CAMD_MJPEG_CHECK_TIMEOUT:-420}
export PATH=$SWIFT_BIN:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
T0=$SECONDS
rm -f "$RES/guest-status"

finish() {
    dmesg >"$RES/dmesg.log" 2>&1
    echo "$1" >"$RES/guest-status"
    sync
    exit "$1"
}

# A private /tmp for the guest (scripts/guest-private-tmp.sh).
. "$HERE/guest-private-tmp.sh"
cd /
if private_tmp "$REPO" "$RES" "$HERE" "$MODDIR"; then tmpnote="private tmpfs /tmp"; else tmpnote="WARNING: could not make /tmp private"; fi
echo "[guest] kernel $(uname -r), $(nproc) cpu(s), $tmpnote"

# exclusive_caps=0: the node stays both output and capture, so ffmpeg can feed it
# again after a restart (with 1 it cannot once a feeder has exited).
{
    echo "== modprobe videodev; insmod $MODDIR/v4l2loopback.ko"
    modprobe videodev &&
        insmod "$MODDIR/v4l2loopback.ko" devices=1 video_nr=10 card_label=loopcam exclusive_caps=0
    echo "insmod exit $?"
    udevadm settle --timeout=60
    for _ in $(seq 1 50); do [ -c /dev/video10 ] && break; sleep 0.2; done
    ls -l /dev/video* 2>&1
    v4l2-ctl -d /dev/video10 -D 2>&1
} >"$RES/00-setup.log" 2>&1
if ! [ -c /dev/video10 ]; then
    echo "[guest] v4l2loopback did not create /dev/video10 (see 00-setup.log)"
    { echo "FAIL: setup: v4l2loopback creates /dev/video10 (see 00-setup.log)"; echo "0 passed, 1 failed"; } >"$RES/checks.log"
    finish 1
fi
echo "[guest +$((SECONDS - T0))s] v4l2loopback loaded: /dev/video10 (loopcam); running mjpeg-checks.py"

(cd /tmp && timeout -k 10 "$CHECK_TIMEOUT" /usr/bin/python3 "$HERE/mjpeg-checks.py" "$REPO" "$RES" </dev/null) \
    >"$RES/checks.log" 2>&1
rc=$?
grep -E '^(PASS|FAIL):' "$RES/checks.log" | sed 's/^/[guest]   /'
last=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$RES/checks.log" | tail -1)
if [ -z "$last" ]; then
    # Timed out or crashed: count what ran, and the end that never came as a failure.
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        echo "FAIL: the checks finish within ${CHECK_TIMEOUT}s (timed out)"
    else
        echo "FAIL: mjpeg-checks.py ends with its closing line (exit $rc)"
    fi >>"$RES/checks.log"
    tail -15 "$RES/checks.log" | sed 's/^/[guest]   | /'
    last="$(grep -c '^PASS:' "$RES/checks.log") passed, $(grep -c '^FAIL:' "$RES/checks.log") failed"
    echo "$last" >>"$RES/checks.log"
fi
echo "[guest +$((SECONDS - T0))s] checks exit $rc: $last"
[ "$rc" = 0 ] && [ -n "$last" ] || finish 1
finish 0
