#!/bin/bash
# End-to-end checks of camctl against the vivid driver. Runs INSIDE the test VM
# as root (started by scripts/vivid-guest.sh, which loads vivid first).
#
#   bash scripts/vivid-cli-checks.sh RESULTS_DIR [REPO_DIR]
#
# Prints one PASS/FAIL line per check and closes with "N passed, N failed".
# Exits non-zero if any check failed. Each camctl run's stdout/stderr and the
# JPEGs it wrote are kept in RESULTS_DIR/cli/.
#
# Environment: CAMCTL (default REPO/.build/debug/camctl), VIVID_DEV
# (/dev/video0), VIVID_OUT_DEV (/dev/video1).
set -u
export LC_ALL=C

RES=${1:?usage: vivid-cli-checks.sh RESULTS_DIR [REPO_DIR]}
REPO=${2:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
CAMCTL=${CAMCTL:-$REPO/.build/debug/camctl}
DEV=${VIVID_DEV:-/dev/video0}
OUTDEV=${VIVID_OUT_DEV:-/dev/video1}
PY=/usr/bin/python3
SCRIPTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NOBODY=65534
VIDEO_GID=$(getent group video | cut -d: -f3)
VIDEO_GID=${VIDEO_GID:-44}

LOGS=$RES/cli
mkdir -p "$LOGS"
# Scratch dir in the guest's own /tmp; world-writable so uid 65534 can write.
W=$(mktemp -d /tmp/vivid-cli.XXXXXX)
chmod 1777 "$W"

passed=0
failed=0
pass() { passed=$((passed + 1)); echo "PASS: $*"; }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
info() { echo "INFO: $*"; }

# run NAME TIMEOUT CMD... : runs CMD under `timeout`, stdout -> $LOGS/NAME.out,
# stderr -> $LOGS/NAME.err; sets RC (124 = timed out) and SECS.
run() {
    local name=$1 limit=$2; shift 2
    local t0=$SECONDS
    timeout -k 5 "$limit" "$@" >"$LOGS/$name.out" 2>"$LOGS/$name.err" </dev/null
    RC=$?
    SECS=$((SECONDS - t0))
    echo "+ [$name] rc=$RC ${SECS}s: $*" >>"$LOGS/commands.log"
}

# Shows the first lines of a run's stderr under a FAIL line.
show_err() {
    [ -s "$LOGS/$1.err" ] && sed -n '1,6s/^/      stderr: /p' "$LOGS/$1.err"
    return 0
}

rc_desc() { if [ "$1" = 124 ] || [ "$1" = 137 ]; then echo "timed out (rc=$1)"; else echo "rc=$1"; fi; }

# jpeg_check FILE [W H] : prints what FILE is (file(1)'s words: size, EXIF orientation);
# status 1 if it is not a whole JPEG or not WxH. Decoding every pixel is VividTests' job.
jpeg_check() {
    local what
    what=$(file -b "$1" 2>&1)
    case "$what" in
        "JPEG image data"*) ;;
        *) echo "not a JPEG: $what"; return 1 ;;
    esac
    # A file cut short has no end marker (FF D9) as its last bytes.
    if [ "$(tail -c 2 "$1" | od -An -tx1 | tr -d ' \n')" != ffd9 ]; then
        echo "a JPEG cut short (no FF D9 at the end)"; return 1
    fi
    local size
    size=$(grep -oE ', [0-9]+x[0-9]+,' <<<"$what" | tail -1 | tr -d ', ')
    if [ "${2:-0}" != 0 ] && [ "$size" != "${2}x${3}" ]; then
        echo "size is ${size:-unknown}, not ${2}x${3}"; return 1
    fi
    echo "JPEG $size$(grep -oE 'orientation=[^,]*' <<<"$what" | sed 's/^/, /')"
}

# pids that hold DEV open (one `find`: forking per fd is slow under TCG)
holders() {
    find /proc/[0-9]*/fd -maxdepth 1 -lname "$1" 2>/dev/null | cut -d/ -f3 | sort -u | tr '\n' ' '
}

# Waits up to $2 s until DEV can be opened again (vivid re-registers its nodes
# after a disconnect once the last file handle is closed).
wait_dev_usable() {
    local i
    for ((i = 0; i < $2 * 2; i++)); do
        v4l2-ctl -d "$1" -D >/dev/null 2>&1 && return 0
        sleep 0.5
    done
    return 1
}

echo "camctl: $CAMCTL"
echo "device: $DEV (output device $OUTDEV), video gid $VIDEO_GID, scratch $W"
if [ ! -x "$CAMCTL" ]; then
    echo "NOTE: $CAMCTL does not exist or is not executable; every check below will fail"
fi

# ---------------------------------------------------------------- devices
run devices 120 "$CAMCTL" devices
if [ "$RC" != 0 ]; then
    fail "camctl devices: $(rc_desc $RC)"; show_err devices
elif ! grep -Eq "(^|[^[:alnum:]/])$DEV([^[:digit:]]|\$)" "$LOGS/devices.out"; then
    fail "camctl devices: $DEV not listed"; sed 's/^/      stdout: /' "$LOGS/devices.out" | head -10
elif grep -Eq "(^|[^[:alnum:]/])$OUTDEV([^[:digit:]]|\$)" "$LOGS/devices.out"; then
    fail "camctl devices: lists the output device $OUTDEV"; sed 's/^/      stdout: /' "$LOGS/devices.out" | head -10
else
    pass "camctl devices lists $DEV and not $OUTDEV (${SECS}s)"
fi

run devices-json 120 "$CAMCTL" devices --json
if [ "$RC" != 0 ]; then
    fail "camctl devices --json: $(rc_desc $RC)"; show_err devices-json
elif why=$("$PY" "$SCRIPTS/camctl-devices-json.py" "$LOGS/devices-json.out" "$DEV" true "$OUTDEV"); then
    pass "camctl devices --json: valid, $DEV accessible=true ($why, ${SECS}s)"
else
    fail "camctl devices --json: $why"; head -c 600 "$LOGS/devices-json.out" | sed 's/^/      stdout: /'; echo
fi

# ---------------------------------------------------------------- snapshot
rm -f "$W/a.jpg"
run snapshot-640x480 180 "$CAMCTL" snapshot -d "$DEV" --size 640x480 -o "$W/a.jpg"
if [ "$RC" != 0 ]; then
    fail "snapshot --size 640x480: $(rc_desc $RC)"; show_err snapshot-640x480
elif why=$(jpeg_check "$W/a.jpg" 640 480); then
    cp "$W/a.jpg" "$LOGS/a.jpg"
    pass "snapshot --size 640x480: $why (${SECS}s)"
else
    fail "snapshot --size 640x480: $why"
fi

run snapshot-stdout 180 "$CAMCTL" snapshot -d "$DEV" --size 640x480 -o -
if [ "$RC" != 0 ]; then
    fail "snapshot -o - : $(rc_desc $RC)"; show_err snapshot-stdout
elif why=$(jpeg_check "$LOGS/snapshot-stdout.out" 640 480); then
    pass "snapshot -o - writes the JPEG to stdout: $why (${SECS}s)"
else
    fail "snapshot -o - : stdout is not the JPEG: $why"
fi

# ---------------------------------------------------------------- image options (issue 5)
# camctl passes its image options on: each output has the asked size (and the EXIF turn).
# Where the bars land is GeometryTests' (cover, quarter turn, flip); EXIF Make/Model and
# the pixel size tags of each of these snapshots are VividTests.snapshotsNameTheCardAndTheirOwnSizeInEXIF's.
image_option() {  # NAME WANT_SIZE WANT_TEXT OPTIONS...
    local name=$1 want=$2 text=$3 w h
    shift 3
    w=${want%x*} h=${want#*x}
    rm -f "$W/$name.jpg"
    run "snapshot-$name" 180 "$CAMCTL" snapshot --no-daemon -d "$DEV" --size 640x480 "$@" -o "$W/$name.jpg"
    if [ "$RC" != 0 ]; then
        fail "snapshot $*: $(rc_desc $RC)"; show_err "snapshot-$name"
    elif ! why=$(jpeg_check "$W/$name.jpg" "$w" "$h"); then
        fail "snapshot $*: $why"
    elif [ -n "$text" ] && ! grep -qF "$text" <<<"$why"; then
        fail "snapshot $*: $why, want $text"
    else
        cp "$W/$name.jpg" "$LOGS/$name.jpg"
        pass "snapshot $*: $why (${SECS}s)"
    fi
}
image_option cover 320x320 "" --width 320 --height 320 --fit cover
image_option rotate90 240x320 "" --rotate 90 --max 320
image_option exif-flip 640x480 "orientation=[*2*]" --rotate exif --flip h

# ---------------------------------------------------------------- error exits
rm -f "$W/x.jpg"
run snapshot-outdev 120 "$CAMCTL" snapshot -d "$OUTDEV" -o "$W/x.jpg"
if [ "$RC" != 6 ]; then
    fail "snapshot -d $OUTDEV (output device): $(rc_desc $RC), want 6"; show_err snapshot-outdev
elif ! grep -Eiq 'output device|not a (video )?capture|not a camera|cannot capture' "$LOGS/snapshot-outdev.err"; then
    fail "snapshot -d $OUTDEV: exit 6 but stderr does not say it is an output device / not a camera"
    show_err snapshot-outdev
elif [ -e "$W/x.jpg" ]; then
    fail "snapshot -d $OUTDEV: exit 6 but $W/x.jpg was written"
else
    pass "snapshot -d $OUTDEV exits 6: $(head -1 "$LOGS/snapshot-outdev.err")"
fi

run snapshot-nodev 120 "$CAMCTL" snapshot -d /dev/video99 -o "$W/x.jpg"
if [ "$RC" = 3 ]; then
    pass "snapshot -d /dev/video99 exits 3: $(head -1 "$LOGS/snapshot-nodev.err")"
else
    fail "snapshot -d /dev/video99: $(rc_desc $RC), want 3"; show_err snapshot-nodev
fi

# ---------------------------------------------------------------- permissions
# uid 65534 must be able to reach the binary (every folder on the way needs o+x)
# and the Swift runtime (/opt/swift/usr/lib/swift/linux, via the binary's RUNPATH).
if [ -e "$CAMCTL" ] && ! setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups test -x "$CAMCTL"; then
    info "uid $NOBODY cannot execute $CAMCTL:"; namei -l "$CAMCTL" 2>&1 | sed 's/^/      /'
fi
rm -f "$W/nobody.jpg"
run snapshot-nobody 180 setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups "$CAMCTL" snapshot -d "$DEV" -o "$W/nobody.jpg"
if [ "$RC" != 4 ]; then
    fail "snapshot as uid $NOBODY without groups: $(rc_desc $RC), want 4"; show_err snapshot-nobody
elif ! grep -qw video "$LOGS/snapshot-nobody.err"; then
    fail "snapshot as uid $NOBODY without groups: exit 4 but stderr does not mention group 'video'"
    show_err snapshot-nobody
elif [ -e "$W/nobody.jpg" ]; then
    fail "snapshot as uid $NOBODY without groups: exit 4 but $W/nobody.jpg exists"
else
    pass "snapshot as uid $NOBODY without groups exits 4: $(head -1 "$LOGS/snapshot-nobody.err")"
fi

rm -f "$W/nobody-video.jpg"
run snapshot-nobody-video 180 setpriv --reuid=$NOBODY --regid=$NOBODY --groups=$VIDEO_GID "$CAMCTL" snapshot -d "$DEV" -o "$W/nobody-video.jpg"
if [ "$RC" != 0 ]; then
    fail "snapshot as uid $NOBODY in group video ($VIDEO_GID): $(rc_desc $RC), want 0"; show_err snapshot-nobody-video
elif why=$(jpeg_check "$W/nobody-video.jpg"); then
    pass "snapshot as uid $NOBODY in group video: $why (${SECS}s)"
else
    fail "snapshot as uid $NOBODY in group video: exit 0 but $why"
fi

# ---------------------------------------------------------------- output errors
mkdir -p "$W/cwd"
rm -rf /nonexistent-dir 2>/dev/null
tmp_before=$(ls -A /tmp)
run snapshot-badout 120 bash -c 'cd "$1" && shift && exec "$@"' _ "$W/cwd" "$CAMCTL" snapshot -d "$DEV" -o /nonexistent-dir/a.jpg
left=$(ls -A "$W/cwd"; ls -d /nonexistent-dir 2>/dev/null; comm -13 <(echo "$tmp_before") <(ls -A /tmp))
if [ "$RC" != 8 ]; then
    fail "snapshot -o /nonexistent-dir/a.jpg: $(rc_desc $RC), want 8"; show_err snapshot-badout
elif [ -n "$left" ]; then
    fail "snapshot -o /nonexistent-dir/a.jpg: exit 8 but left behind: $(echo $left)"
else
    pass "snapshot -o /nonexistent-dir/a.jpg exits 8, nothing left behind: $(head -1 "$LOGS/snapshot-badout.err")"
fi

# ---------------------------------------------------------------- controls
run controls-list 120 "$CAMCTL" controls -d "$DEV"
if [ "$RC" = 0 ] && grep -qi brightness "$LOGS/controls-list.out"; then
    pass "camctl controls lists brightness (${SECS}s)"
else
    fail "camctl controls -d $DEV: $(rc_desc $RC), output has no 'brightness'"; show_err controls-list
fi
run controls-set 120 "$CAMCTL" controls -d "$DEV" brightness=200
now=$(v4l2-ctl -d "$DEV" -C brightness 2>/dev/null | awk '{print $2}')
if [ "$RC" = 0 ] && [ "$now" = 200 ]; then
    pass "camctl controls brightness=200 sets it (v4l2-ctl reads $now)"
else
    fail "camctl controls brightness=200: $(rc_desc $RC), v4l2-ctl reads '$now'"; show_err controls-set
fi
v4l2-ctl -d "$DEV" -c brightness=128 >/dev/null 2>&1

# ---------------------------------------------------------------- usage / format / busy
run usage 60 "$CAMCTL" snapshot --no-such-option
if [ "$RC" = 64 ]; then
    pass "snapshot --no-such-option exits 64"
else
    fail "snapshot --no-such-option: $(rc_desc $RC), want 64"; show_err usage
fi

# vivid offers only raw formats (YUYV, NV12, RGB3, ... no MJPG)
rm -f "$W/fmt.jpg"
run snapshot-badformat 120 "$CAMCTL" snapshot -d "$DEV" --format MJPG -o "$W/fmt.jpg"
if [ "$RC" = 6 ] && [ ! -e "$W/fmt.jpg" ]; then
    pass "snapshot --format MJPG (vivid has none) exits 6: $(head -1 "$LOGS/snapshot-badformat.err")"
else
    fail "snapshot --format MJPG: $(rc_desc $RC), want 6 and no file"; show_err snapshot-badformat
fi

# While another process streams, vivid answers S_FMT/REQBUFS with EBUSY.
v4l2-ctl -d "$DEV" --set-fmt-video=width=640,height=480 --set-parm=5 >/dev/null 2>&1
timeout 120 v4l2-ctl -d "$DEV" --stream-mmap --stream-count=500 --stream-to=/dev/null \
    >"$LOGS/busy-streamer.log" 2>&1 </dev/null &
streamer=$!
for ((i = 0; i < 100; i++)); do
    [ -n "$(holders "$DEV" | tr -d ' ')" ] && break
    sleep 0.1
done
sleep 2                                    # past REQBUFS/STREAMON
rm -f "$W/busy.jpg"
run snapshot-busy 60 "$CAMCTL" snapshot -d "$DEV" -o "$W/busy.jpg"
if ! kill -0 $streamer 2>/dev/null; then
    fail "busy: the v4l2-ctl streamer was not running during the check: $(tail -2 "$LOGS/busy-streamer.log")"
elif [ "$RC" = 5 ] && [ ! -e "$W/busy.jpg" ]; then
    pass "snapshot while another process streams exits 5: $(head -1 "$LOGS/snapshot-busy.err")"
else
    fail "snapshot while another process streams: $(rc_desc $RC), want 5 and no file"; show_err snapshot-busy
fi
kill $streamer 2>/dev/null; wait $streamer 2>/dev/null

# ---------------------------------------------------------------- more of what camctl promises
# The busy error names the process holding the camera.
if grep -q 'v4l2-ctl' "$LOGS/snapshot-busy.err"; then
    pass "the busy error names the holder: $(grep -o '[^.]*v4l2-ctl[^.]*' "$LOGS/snapshot-busy.err" | head -1)"
else
    fail "the busy error does not name the holder (v4l2-ctl)"; show_err snapshot-busy
fi

# `camctl devices` as a user who may not open the camera says so, and why.
run devices-nobody 120 setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups "$CAMCTL" devices --json
if why=$("$PY" "$SCRIPTS/camctl-devices-json.py" "$LOGS/devices-nobody.out" "$DEV" false); then
    pass "camctl devices as uid $NOBODY: $DEV accessible=false, because: $why"
else
    fail "camctl devices as uid $NOBODY: $(rc_desc $RC): $why"; show_err devices-nobody
fi

# A size the camera does not offer: the nearest one, and camctl says so.
rm -f "$W/near.jpg"
run snapshot-nearest 180 "$CAMCTL" snapshot -d "$DEV" --size 1280x700 -o "$W/near.jpg"
if [ "$RC" = 0 ] && why=$(jpeg_check "$W/near.jpg" 1280 720) && grep -q "asked 1280x700" "$LOGS/snapshot-nearest.err"; then
    pass "snapshot --size 1280x700 gives the nearest, 1280x720, and says so: $why"
else
    fail "snapshot --size 1280x700: $(rc_desc $RC): ${why:-}"; show_err snapshot-nearest
fi

# --fps 25 is set with S_PARM (vivid stays at 5 fps otherwise): camctl reports the rate
# the driver agreed to, and the driver says the same afterwards. (The rate frames then
# arrive at is measured from their timestamps by VividTests' frameRateIsSetWithSParm;
# wall time here would mostly measure the emulated VM.)
v4l2-ctl -d "$DEV" --set-parm=5 >/dev/null 2>&1
rm -f "$W/fps.jpg"
run snapshot-fps 180 "$CAMCTL" snapshot -d "$DEV" --size 640x480 --fps 25 -o "$W/fps.jpg"
parm=$(v4l2-ctl -d "$DEV" --get-parm 2>&1 | sed -n 's/.*Frames per second: *\([0-9.]*\).*/\1/p' | head -1)
if [ "$RC" = 0 ] && grep -q "at 25 fps" "$LOGS/snapshot-fps.err" && [ "$parm" = "25.000" ]; then
    pass "snapshot --fps 25 sets the rate with S_PARM (driver: $parm): $(head -1 "$LOGS/snapshot-fps.err" | cut -c1-100)"
else
    fail "snapshot --fps 25: $(rc_desc $RC), driver reports '${parm:-nothing}'"; show_err snapshot-fps
fi

# Output that cannot be written: a folder the user may not write, a full disk. Exit 8, nothing left.
mkdir -p "$W/closed" && chmod 700 "$W/closed"
run snapshot-eacces 180 setpriv --reuid=$NOBODY --regid=$NOBODY --groups=$VIDEO_GID "$CAMCTL" snapshot -d "$DEV" -o "$W/closed/a.jpg"
if [ "$RC" = 8 ] && [ -z "$(ls -A "$W/closed")" ] && grep -qi "permission denied" "$LOGS/snapshot-eacces.err"; then
    pass "snapshot -o into a folder uid $NOBODY may not write exits 8: $(head -1 "$LOGS/snapshot-eacces.err" | cut -c1-120)"
else
    fail "snapshot -o into an unwritable folder: $(rc_desc $RC), want 8, left: $(ls -A "$W/closed")"; show_err snapshot-eacces
fi
mkdir -p "$W/full"
if mount -t tmpfs -o size=8k camd-full "$W/full"; then
    run snapshot-enospc 180 "$CAMCTL" snapshot -d "$DEV" --size 640x480 -o "$W/full/a.jpg"
    if [ "$RC" = 8 ] && [ -z "$(ls -A "$W/full")" ] && grep -qiE "no space|full" "$LOGS/snapshot-enospc.err"; then
        pass "snapshot -o onto a full disk exits 8, nothing half-written: $(head -1 "$LOGS/snapshot-enospc.err" | cut -c1-120)"
    else
        fail "snapshot -o onto a full disk: $(rc_desc $RC), want 8, left: $(ls -A "$W/full")"; show_err snapshot-enospc
    fi
    umount "$W/full"
else
    fail "could not mount a small tmpfs for the full-disk check"
fi

# ---------------------------------------------------------------- fault injection
# vivid's button control makes the next VIDIOC_STREAMON fail (once) with EINVAL.
rm -f "$W/inj.jpg"
if ! v4l2-ctl -d "$DEV" -c inject_vidioc_streamon_error=1 >"$LOGS/inject.log" 2>&1; then
    fail "could not set inject_vidioc_streamon_error on $DEV: $(cat "$LOGS/inject.log")"
else
    run snapshot-streamon-error 60 "$CAMCTL" snapshot -d "$DEV" -o "$W/inj.jpg"
    if [ "$RC" = 7 ]; then
        pass "snapshot with injected STREAMON error exits 7 (${SECS}s): $(head -1 "$LOGS/snapshot-streamon-error.err")"
    else
        fail "snapshot with injected STREAMON error: $(rc_desc $RC), want 7"; show_err snapshot-streamon-error
    fi
    if [ -e "$W/inj.jpg" ]; then
        fail "snapshot with injected STREAMON error left $W/inj.jpg behind"
    fi
fi
rm -f "$W/after-inj.jpg"
why=
run snapshot-after-inject 180 "$CAMCTL" snapshot -d "$DEV" -o "$W/after-inj.jpg"
if [ "$RC" = 0 ] && why=$(jpeg_check "$W/after-inj.jpg"); then
    pass "snapshot after the injected error works again: $why (${SECS}s)"
else
    fail "snapshot after the injected error: $(rc_desc $RC) ${why:-}"; show_err snapshot-after-inject
fi

# ---------------------------------------------------------------- disconnect
# vivid's "disconnect" button unregisters all its nodes: open() then fails with
# ENODEV, and a streaming handle gets errors (vb2_queue_error: DQBUF -> EIO,
# other ioctls -> ENODEV). vivid re-registers the nodes once the LAST open file
# handle on the instance is closed (so the disconnect must happen while camctl
# holds the device, or it is undone at once when v4l2-ctl closes).
# vivid runs 640x480 at 5 fps by default; --fps 5 --skip 50 keeps camctl
# streaming for ~10 s, a wide window to disconnect in even under TCG.
rm -f "$W/disc.jpg"
t0=$SECONDS
timeout -k 5 90 "$CAMCTL" snapshot -d "$DEV" --size 640x480 --fps 5 --skip 50 -o "$W/disc.jpg" \
    >"$LOGS/snapshot-disconnect.out" 2>"$LOGS/snapshot-disconnect.err" </dev/null &
bg=$!
opened=
for ((i = 0; i < 600; i++)); do           # up to 60 s for camctl to open the device
    h=$(holders "$DEV")
    if [ -n "${h// /}" ]; then opened=$h; break; fi
    kill -0 $bg 2>/dev/null || break
    sleep 0.1
done
if [ -z "$opened" ]; then
    wait $bg; RC=$?
    fail "disconnect: camctl never held $DEV open (exited $(rc_desc $RC) after $((SECONDS - t0))s)"
    show_err snapshot-disconnect
else
    sleep "${VIVID_DISCONNECT_DELAY:-1}"  # let it get past setup into streaming
    v4l2-ctl -d "$DEV" -c disconnect=1 >"$LOGS/disconnect.log" 2>&1
    drc=$?
    tdisc=$((SECONDS - t0))
    wait $bg; RC=$?
    info "disconnect: camctl (pid $opened) opened $DEV, v4l2-ctl -c disconnect=1 rc=$drc at ${tdisc}s, camctl ended at $((SECONDS - t0))s"
    if [ "$drc" != 0 ]; then
        fail "disconnect: v4l2-ctl -c disconnect=1 failed (rc=$drc): $(head -2 "$LOGS/disconnect.log")"
    elif [ "$RC" = 7 ]; then
        pass "snapshot during disconnect exits 7 (${tdisc}s to disconnect, $((SECONDS - t0))s total): $(tail -1 "$LOGS/snapshot-disconnect.err")"
    elif [ "$RC" = 0 ]; then
        fail "snapshot during disconnect: exit 0 (finished before the disconnect, or ignored it)"
    else
        fail "snapshot during disconnect: $(rc_desc $RC), want 7"; show_err snapshot-disconnect
    fi
    [ -e "$W/disc.jpg" ] && [ "$RC" != 0 ] && fail "snapshot during disconnect: exit $RC but $W/disc.jpg exists"
fi
left=$(holders "$DEV")
for pid in $left; do info "still holding $DEV: pid $pid: $(tr '\0' ' ' </proc/$pid/cmdline 2>/dev/null)"; done
if wait_dev_usable "$DEV" 30; then
    rm -f "$W/reconnect.jpg"
    why=
    run snapshot-after-disconnect 180 "$CAMCTL" snapshot -d "$DEV" -o "$W/reconnect.jpg"
    if [ "$RC" = 0 ] && why=$(jpeg_check "$W/reconnect.jpg"); then
        pass "snapshot after the disconnect (device re-registered) works: $why (${SECS}s)"
    else
        fail "snapshot after the disconnect: $(rc_desc $RC) ${why:-}"; show_err snapshot-after-disconnect
    fi
else
    fail "after the disconnect $DEV did not come back within 30 s (all handles closed?)"
fi

rm -rf "$W"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
