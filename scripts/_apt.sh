# Installing a Debian package for the tests, shared by scripts/install-browser, install-nginx and
# install-mysql-driver (sourced, not run). Those scripts never fail: the tests that need what they
# install skip without it (and fail under CI=true), so a machine without apt still runs the rest.
#
#   APT_TOOL=install-nginx
#   APT_MISSING="nginx is missing, so … will be SKIPPED (and FAIL under CI=true)."
#   source scripts/_apt.sh
#   apt_install nginx-light            # returns 0 once installed; gives up (exit 0) otherwise
#
# apt_install runs `apt-get install -y --no-install-recommends PACKAGE…`, with `apt-get update`
# first only when the install fails because the package lists are empty or stale.

give_up() {
    echo "$APT_TOOL: $*" >&2
    echo "$APT_TOOL: $APT_MISSING" >&2
    exit 0
}

apt_install() { # package…
    if ! command -v apt-get >/dev/null 2>&1; then
        give_up "apt-get not found (not a Debian-like system)."
    fi
    # apt-get needs root; use sudo when it is there and does not ask for a password.
    local -a sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
            sudo=(sudo -n)
        else
            give_up "not root and no password-less sudo, so apt-get cannot install $*."
        fi
    fi
    export DEBIAN_FRONTEND=noninteractive
    echo "$APT_TOOL: installing $* with apt-get" >&2
    local log
    log="$(mktemp)"
    # Lock::Timeout: wait for another apt run (unattended upgrades, a parallel job) instead of failing.
    if "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=120 install -y --no-install-recommends "$@" 2>&1 | tee "$log"; then
        rm -f "$log"
        return 0
    fi
    # An image built with `rm -rf /var/lib/apt/lists/*` knows no packages ("Unable to locate
    # package"), and stale lists name files the mirror has dropped (404): refresh the lists, once.
    if grep -qE "Unable to locate package|has no installation candidate|Failed to fetch|404 +Not Found" "$log"; then
        rm -f "$log"
        echo "$APT_TOOL: package lists missing or stale; running apt-get update" >&2
        "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=120 update || give_up "apt-get update failed."
        "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=120 install -y --no-install-recommends "$@" ||
            give_up "apt-get install $* failed after apt-get update."
        return 0
    fi
    rm -f "$log"
    give_up "apt-get install $* failed (see above)."
}
