#!/bin/bash
# Runs INSIDE the throwaway test VM (as root), started by scripts/test-libcamera:
#
#   bash scripts/libcamera-guest.sh RESULTS_DIR REPO_DIR MODULE_DIR
#
# MODULE_DIR holds vimc.ko built for this kernel. Loads it (libcamera's vimc pipeline
# handler then offers one camera, "Sensor B") and runs scripts/libcamera-checks.py,
# which drives camctl and camd on it. Reports through files in RESULTS_DIR (the VM's
# writable share; the guest's exit status does not reach the host):
#   00-setup.log    the module load, the nodes, and `cam -l`
#   checks.log      the checks' output: PASS/FAIL lines, "N passed, N failed"
#   guest-status    0 when the checks passed, written last
# Never create Unix sockets in RESULTS_DIR (a socket on the 9p share hangs the
# guest); the checks use the guest's own /run.
set -u
export LC_ALL=C NO_COLOR=1

RES=${1:?usage: libcamera-guest.sh RESULTS_DIR REPO_DIR MODULE_DIR}
REPO=${2:?usage: libcamera-guest.sh RESULTS_DIR REPO_DIR MODULE_DIR}
MODDIR=${3:?usage: libcamera-guest.sh RESULTS_DIR REPO_DIR MODULE_DIR}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SWIFT_BIN=${CAMD_SWIFT_BIN:-/opt/swift/usr/bin}
CHECK_TIMEOUT=${CAMD_LIBCAMERA_CHECK_TIMEOUT:-420}
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

# vimc.ko is unsigned: it loads and taints the kernel, which is fine in a throwaway VM.
{
    echo "== modprobe videobuf2-vmalloc videobuf2-dma-contig videobuf2-v4l2 v4l2-tpg; insmod $MODDIR/vimc.ko"
    modprobe -a videobuf2-vmalloc videobuf2-dma-contig videobuf2-v4l2 v4l2-tpg &&
        insmod "$MODDIR/vimc.ko"
    echo "insmod exit $?"
    udevadm settle --timeout=60
    for _ in $(seq 1 50); do [ -c /dev/media0 ] && break; sleep 0.2; done
    ls -l /dev/media* /dev/video* /dev/v4l-subdev* 2>&1
    # libcamera's own tool, when installed (libcamera-tools), for comparison
    if command -v cam >/dev/null; then echo "== cam -l"; cam -l 2>&1; fi
} >"$RES/00-setup.log" 2>&1
if ! [ -c /dev/media0 ]; then
    echo "[guest] vimc did not create /dev/media0 (see 00-setup.log)"
    { echo "FAIL: setup: vimc creates /dev/media0 (see 00-setup.log)"; echo "0 passed, 1 failed"; } >"$RES/checks.log"
    finish 1
fi
echo "[guest +$((SECONDS - T0))s] vimc loaded: $(grep -c . <(ls /dev/video*)) video nodes; running libcamera-checks.py"

(cd /tmp && timeout -k 10 "$CHECK_TIMEOUT" /usr/bin/python3 "$HERE/libcamera-checks.py" "$REPO" "$RES" </dev/null) \
    >"$RES/checks.log" 2>&1
rc=$?
grep -E '^(PASS|FAIL):' "$RES/checks.log" | sed 's/^/[guest]   /'
last=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$RES/checks.log" | tail -1)
if [ -z "$last" ]; then
    # Timed out or crashed: count what ran, and the end that never came as a failure.
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        echo "FAIL: the checks finish within ${CHECK_TIMEOUT}s (timed out)"
    else
        echo "FAIL: libcamera-checks.py ends with its closing line (exit $rc)"
    fi >>"$RES/checks.log"
    tail -15 "$RES/checks.log" | sed 's/^/[guest]   | /'
    last="$(grep -c '^PASS:' "$RES/checks.log") passed, $(grep -c '^FAIL:' "$RES/checks.log") failed"
    echo "$last" >>"$RES/checks.log"
fi
echo "[guest +$((SECONDS - T0))s] checks exit $rc: $last"
[ "$rc" = 0 ] && [ -n "$last" ] || finish 1
finish 0
