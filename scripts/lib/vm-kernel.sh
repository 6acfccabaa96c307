# shellcheck shell=bash
# The kernel the test and benchmark VMs boot; sourced by the scripts that start one with vng.
#   guest_kernel   prints $CAMD_KERNEL if set, else the newest /boot/vmlinuz-* whose modules
#                  are installed (vivid, videodev and the rest are modules); nothing if none.
guest_kernel() {
    if [ -n "${CAMD_KERNEL:-}" ]; then
        echo "$CAMD_KERNEL"
        return 0
    fi
    local k
    for k in $(ls -1 /boot/vmlinuz-* 2>/dev/null | sort -V -r); do
        if [ -d "/lib/modules/${k#/boot/vmlinuz-}/kernel" ]; then
            echo "$k"
            return 0
        fi
    done
    return 0
}
