#!/usr/bin/env bash
# run_seq.sh — sequential GET throughput and client CPU: raw libcurl vs Netlayer,
# for repeated and for distinct documents in the same rounds.
#
# Builds seq_raw and seq_netlayer, starts a private nginx (nginx.sh), runs ROUNDS
# rounds; each round runs both kinds of document (repeated, distinct; the order
# alternates by round), and for each: raw, netlayer (nl_request), borrowed
# (nl_request_borrowed), N requests each. Then wrk -t1 -c1 once as the
# single-connection ceiling. Prints the tables and writes results/seq.md
# (per-round figures, medians, medians of the per-round ratios against raw,
# repeated | distinct side by side, and the targets) and results/seq.svg, the
# chart of throughput and CPU per client (benchmarks/plot.py).
#
# Environment:
#   NETLAYER_LIB_DIR  directory holding libnetlayer.so (default: ../build/lib)
#   N                 requests per run (default 20000)
#   WARMUP            untimed requests before each run (default 1000)
#   ROUNDS            rounds (default 7)
#   MODES             kinds of document (default "repeated distinct")
#   CLIENTS           clients per mode, in order (default "raw netlayer borrowed")
#   PIN               1 (default with 2+ CPUs): nginx on CPU 0, the clients on CPU 1
#   WRK_SECONDS       wrk duration (default 3; 0 skips it)
#   RUN_TIMEOUT       seconds allowed for one client run (default 120)
#   TARGETS_OUT       if set, a file the target lines are appended to (run_all.sh)
#   RESULTS_DIR       where seq.md goes (default: results/ next to this script)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
include_dir=$(cd "$here/../include" && pwd)
lib_dir=${NETLAYER_LIB_DIR:-$here/../build/lib}
N=${N:-20000}
WARMUP=${WARMUP:-1000}
ROUNDS=${ROUNDS:-7}
MODES=${MODES:-repeated distinct}
CLIENTS=${CLIENTS:-raw netlayer borrowed}
WRK_SECONDS=${WRK_SECONDS:-3}
RUN_TIMEOUT=${RUN_TIMEOUT:-120}
RESULTS_DIR=${RESULTS_DIR:-$here/results}
if [[ -z "${PIN:-}" ]]; then
    PIN=0
    [[ $(nproc) -ge 2 ]] && PIN=1
fi

if [[ ! -e "$lib_dir/libnetlayer.so" ]]; then
    echo "run_seq: $lib_dir/libnetlayer.so not found (set NETLAYER_LIB_DIR, or build: cmake --build build)" >&2
    exit 1
fi
lib_dir=$(cd "$lib_dir" && pwd)

work=$(mktemp -d "${TMPDIR:-/tmp}/netlayer-seq.XXXXXX")
cleanup() {
    "$here/nginx.sh" stop "$work/nginx" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "== build"
cc -O2 -Wall -I"$include_dir" -o "$work/seq_raw" "$here/seq_raw.c" -lcurl
# A copy of the library in the work dir, under its soname too: a build that replaces
# the library while the rounds run does not change what they measure.
mkdir -p "$work/lib"
cp -L "$lib_dir/libnetlayer.so" "$work/lib/libnetlayer.so"
soname=$(objdump -p "$work/lib/libnetlayer.so" 2>/dev/null | awk '$1 == "SONAME" { print $2 }')
[[ -n "$soname" ]] && ln -sf libnetlayer.so "$work/lib/$soname"
cc -O2 -Wall -I"$include_dir" -o "$work/seq_netlayer" "$here/seq_netlayer.c" \
    -L"$work/lib" -lnetlayer -Wl,-rpath,"$work/lib"

echo "== nginx"
pin=()
placement="Unpinned: the scheduler places the client and nginx."
if [[ $PIN == 1 ]]; then
    export NGINX_CPU=0
    pin=(taskset -c 1)
    placement="nginx's worker on CPU 0, the client (all its threads) on CPU 1: always across cores."
fi
url=$("$here/nginx.sh" start "$work/nginx")
status_url=${url%/*}/nginx_status
echo "$url  ($placement)"

# nginx's count of accepted connections. The status request is itself one.
accepts() {
    curl -s --max-time 5 "$status_url" | awk 'NR == 3 { print $1 }'
}

results=$work/results.tsv
failures=$work/failures.txt
: > "$results"
: > "$failures"

# run_client NAME MODE ROUND: appends "ok sequential MODE NAME ROUND req_s cpu_us conns".
run_client() {
    local name=$1 mode=$2 round=$3 before after out rc=0 cmd
    case "$name" in
        raw) cmd=("$work/seq_raw" "$url" "$N" "$WARMUP" "$mode") ;;
        netlayer) cmd=("$work/seq_netlayer" "$url" "$N" "$WARMUP" "$mode" request) ;;
        borrowed) cmd=("$work/seq_netlayer" "$url" "$N" "$WARMUP" "$mode" borrowed) ;;
        *) echo "run_seq: unknown client $name" >&2; exit 2 ;;
    esac
    before=$(accepts)
    out=$(timeout "$RUN_TIMEOUT" "${pin[@]}" "${cmd[@]}" 2>"$work/$name.err") || rc=$?
    after=$(accepts)
    if [[ $rc -ne 0 ]]; then
        printf '  round %d  %-8s %-8s FAILED: exit code %d\n' "$round" "$mode" "$name" "$rc"
        sed 's/^/      /' "$work/$name.err" | head -20
        { echo "- round $round, $mode, $name: exit code $rc"; sed 's/^/    /' "$work/$name.err" | head -20; } >> "$failures"
        printf 'fail\tsequential\t%s\t%s\t%s\t%s\n' "$mode" "$name" "$round" "$rc" >> "$results"
        return 0
    fi
    [[ "$name" != raw ]] && cp "$work/$name.err" "$work/lib-version.err"
    # out: NAME N elapsed req_per_s cpu_us_per_req
    read -r _ _ elapsed rps cpu <<<"$out"
    local conns=$((after - before - 1))   # connections the client opened (warm-up included)
    printf 'ok\tsequential\t%s\t%s\t%s\t%s\t%s\t%s\n' "$mode" "$name" "$round" "$rps" "$cpu" "$conns" >> "$results"
    printf '  round %d  %-8s %-8s %8s req/s  %7s us CPU/req  %6ss  %d connection(s)\n' \
        "$round" "$mode" "$name" "$rps" "$cpu" "$elapsed" "$conns"
}

read -r -a modes <<<"$MODES"
echo "== $ROUNDS rounds, modes {${modes[*]}}, clients {$CLIENTS}, N=$N (+$WARMUP warm-up) per run"
for round in $(seq "$ROUNDS"); do
    order=("${modes[@]}")
    if (( round % 2 == 0 )); then   # alternate which kind of document goes first
        order=(); for (( i=${#modes[@]}-1; i>=0; i-- )); do order+=("${modes[i]}"); done
    fi
    for mode in "${order[@]}"; do
        for name in $CLIENTS; do
            run_client "$name" "$mode" "$round"
        done
    done
done

meta=()
if [[ $WRK_SECONDS != 0 ]] && command -v wrk >/dev/null; then
    echo "== wrk -t1 -c1 -d${WRK_SECONDS}s"
    wrk_rps=$("${pin[@]}" wrk -t1 -c1 -d"${WRK_SECONDS}s" "$url" | awk '/^Requests\/sec:/ { printf "%.0f", $2 }')
    echo "  wrk: $wrk_rps req/s"
    meta+=("ceiling.sequential=$wrk_rps" "ceiling_cmd.sequential=wrk -t1 -c1 -d${WRK_SECONDS}s")
fi

lib_version=$(grep -h "^netlayer: library" "$work/lib-version.err" 2>/dev/null | sed 's/^netlayer: library //' || true)
mkdir -p "$RESULTS_DIR"
targets_args=()
[[ -n "${TARGETS_OUT:-}" ]] && targets_args=(--targets-out "$TARGETS_OUT")
python3 "$here/report.py" seq "$results" "$RESULTS_DIR/seq.md" --failures "$failures" "${targets_args[@]}" \
    "n=$N" "warmup=$WARMUP" "rounds=$ROUNDS" "cores=$(nproc)" "curl=$(curl-config --version)" \
    "nginx=$(/usr/sbin/nginx -v 2>&1 | sed 's/.*: //')" "netlayer=${lib_version:-unknown}" \
    "when=$(date -u '+%Y-%m-%d %H:%M UTC')" "placement=$placement" "${meta[@]}"
# The chart of throughput and CPU per client, next to the table.
python3 "$here/plot.py" "$RESULTS_DIR/seq.md" "$RESULTS_DIR/seq.svg" || echo "run_seq: no chart drawn" >&2

if [[ -s "$failures" ]]; then
    echo "run_seq: some runs failed (see above and $RESULTS_DIR/seq.md)" >&2
    exit 1
fi
