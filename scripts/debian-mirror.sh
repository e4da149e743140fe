# Sourced by the image scripts: finds the Debian mirror (and suite) in the machine's own apt
# configuration, so no host is named in the project.
#
#   find_debian_mirror   sets $mirror and $suite; BEYONDSWE_DEBIAN_MIRROR / BEYONDSWE_DEBIAN_SUITE
#                        override them. Needs a die() function from the caller.

# Prints "URI SUITE" for every enabled `deb` entry in the machine's apt config.
apt_entries() {
    local f
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [[ -r $f ]] || continue
        # deb [opts] uri suite component...
        sed -e 's/#.*//' -e 's/\[[^]]*\]//' "$f" |
            awk '$1 == "deb" && NF >= 3 { print $2, $3 }'
    done
    for f in /etc/apt/sources.list.d/*.sources; do
        [[ -r $f ]] || continue
        awk '
            function flush(   i, j, nu, ns, u, s) {
                if (types ~ /(^|[ \t])deb([ \t]|$)/ && tolower(enabled) != "no") {
                    nu = split(uris, u, /[ \t]+/); ns = split(suites, s, /[ \t]+/)
                    for (i = 1; i <= nu; i++) for (j = 1; j <= ns; j++)
                        if (u[i] != "" && s[j] != "") print u[i], s[j]
                }
                types = uris = suites = enabled = ""; key = ""
            }
            /^[ \t]*#/ { next }
            /^[ \t]*$/ { flush(); next }
            /^[ \t]/ { # continuation line of a multi-line field
                if (key == "uris") uris = uris " " $0
                else if (key == "suites") suites = suites " " $0
                next
            }
            {
                key = tolower($0); sub(/:.*/, "", key)
                val = $0; sub(/^[^:]*:[ \t]*/, "", val)
                if (key == "types") types = val
                else if (key == "uris") uris = val
                else if (key == "suites") suites = val
                else if (key == "enabled") enabled = val
            }
            END { flush() }
        ' "$f"
    done
}


find_debian_mirror() {
    local codename pick c want candidates
    codename=""
    if [[ -r /etc/os-release ]]; then
        # shellcheck source=/dev/null
        codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
    fi

    mirror="${BEYONDSWE_DEBIAN_MIRROR:-}"
    suite="${BEYONDSWE_DEBIAN_SUITE:-}"
    if [[ -z $mirror || -z $suite ]]; then
        # Base-suite entries with a URI debootstrap understands; prefer the
        # requested suite, then the host's codename, then any base suite.
        mapfile -t candidates < <(apt_entries |
            awk '$1 ~ /^(https?|file):\/\// && $2 !~ /-(security|updates|backports|proposed-updates)$/ && $2 !~ /\/$/' |
            sed 's#/*  *# #')
        pick=""
        for want in "${suite}" "${codename}" ""; do
            for c in "${candidates[@]}"; do
                if [[ -z $want || ${c#* } == "$want" ]]; then pick=$c; break 2; fi
            done
        done
        if [[ -z $pick && ${#candidates[@]} -eq 0 && -z $mirror ]]; then
            die "no Debian mirror found in /etc/apt/sources.list or /etc/apt/sources.list.d/; set BEYONDSWE_DEBIAN_MIRROR (and BEYONDSWE_DEBIAN_SUITE)"
        fi
        [[ -n $mirror ]] || mirror=${pick%% *}
        [[ -n $suite ]] || suite=${pick#* }
        [[ -n $suite ]] || suite=$codename
    fi
    [[ -n $mirror ]] || die "no Debian mirror found; set BEYONDSWE_DEBIAN_MIRROR"
    [[ -n $suite ]] || die "no Debian suite found; set BEYONDSWE_DEBIAN_SUITE"
}
