# Sourced by the VM guest scripts (vivid-guest.sh, mjpeg-guest.sh).
#
# The guest's /tmp is an overlay whose lower layer is the HOST's live /tmp, so
# whatever the host does there (e.g. a concurrent `swift build`) shows up in
# the guest. private_tmp PATH... gives the guest a private, empty tmpfs /tmp
# instead; any of the given folders that live under /tmp (repo, results share,
# scripts) are carried over with bind mounts.
private_tmp() {
    local keep=/run/camd-keep p top tops=()
    for p in "$@"; do
        case "$p" in /tmp/*) top=${p#/tmp/}; top=${top%%/*}; tops+=("$top") ;; esac
    done
    mapfile -t tops < <(printf '%s\n' "${tops[@]}" | sort -u | grep .)
    mkdir -p "$keep"
    for top in "${tops[@]}"; do
        mkdir -p "$keep/$top" && mount --rbind "/tmp/$top" "$keep/$top" || return 1
    done
    mount -t tmpfs -o mode=1777,size=512m camd-tmp /tmp || return 1
    for top in "${tops[@]}"; do
        mkdir -p "/tmp/$top" && mount --rbind "$keep/$top" "/tmp/$top" || return 1
    done
}
