# shellcheck shell=bash
# Debian package checks for the tools/ scripts. Source this file, then:
#
#   park_need_packages PACKAGE...
#
# returns 0 when every package is installed. Missing packages are installed
# with apt-get when running as root (apt-get update runs at most once per
# process); otherwise the command that would install them is printed and
# the function returns 1. On a system without dpkg it only warns.

# Set once `apt-get update` has run in this process.
PARK_APT_UPDATED=${PARK_APT_UPDATED:-}

# Prints, one per line, the packages among its arguments that are not
# installed.
park_missing_packages() {
    local pkg status
    for pkg in "$@"; do
        status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null) || status=
        if [[ $status != "install ok installed" ]]; then
            printf '%s\n' "$pkg"
        fi
    done
}

park_need_packages() {
    local missing
    if ! command -v dpkg-query >/dev/null 2>&1; then
        echo "warning: no dpkg-query; cannot check for the packages: $*" >&2
        return 0
    fi
    mapfile -t missing < <(park_missing_packages "$@")
    if ((${#missing[@]} == 0)); then
        return 0
    fi
    if [[ $(id -u) -ne 0 ]]; then
        echo "missing packages: ${missing[*]}; install them with:" >&2
        echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
        return 1
    fi
    echo "installing missing packages: ${missing[*]}" >&2
    if [[ -z $PARK_APT_UPDATED ]]; then
        apt-get update || return 1
        PARK_APT_UPDATED=1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
}
