#!/bin/sh
# PID 1 of the test VM before systemd (scripts/test-systemd boots the kernel
# with init=SHARE/preinit.sh). The root file system is the host's, read-only
# over 9p; this gives systemd a writable, throwaway root instead:
#   an overlay (lower: /, upper: a tmpfs) with /.dockerenv removed (else
#   systemd thinks it runs in a container), an empty /etc/fstab, a fresh /tmp
#   (else systemd-tmpfiles wades through the host's /tmp), and the results
#   share mounted at its own path; then pivot_root and exec systemd.
# The share is this script's folder: the host copied it there.
SHARE=$(cd "$(dirname "$0")" && pwd)
NEW=/run/camd-root
log() { echo "[preinit] $*" >/dev/console 2>/dev/null || echo "[preinit] $*"; }
die() { log "FAILED: $*"; echo "preinit: $*" >"$SHARE/preinit-failed" 2>/dev/null; sleep 2; echo o >/proc/sysrq-trigger; exit 1; }

mountpoint -q /proc || mount -t proc proc /proc || die "mount /proc"
mountpoint -q /sys || mount -t sysfs sysfs /sys
mountpoint -q /dev || mount -t devtmpfs devtmpfs /dev
mount -t tmpfs -o mode=0755 camd-run /run || die "tmpfs on /run"
mkdir -p /run/ovl/upper /run/ovl/work "$NEW" || die "mkdir in /run"
mount -t overlay camd-root -o lowerdir=/,upperdir=/run/ovl/upper,workdir=/run/ovl/work "$NEW" \
    || die "overlay root"

rm -f "$NEW/.dockerenv" "$NEW/run/.containerenv"
: >"$NEW/etc/fstab"
# The host's machine-id would be shared with the host's journal; make a fresh one.
rm -f "$NEW/etc/machine-id"; : >"$NEW/etc/machine-id"
mount -t tmpfs -o mode=1777 camd-tmp "$NEW/tmp" || die "tmpfs on /tmp"
# A checkout under /tmp (a scratch clone) would vanish under that fresh /tmp: bind it back.
REPO=$(sed -n 's/^REPO=//p' "$SHARE/test.env" 2>/dev/null)
case "$REPO" in
    /tmp/*) mkdir -p "$NEW$REPO" && mount --bind "$REPO" "$NEW$REPO" || die "bind $REPO into the fresh /tmp" ;;
esac
mkdir -p "$NEW$SHARE" || die "mkdir $SHARE in the overlay"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 virtme.initmount0 "$NEW$SHARE" || die "mount the share at $SHARE"
# The new root starts without /run (systemd mounts its own tmpfs there).
mkdir -p "$NEW/oldroot"

cd "$NEW" || die "cd $NEW"
pivot_root . oldroot || die "pivot_root"
cd /
# /run/ovl (the overlay's upper) stays reachable through the mount itself.
umount -l /oldroot 2>/dev/null
log "root is an overlay; starting systemd"
exec /lib/systemd/systemd --system
