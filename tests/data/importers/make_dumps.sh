#!/usr/bin/env bash
# Regenerate the ibnetdiscover dumps in this directory with ibsim + OpenSM.
#
# Needs (Debian): apt-get install -y ibsim-utils opensm infiniband-diags
# Run from anywhere:  bash tests/data/importers/make_dumps.sh [OUTDIR]
# (OUTDIR defaults to this directory; the net files are written there too.)
#
# For each net file: start ibsim on it, let OpenSM sweep the subnet once (so that
# ports are ACTIVE and have LIDs), dump it with ibnetdiscover, stop ibsim.
# Only the processes this script starts are stopped, by their PIDs.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
third_party="$here/../third_party"  # provenance: ../third_party/README.md
out_dir="${1:-$here}"
mkdir -p "$out_dir"
work="$(mktemp -d)"
ibsim_pid=""
# A socket name of this run's own (from the unique mktemp directory, not a PID that a
# simulator left by a killed run may still carry): two runs at once, or the ibsim
# backend's tests beside this one, never talk to each other's simulator.
export IBSIM_SOCKNAME="harness-dumps-${work##*/}"

# Stop this script's ibsim: SIGTERM, then SIGKILL if it is still there after 5 s.  ibsim
# does not always act on SIGTERM (seen under load on a clean-clone CI run: a bare
# `kill; wait` then waited for ever, until the test's 600 s timeout).
running() {  # running PID: alive and not a zombie (state field of /proc/PID/stat; comm "ibsim")
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    set -- $stat
    [ "$3" != Z ] && [ "$3" != X ]
}

stop_ibsim() {
    [ -n "$ibsim_pid" ] || return 0
    kill "$ibsim_pid" 2>/dev/null || true
    local start=$SECONDS
    while running "$ibsim_pid" && (( SECONDS - start < 5 )); do
        sleep 0.1
    done
    if running "$ibsim_pid"; then
        kill -KILL "$ibsim_pid" 2>/dev/null || true
    fi
    wait "$ibsim_pid" 2>/dev/null || true
    ibsim_pid=""
}

cleanup() {
    stop_ibsim
    rm -rf "$work"
}
trap cleanup EXIT

for tool in ibsim ibsim-run opensm ibnetdiscover; do
    command -v "$tool" >/dev/null || {
        echo "make_dumps.sh: $tool not found; apt-get install -y ibsim-utils opensm infiniband-diags" >&2
        exit 1
    }
done

# OpenSM re-enables switch ports to their supported width/speed by default; keep
# what ibsim was told (degraded links are set on the HCA end anyway).
printf 'force_link_speed 0\nforce_link_speed_ext 0\nforce_link_width 0\n' > "$work/opensm.conf"

# Ready means ibsim's control socket is bound: ibsim prints "Network simulator ready"
# before it binds it.  The wait is a deadline on the clock, in a shell-builtin loop: a
# count of iterations over an external command's output (the old `for _ in $(seq 1 300)`)
# ends at once when that command dies or cannot fork under load, and then reported a
# 60 s timeout after no time at all.
wait_ready() {  # wait_ready NETFILE: until ibsim listens, for up to 60 s of real time
    local start=$SECONDS
    until grep -qF "@$IBSIM_SOCKNAME:ctl@" /proc/net/unix; do  # abstract, NUL-padded
        kill -0 "$ibsim_pid" 2>/dev/null || {
            echo "make_dumps.sh: ibsim exited before it was ready on $1:" >&2
            cat "$work/ibsim.log" >&2; exit 1
        }
        if (( SECONDS - start >= 60 )); then
            echo "make_dumps.sh: ibsim not listening on @$IBSIM_SOCKNAME:ctl after" \
                 "$(( SECONDS - start )) s on $1:" >&2
            cat "$work/ibsim.log" >&2; exit 1
        fi
        sleep 0.2
    done
}

dump() {  # dump NETFILE OUTFILE [FLAG=FILE ...]
    local net="$1" out="$2"
    ibsim -s "$net" --no-console > "$work/ibsim.log" 2>&1 &
    ibsim_pid=$!
    wait_ready "$net"
    OSM_TMP_DIR="$work" OSM_CACHE_DIR="$work" timeout -k 5 120 \
        ibsim-run opensm --once -F "$work/opensm.conf" -f "$work/opensm.log" > "$work/opensm.out" 2>&1
    timeout -k 5 60 ibsim-run ibnetdiscover > "$out" 2> "$work/ibnetdiscover.err"
    local spec
    for spec in "${@:3}"; do  # FLAG=FILE: the same subnet dumped with ibnetdiscover FLAG
        timeout -k 5 60 ibsim-run ibnetdiscover "${spec%%=*}" > "${spec#*=}" 2> "$work/ibnetdiscover.err"
        echo "wrote ${spec#*=}"
    done
    stop_ibsim
    echo "wrote $out"
}

python "$here/make_nets.py" "$out_dir"
dump "$third_party/ibsim_net.2sw2path4hca" "$out_dir/2sw2path4hca.ibnetdiscover"
for name in rail2x2 rail2x2_unlinked rail2x2_nic_down rail2x2_wrong_rail rail2x2_degraded \
            rail2x2_spine_down; do
    dump "$out_dir/$name.net" "$out_dir/$name.ibnetdiscover"
done
# production-style HDR plane: Aggregation Nodes, unset/placeholder/cloned descriptions
dump "$out_dir/prod_hdr.net" "$out_dir/prod_hdr.ibnetdiscover"
dump "$out_dir/prod_hdr_broken.net" "$out_dir/prod_hdr_broken.ibnetdiscover" \
     "-p=$out_dir/prod_hdr_broken.ports" "-g=$out_dir/prod_hdr_broken.g.ibnetdiscover" \
     "-f=$out_dir/prod_hdr_broken.f.ibnetdiscover"
