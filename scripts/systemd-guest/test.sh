#!/bin/bash
# Runs INSIDE the test VM as a service of the real systemd (PID 1), started by
# systemd.run= (scripts/test-systemd boots it). Installs camd with
# scripts/install, loads vivid and checks the shipped units for real.
#
# Reads SHARE/test.env (written by the host): REPO, BIN_DIR, WATCHDOG_SEC.
# Writes to SHARE (the exit status does not reach the host):
#   results.txt   PASS/FAIL/INFO lines, one per check
#   guest-status  "done N_PASSED N_FAILED", written last
#   test.log      everything this script printed
#   journal.txt, camd-journal.txt, snapshot.jpg, status*.json, states-*.txt
# Never puts a Unix socket on the share (it hangs the guest).
SHARE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=/dev/null
. "$SHARE/test.env"
export LC_ALL=C SYSTEMD_PAGER='' SYSTEMD_COLORS=0
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
exec >>"$SHARE/test.log" 2>&1
WATCHDOG_SEC=${WATCHDOG_SEC:-6}
SOCK=/run/camd.sock
PROBE=$REPO/scripts/systemd-guest/probe.py  # reads camd's saved answers, opens devices
T0=$SECONDS
passed=0 failed=0
: >"$SHARE/results.txt"

say() { echo "[guest +$((SECONDS - T0))s] $*"; echo "[guest +$((SECONDS - T0))s] $*" >/dev/console 2>/dev/null; }
result() {  # KIND NAME DETAIL
    echo "$1 $2${3:+: $3}" >>"$SHARE/results.txt"
    say "$1 $2${3:+: $3}"
    case "$1" in PASS) passed=$((passed + 1)) ;; FAIL) failed=$((failed + 1)) ;; esac
}
pass() { result PASS "$@"; }
fail() { result FAIL "$@"; }
info() { result INFO "$@"; }
check() {  # NAME DETAIL COMMAND...: PASS when the command succeeds
    local name=$1 detail=$2
    shift 2
    if "$@"; then pass "$name" "$detail"; else fail "$name" "$detail"; fi
}
finish() {
    journalctl -b --no-pager -o short-monotonic >"$SHARE/journal.txt" 2>&1
    journalctl -b --no-pager -o short-monotonic -u camd.service -u camd.socket -u modprobe@videodev.service \
        >"$SHARE/camd-journal.txt" 2>&1
    say "done: $passed passed, $failed failed"
    echo "done $passed $failed" >"$SHARE/guest-status"
    sync
    exit 0
}
show() { systemctl show -p "$2" --value "$1"; }
api() {  # PATH [CURL ARGS...]: GET on the control socket
    local path=$1
    shift
    curl -sS --max-time 120 --unix-socket "$SOCK" "$@" "http://camd$path"
}
# Polls camd.service's state every 0.1 s until it is active (or failed, or
# after LIMIT s), writing each change to FILE, while something starts it.
watch_states() {  # FILE LIMIT
    local file=$1 last='' now end=$((SECONDS + $2))
    : >"$file"
    while [ $SECONDS -lt $end ]; do
        now=$(systemctl show -p ActiveState -p SubState -p StatusText camd.service | sort | tr '\n' ' ')
        if [ "$now" != "$last" ]; then echo "$(date +%s.%N) $now" >>"$file"; last=$now; fi
        case "$now" in *ActiveState=active*|*ActiveState=failed*) break ;; esac
        sleep 0.1
    done
}
# A socket-activated start: curl /v1/status while watching the service
# become active. Leaves the reply in FILE.json and the states in FILE.states.
activate() {  # FILE
    watch_states "$1.states" 150 &
    local watcher=$!
    api /v1/status -o "$1.json" -w '%{http_code}' >"$1.code" 2>"$1.err"
    wait "$watcher"
}
# Opens /dev/video0 read-write from a process placed in UNIT's cgroup, so the
# unit's device policy applies (as root, so file permissions do not).
open_in_cgroup() {  # UNIT
    local cg
    cg=/sys/fs/cgroup$(show "$1" ControlGroup)
    [ -e "$cg/cgroup.procs" ] || { echo "no cgroup $cg"; return 2; }
    sh -c 'echo $$ >"$1/cgroup.procs" && exec python3 "$2" open-device /dev/video0' sh "$cg" "$PROBE"
}

# The id of the vivid camera in a status reply (vivid is the only camera in
# the VM): one naming vivid or /dev/video0 that runs, else any running one.
# With "listed", any state will do, and the state follows the id ("video0 starting").
vivid_camera() {  # STATUS_JSON [listed]
    python3 "$PROBE" camera "$@" 2>/dev/null
}
# Waits up to LIMIT s for the status to list a running vivid camera; prints its id.
wait_camera() {  # LIMIT FILE
    local end=$((SECONDS + $1)) id=
    while [ $SECONDS -lt $end ]; do
        api /v1/status -o "$2" 2>/dev/null && id=$(vivid_camera "$2")
        [ -n "$id" ] && { echo "$id"; return 0; }
        sleep 1
    done
    return 1
}
snapshot() {  # ID FILE: prints "HTTP CODE, N bytes starting MAGIC"; succeeds on a JPEG
    local code magic
    code=$(api "/v1/cameras/$1/snapshot" -o "$2" -w '%{http_code}' 2>&1)
    magic=$(head -c 2 "$2" 2>/dev/null | od -An -tx1 | tr -d ' ')
    echo "HTTP $code, $(stat -c %s "$2" 2>/dev/null || echo 0) bytes starting ${magic:-nothing}"
    [ "$code" = 200 ] && [ "$magic" = ffd8 ]
}

say "systemd $(systemctl --version | head -1 | cut -d' ' -f2) as PID 1 ($(cat /proc/1/comm)), kernel $(uname -r), $(systemctl is-system-running)"
[ "$(cat /proc/1/comm)" = systemd ] && pass pid1 "systemd is PID 1" || fail pid1 "PID 1 is $(cat /proc/1/comm)"

# ---------------------------------------------------------------- install
if grep -qw video4linux /proc/devices; then
    info videodev "already loaded at boot; the ordering check below proves less"
else
    pass videodev-absent "videodev not loaded yet (no video4linux in /proc/devices)"
fi
say "installing: PREFIX=/usr/local scripts/install --no-build --bin-dir $BIN_DIR"
if PREFIX=/usr/local "$REPO/scripts/install" --no-build --bin-dir "$BIN_DIR" >"$SHARE/install.log" 2>&1; then
    pass install "scripts/install --no-build ($(grep -c 'installed ' "$SHARE/install.log") files)"
else
    fail install "scripts/install failed; see install.log"
    cat "$SHARE/install.log"
    finish
fi
cat "$SHARE/install.log"
check sysusers "user camd exists, in group video: $(id camd 2>&1)" sh -c 'id -nG camd | grep -qw video'
out=$(PREFIX=/usr/local "$REPO/scripts/install" --no-build --bin-dir "$BIN_DIR" 2>&1)
check install-idempotent "a second run changes nothing" sh -c '! printf "%s\n" "$1" | grep -q "^install: installed "' sh "$out"
echo "$out"

# The test's own drop-in: a short watchdog, so a hang is caught in seconds.
mkdir -p /etc/systemd/system/camd.service.d
printf '[Service]\nWatchdogSec=%ss\n' "$WATCHDOG_SEC" >/etc/systemd/system/camd.service.d/50-test.conf
systemctl daemon-reload
out=$(systemd-analyze verify camd.service camd.socket 2>&1)
check verify-installed "systemd-analyze verify on the installed units${out:+: $out}" test -z "$out"
line=$(systemd-analyze security camd.service 2>&1 | grep 'Overall exposure' | sed 's/^→ *//')
info security "installed unit, live: $line"

# ---------------------------------------------------------------- socket
systemctl start camd.socket
check socket-active "camd.socket $(show camd.socket ActiveState)" test "$(show camd.socket ActiveState)" = active
perm=$(stat -c '%A %U:%G' "$SOCK" 2>&1)
check socket-perms "$SOCK is $perm" test "$perm" = "srw-rw---- root:video"
check not-started "camd.service is $(show camd.service ActiveState) before the first connection" \
    test "$(show camd.service ActiveState)" = inactive

# ---------------------------------------------------------------- the videodev pitfall
# Control: a unit started while videodev is not loaded gets a device list
# without major 81 (DeviceAllow=char-video4linux resolves to nothing).
if ! grep -qw video4linux /proc/devices; then
    systemd-run --quiet --unit=pitfall-control -p DevicePolicy=closed -p "DeviceAllow=char-video4linux rw" sleep 600
fi

# ---------------------------------------------------------------- activation 1: no camera yet
say "first request, no camera yet: socket activation"
activate "$SHARE/status0"
code=$(cat "$SHARE/status0.code")
check activation-1 "GET /v1/status answered $code, camd.service $(show camd.service ActiveState)" \
    test "$code" = 200 -a "$(show camd.service ActiveState)" = active
cat "$SHARE/status0.states" "$SHARE/status0.err" 2>/dev/null
check modprobe-videodev "modprobe@videodev.service ran first: $(grep -w video4linux /proc/devices)" \
    grep -qw video4linux /proc/devices

# ---------------------------------------------------------------- vivid + the udev rule
say "loading vivid"
modprobe vivid n_devs=1 && udevadm settle --timeout=60
for _ in $(seq 1 50); do [ -c /dev/video0 ] && break; sleep 0.2; done
check vivid "/dev/video0: $(ls -l /dev/video0 2>&1)" test -c /dev/video0
for n in /dev/video*; do
    caps=$(udevadm info -q property -n "$n" | sed -n 's/^ID_V4L_CAPABILITIES=//p')
    links=$(udevadm info -q symlink -n "$n" | tr ' ' '\n' | grep '^camd/' | tr '\n' ' ')
    echo "$n caps=$caps camd-links=${links:-none} $(stat -c '%A %G' "$n")"
    case "$caps" in
        *:capture:*)
            [ -n "$links" ] && [ "$(stat -c '%a %G' "$n")" = "660 video" ] \
                && pass "udev-$(basename "$n")" "capture node: ${links% } ($(stat -c '%A %G' "$n"))" \
                || fail "udev-$(basename "$n")" "capture node without camd link or not 0660 video: $(stat -c '%A %G' "$n") ${links:-no link}" ;;
        *)
            [ -z "$links" ] && pass "udev-$(basename "$n")" "not a capture node ($caps): left alone" \
                || fail "udev-$(basename "$n")" "non-capture node ($caps) got $links" ;;
    esac
done
link=$(ls -d /dev/camd/by-path/* 2>/dev/null | head -1)
if [ -n "$link" ]; then
    dev_unit=$(systemd-escape -p --suffix=device "$link")
    check udev-systemd-tag "$dev_unit is $(show "$dev_unit" ActiveState)" test "$(show "$dev_unit" ActiveState)" = active
    check udev-link-target "$link -> $(readlink -f "$link")" test "$(readlink -f "$link")" = /dev/video0
else
    fail udev-link "no /dev/camd/by-path link"
fi

# With videodev loaded by modprobe@ before camd's cgroup was set up, the
# running service may open a camera that appeared later; the control may not.
out=$(open_in_cgroup camd.service 2>&1)
check devicepolicy-ordered "open /dev/video0 in camd.service's cgroup (started before vivid): $out" test "$out" = opened
if systemctl is-active --quiet pitfall-control.service; then
    out=$(open_in_cgroup pitfall-control.service 2>&1)
    check devicepolicy-pitfall "control unit started before videodev: $out (expected EPERM)" test "$out" = "Operation not permitted"
    systemctl stop pitfall-control.service
fi
# camd, started before vivid existed, takes the camera that appeared: only
# possible because major 81 was in its device list from the start.
if id=$(wait_camera 60 "$SHARE/status-hotplug.json"); then
    if out=$(snapshot "$id" "$SHARE/snapshot-hotplug.jpg"); then
        pass hotplug "camd started before vivid: camera $id, snapshot $out"
    else
        fail hotplug "camd started before vivid: camera $id, snapshot $out"
    fi
else
    fail hotplug "camd started before vivid never listed a running camera: $(head -c 600 "$SHARE/status-hotplug.json")"
fi

# ---------------------------------------------------------------- activation 2: with the camera
systemctl stop camd.service
check stopped "camd.service $(show camd.service ActiveState), camd.socket $(show camd.socket ActiveState)" \
    test "$(show camd.service ActiveState)/$(show camd.socket ActiveState)" = inactive/active
say "second request, vivid loaded: socket activation"
activate "$SHARE/status"
code=$(cat "$SHARE/status.code")
main_pid=$(show camd.service MainPID)
cat "$SHARE/status.states" "$SHARE/status.err" 2>/dev/null
check activation "GET /v1/status answered $code; camd.service $(show camd.service ActiveState) (MainPID $main_pid)" \
    test "$code" = 200 -a "$(show camd.service ActiveState)" = active
states=$(sed -E 's/^[^ ]+ ActiveState=([a-z]+) .*SubState=([a-z-]+) $/\1\/\2/' "$SHARE/status.states" | tr '\n' ' ')
check ready-after-start "states seen: $states" sh -c 'echo " $1" | grep -q " activating/start .*active/running"' sh "$states"
start_us=$(show camd.service ExecMainStartTimestampMonotonic)
active_us=$(show camd.service ActiveEnterTimestampMonotonic)
check ready-later "active $(((active_us - start_us) / 1000)) ms after exec (Type=notify waits for READY=1)" \
    test "$((active_us - start_us))" -gt 100000
status_text=$(show camd.service StatusText)
check status-text "StatusText=$status_text" test -n "$status_text"
json_pid=$(python3 "$PROBE" pid "$SHARE/status.json" 2>/dev/null)
check status-pid "status pid $json_pid = MainPID $main_pid" test "$json_pid" = "$main_pid"
# The socket-activating request may be answered before the camera runs (the
# listener and the cameras start side by side; READY=1 waits for both): the
# status lists the camera in whatever state it is in, and it must then run.
listed=$(vivid_camera "$SHARE/status.json" listed)
check status-camera "the status lists the vivid camera: ${listed:-none}" test -n "$listed"
echo "status: $(head -c 1500 "$SHARE/status.json")"
camera=$(wait_camera 60 "$SHARE/status-running.json")
check camera-running "the vivid camera runs: ${camera:-not within 60 s: $(head -c 600 "$SHARE/status-running.json" 2>/dev/null)}" test -n "$camera"

# Who camd runs as, from /proc.
if [ -n "$main_pid" ] && [ "$main_pid" != 0 ]; then
    uid=$(awk '/^Uid:/ {print $2}' /proc/"$main_pid"/status)
    groups=$(awk '/^Groups:/ {$1=""; print}' /proc/"$main_pid"/status)
    video_gid=$(getent group video | cut -d: -f3)
    check credentials "uid $uid ($(id -nu "$uid" 2>/dev/null)), groups$groups (video is $video_gid)" \
        sh -c "[ '$uid' = '$(id -u camd)' ] && echo ' $groups ' | grep -q ' $video_gid '"
    check nonewprivs "NoNewPrivs $(awk '/^NoNewPrivs:/ {print $2}' /proc/"$main_pid"/status), CapEff $(awk '/^CapEff:/ {print $2}' /proc/"$main_pid"/status)" \
        sh -c "grep -q '^NoNewPrivs:[[:space:]]*1' /proc/$main_pid/status && grep -q '^CapEff:[[:space:]]*0*\$' /proc/$main_pid/status"
fi
perm=$(stat -c '%A %U:%G' /var/lib/camd 2>&1)
check state-dir "/var/lib/camd is $perm" test "$perm" = "drwxr-x--- camd:camd"

# ---------------------------------------------------------------- snapshot
if [ -n "$camera" ]; then
    if out=$(snapshot "$camera" "$SHARE/snapshot.jpg"); then
        pass snapshot "GET /v1/cameras/$camera/snapshot: $out"
    else
        fail snapshot "GET /v1/cameras/$camera/snapshot: $out"
        head -c 400 "$SHARE/snapshot.jpg"
    fi
else
    fail snapshot "no camera id to ask for"
fi

# ---------------------------------------------------------------- thread priorities
# Encoders run 5 steps nicer than capture (EncoderWorker.niceness), and they and the
# HTTP event loop under SCHED_BATCH (ThreadScheduling): the unit's SystemCallFilter=
# must let setpriority and sched_setscheduler through (@resources holds both).
# /proc/PID/task/TID/stat after the name: nice is the 17th word, the policy the 39th.
threads=
policies=
if [ -n "$main_pid" ] && [ "$main_pid" != 0 ]; then
    for t in /proc/"$main_pid"/task/*; do
        name=$(cat "$t/comm" 2>/dev/null) || continue
        case "$name" in camd-enc*|camd-cap*) threads="$threads $name=$(sed 's/.*) //' "$t/stat" | awk '{print $17}')" ;; esac
        case "$name" in camd-enc*|camd-cap*|NIO-*) policies="$policies $name=$(sed 's/.*) //' "$t/stat" | awk '{print $39}')" ;; esac
    done
fi
if [ "${STAND_IN:-0}" = 1 ]; then
    info thread-nice "skipped: the stand-in has no encoder threads"
    info thread-policy "skipped: the stand-in has no encoder threads"
else
    check thread-nice "encoder threads at nice 5, capture at 0:${threads:- no camd-enc/camd-cap threads}" \
        sh -c 'echo " $1 " | grep -q " camd-enc[^ ]*=5 " && echo " $1 " | grep -q " camd-cap[^ ]*=0 " \
            && ! echo " $1 " | grep -qE " camd-enc[^ ]*=[^5] "' sh "$threads"
    # 3 is SCHED_BATCH, 0 SCHED_OTHER; one NIO thread is the listeners' event loop.
    check thread-policy "encoders and an event loop under SCHED_BATCH, capture not:${policies:- no threads}" \
        sh -c 'echo " $1 " | grep -q " camd-enc[^ ]*=3 " && echo " $1 " | grep -q " NIO-[^ ]*=3 " \
            && echo " $1 " | grep -q " camd-cap[^ ]*=0 " && ! echo " $1 " | grep -qE " camd-enc[^ ]*=[^3] "' sh "$policies"
fi

# ---------------------------------------------------------------- journal
sleep 1
lines=$(journalctl -b -u camd.service _PID="$main_pid" --no-pager -o cat | wc -l)
prios=$(journalctl -b -u camd.service _PID="$main_pid" --no-pager -o json | python3 "$PROBE" priorities)
check journal "journalctl -u camd has $lines lines from PID $main_pid, priorities: $prios" test "$lines" -gt 0
journalctl -b -u camd.service --no-pager -o cat | grep -F '<' | grep -E '^<[0-7]>' | head -3 >"$SHARE/prefix-leaks.txt"
check journal-prefixes "no raw <N> prefixes left in messages (journald parsed them)" test ! -s "$SHARE/prefix-leaks.txt"
# libdispatch says "Failed to set thread priority for worker thread: ... errno=N"
# when setpriority fails: errno=1 (EPERM) is the unit's SystemCallFilter=
# refusing the call; errno=13 (EACCES), once, is the kernel refusing nice -4 for
# the runtime's user-initiated worker to an unprivileged process, as it should.
n=$(journalctl -b -u camd.service _PID="$main_pid" --no-pager -o cat | grep -c 'Failed to set thread priority.*errno=1$')
check journal-setpriority-allowed "no setpriority refused by the unit's filter (libdispatch's errno=1 lines: $n)" test "$n" = 0

# ---------------------------------------------------------------- watchdog
restarts=$(show camd.service NRestarts)
say "watchdog: SIGSTOP to $main_pid (WatchdogSec=${WATCHDOG_SEC}s)"
kill -STOP "$main_pid"
t_stop=$SECONDS
end=$((SECONDS + WATCHDOG_SEC + 30))
seen=
while [ $SECONDS -lt $end ]; do
    if [ "$(show camd.service NRestarts)" -gt "$restarts" ]; then seen=restart; break; fi
    sleep 0.5
done
wd_line=$(journalctl -b -u camd.service --no-pager -o cat | grep -i 'watchdog timeout' | tail -1)
check watchdog "after $((SECONDS - t_stop)) s: NRestarts $restarts -> $(show camd.service NRestarts); journal: ${wd_line:-no watchdog line}" \
    test -n "$seen" -a -n "$wd_line"
for _ in $(seq 1 600); do
    [ "$(show camd.service ActiveState)" = active ] && break
    case "$(show camd.service ActiveState)" in failed) break ;; esac
    sleep 0.2
done
new_pid=$(show camd.service MainPID)
code=$(api /v1/status -o /dev/null -w '%{http_code}' 2>&1)
check watchdog-recovered "camd.service $(show camd.service ActiveState) again, MainPID $main_pid -> $new_pid, status HTTP $code" \
    test "$(show camd.service ActiveState)" = active -a "$new_pid" != "$main_pid" -a "$code" = 200

# ---------------------------------------------------------------- reload (SIGHUP)
# `systemctl reload camd` (ExecReload= sends SIGHUP): camd reads camd.toml
# again. A file with a mistake is logged and changes nothing; the same
# process keeps serving. A [daemon] key is reported as needing a restart.
journal_line() {  # PATTERN LIMIT: the newest camd journal line matching, waiting up to LIMIT s
    local end=$((SECONDS + $2)) line
    while [ $SECONDS -lt $end ]; do
        line=$(journalctl -b -u camd.service --no-pager -o cat | grep -E "$1" | tail -1)
        [ -n "$line" ] && { echo "$line"; return 0; }
        sleep 0.5
    done
    return 1
}
if [ "${STAND_IN:-0}" = 1 ]; then
    info reload "skipped: the stand-in reads no camd.toml"
else
    pid=$(show camd.service MainPID)
    cp /etc/camd/camd.toml /run/camd.toml.saved
    printf '[daemon]\nlog_levle = "info"\n' >/etc/camd/camd.toml
    systemctl reload camd.service; rc=$?
    line=$(journal_line 'reload: .*log_levle' 20)
    code=$(api /v1/status -o /dev/null -w '%{http_code}')
    check reload-bad-file "systemctl reload exit $rc; MainPID $pid -> $(show camd.service MainPID), $(show camd.service ActiveState), status HTTP $code; says: ${line:-nothing}" \
        test "$rc" = 0 -a "$(show camd.service MainPID)" = "$pid" -a "$code" = 200 -a -n "$line"
    printf '[daemon]\nlog_level = "debug"\n' >/etc/camd/camd.toml
    systemctl reload camd.service; rc=$?
    line=$(journal_line 'reload: .*log_level changed' 20)
    check reload-needs-restart "systemctl reload exit $rc; MainPID $(show camd.service MainPID); says: ${line:-nothing}" \
        test "$rc" = 0 -a "$(show camd.service MainPID)" = "$pid" -a -n "$line"
    cp /run/camd.toml.saved /etc/camd/camd.toml
fi

# ---------------------------------------------------------------- graceful stop
t=$(date +%s%N)
systemctl stop camd.service
ms=$((($(date +%s%N) - t) / 1000000))
result=$(show camd.service Result)
check graceful-stop "systemctl stop took $ms ms, Result=$result, exit status $(show camd.service ExecMainStatus)" \
    test "$result" = success -a "$ms" -lt 5000

# ---------------------------------------------------------------- exit 75 and restart
# The pitfall itself, on the shipped unit: without modprobe@videodev (masked),
# camd starts while videodev is not loaded; vivid appears later; its device
# list lacks major 81, so opening gives EPERM; camd exits 75 and Restart=
# brings it back with a device list that has it.
systemctl mask --quiet modprobe@videodev.service
# Unload videodev and every module using it (videobuf2_common stays after
# modprobe -r vivid).
unload() {  # MODULE
    local user
    for user in $(awk -v m="$1" '$1 == m && $4 != "-" { gsub(",", " ", $4); print $4 }' /proc/modules); do
        unload "$user"
    done
    rmmod "$1" 2>/dev/null
}
unload videodev
if grep -qw video4linux /proc/devices; then
    info tempfail-restart "skipped: videodev stays loaded after modprobe -r vivid ($(lsmod | grep -w ^videodev))"
else
    systemctl start camd.service
    restarts=$(show camd.service NRestarts)
    pid1=$(show camd.service MainPID)
    modprobe vivid n_devs=1 && udevadm settle --timeout=60
    say "camd ($pid1) started without videodev; vivid loaded after it"
    end=$((SECONDS + 90))
    while [ $SECONDS -lt $end ]; do
        [ "$(show camd.service NRestarts)" -gt "$restarts" ] && [ "$(show camd.service ActiveState)" = active ] && break
        sleep 0.5
    done
    line=$(journalctl -b -u camd.service --no-pager -o cat | grep -E 'status=75' | tail -1)
    check tempfail-exit "camd exited 75 when the device policy refused the camera: ${line:-no 'status=75' line in the journal}" \
        test -n "$line"
    pid2=$(show camd.service MainPID)
    check tempfail-restart "NRestarts $restarts -> $(show camd.service NRestarts), MainPID $pid1 -> $pid2, $(show camd.service ActiveState)" \
        test "$(show camd.service NRestarts)" -gt "$restarts" -a "$pid2" != "$pid1" -a "$(show camd.service ActiveState)" = active
    if id=$(wait_camera 60 "$SHARE/status-tempfail.json"); then
        if out=$(snapshot "$id" "$SHARE/snapshot-tempfail.jpg"); then
            pass tempfail-snapshot "after the restart: camera $id, $out"
        else
            fail tempfail-snapshot "after the restart: camera $id, $out"
        fi
    else
        fail tempfail-snapshot "no running camera after the restart: $(head -c 600 "$SHARE/status-tempfail.json")"
    fi
    systemctl stop camd.service
fi
systemctl unmask --quiet modprobe@videodev.service

# ---------------------------------------------------------------- TCP
# docs/systemd.md "Serving over TCP": with PrivateNetwork=yes a TCP listener
# sits in camd's own network namespace, unreachable; the drop-in opens it.
wait_active() {  # LIMIT
    local end=$((SECONDS + $1))
    while [ $SECONDS -lt $end ]; do
        case "$(show camd.service ActiveState)" in active) return 0 ;; failed) return 1 ;; esac
        sleep 0.2
    done
    return 1
}
# A mistake in camd.toml: exit 78 (EX_CONFIG) and, by RestartPreventExitStatus=,
# no restart loop.
if [ "${STAND_IN:-0}" = 1 ]; then
    info config-error "skipped: the stand-in reads no camd.toml"
else
    cp /etc/camd/camd.toml /run/camd.toml.saved
    printf '[daemon]\nlog_levle = "info"\n' >/etc/camd/camd.toml
    systemctl restart camd.service 2>/dev/null
    wait_active 60
    sleep 3   # RestartSec=2s: a restart would have begun by now
    line=$(journalctl -b -u camd.service --no-pager -o cat | grep -F 'camd.toml' | tail -1)
    check config-error "camd $(show camd.service ActiveState), status $(show camd.service ExecMainStatus), $(show camd.service NRestarts) restarts; says: ${line:-nothing}" \
        test "$(show camd.service ExecMainStatus)" = 78 -a "$(show camd.service NRestarts)" = 0 -a "$(show camd.service ActiveState)" = failed
    cp /run/camd.toml.saved /etc/camd/camd.toml
    systemctl reset-failed camd.service camd.socket 2>/dev/null
    systemctl start camd.socket
fi

if [ "${STAND_IN:-0}" = 1 ]; then
    info tcp "skipped: the stand-in has no TCP listener"
else
    cp /etc/camd/camd.toml /run/camd.toml.saved
    printf '[daemon]\ntcp = "127.0.0.1:8080"\n' >/etc/camd/camd.toml
    # Without the drop-in, RestrictAddressFamilies=AF_UNIX refuses the TCP
    # socket: camd should fail at once with 78 (EX_CONFIG, no restart loop)
    # and say what to do, rather than loop until the start limit also takes
    # camd.socket down.
    systemctl restart camd.service   # a manual start: NRestarts counts from 0
    wait_active 90
    code=$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' http://127.0.0.1:8080/v1/status)
    check tcp-private "tcp = 127.0.0.1:8080 without the drop-in: not reachable (curl HTTP code $code)" test "$code" != 200
    line=$(journalctl -b -u camd.service --no-pager -o cat | grep -iE 'tcp|address family|8080' | tail -1)
    check tcp-config-error "camd $(show camd.service ActiveState) (Result=$(show camd.service Result), status $(show camd.service ExecMainStatus), $(show camd.service NRestarts) restarts; camd.socket $(show camd.socket ActiveState)); says: ${line:-nothing about TCP}" \
        test "$(show camd.service ExecMainStatus)" = 78 -a "$(show camd.service NRestarts)" = 0
    systemctl reset-failed camd.service camd.socket 2>/dev/null
    mkdir -p /etc/systemd/system/camd.service.d
    sed -n '/^# \/etc\/systemd\/system\/camd.service.d\/tcp.conf/,/^```/p' "$REPO/docs/systemd.md" | grep -v '^```' \
        >/etc/systemd/system/camd.service.d/tcp.conf
    systemctl daemon-reload
    systemctl start camd.socket
    systemctl restart camd.service
    wait_active 90
    code=$(curl -sS --max-time 30 -o "$SHARE/status-tcp.json" -w '%{http_code}' http://127.0.0.1:8080/v1/status 2>&1)
    check tcp-dropin "with docs/systemd.md's tcp.conf ($(grep -c . /etc/systemd/system/camd.service.d/tcp.conf) lines): GET http://127.0.0.1:8080/v1/status answered $code" \
        test "$code" = 200
    line=$(systemd-analyze security camd.service 2>&1 | grep 'Overall exposure' | sed 's/^→ *//')
    info tcp-security "with the TCP drop-in: $line"
    # Both listeners close at once on SIGTERM: the unit stops cleanly, not after
    # shutdown_timeout with status 1 (which left it failed).
    started_ns=$(date +%s%N)
    systemctl stop camd.service
    took_ms=$(( ($(date +%s%N) - started_ns) / 1000000 ))
    said=$(journalctl -b -u camd.service --no-pager -o cat | grep -E 'stopped$|camd stopped:' | tail -1)
    check tcp-stop "systemctl stop with the TCP listener: $(show camd.service ActiveState) (Result=$(show camd.service Result), status $(show camd.service ExecMainStatus)) after $took_ms ms; last says: ${said:-nothing}" \
        test "$(show camd.service ActiveState)" = inactive -a "$(show camd.service Result)" = success -a "$(show camd.service ExecMainStatus)" = 0
    rm -f /etc/systemd/system/camd.service.d/tcp.conf
    cp /run/camd.toml.saved /etc/camd/camd.toml
    systemctl daemon-reload
    systemctl stop camd.service
fi

# ---------------------------------------------------------------- uninstall
systemctl stop camd.socket
PREFIX=/usr/local "$REPO/scripts/install" --uninstall >"$SHARE/uninstall.log" 2>&1
cat "$SHARE/uninstall.log"
left=$(ls /usr/local/bin/camd /usr/local/lib/systemd/system/camd.* /usr/local/lib/udev/rules.d/70-camd.rules 2>/dev/null)
check uninstall "scripts/install --uninstall removed the files${left:+; left: $left}" test -z "$left"

finish
