# Sourced by the scripts that install a tool the tests need from the Debian packages when it is
# missing (browser.sh, registry.sh).
#
#   apt_install WHAT HINT PACKAGE...   installs PACKAGE... (no recommends), refreshing the package
#                                      lists once if the first try fails; dies with HINT when
#                                      there is no apt-get or no root. Needs die() and log().
apt_install() {
    local what=$1 hint=$2
    shift 2
    command -v apt-get >/dev/null 2>&1 || die "no $what on PATH and no apt-get to install one
hint: $hint"
    if [[ $(id -u) -ne 0 ]]; then
        die "no $what on PATH, and installing one needs root
hint: $hint"
    fi
    log "installing $* from the Debian packages"
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get install -y -q --no-install-recommends "$@" >&2; then
        log "install failed; refreshing the package lists and trying again"
        apt-get update -q >&2
        apt-get install -y -q --no-install-recommends "$@" >&2
    fi
}
