#!/usr/bin/env bash
# run_conc.sh — concurrent GET throughput, client CPU and memory per in-flight
# request: raw libcurl multi vs Netlayer (nl_request_batch and nl_request_async),
# for repeated and for distinct documents in the same rounds.
#
# Builds conc_raw, conc_netlayer and conc_memory, starts a private nginx
# (nginx.sh, worker_processes 1) and slow_server.py, then:
#   1. ROUNDS rounds; each round runs, for K = 64 then K = 256 and for both kinds of
#      document (repeated, distinct; the order alternates by round), raw,
#      netlayer-batch and netlayer-async (N requests each, after WARMUP untimed
#      ones), so every client sees the same drift of the machine;
#   2. wrk -t2 -c64 and wrk -t2 -c256 (WRK_SECONDS) as the ceilings;
#   3. MEM_ROUNDS rounds of conc_memory (raw, netlayer) with 256 and with 1024
#      requests held open by slow_server.py (MEM_ROUNDS=0 skips them).
# Prints the tables and writes results/conc.md (benchmarks/report.py): per-round
# figures, medians, medians of the per-round ratios against raw (throughput and
# CPU), repeated | distinct side by side, memory per in-flight request, and the
# targets; and results/conc.svg, the chart of throughput and CPU per client
# (benchmarks/plot.py).
# A client run that fails, hangs or crashes is reported (exit code and stderr)
# and left out of the medians; the script carries on and exits 1 at the end.
#
# Environment:
#   NETLAYER_LIB_DIR  directory holding libnetlayer.so (default: ../build/lib)
#   N                 requests per run (default 20000)
#   WARMUP            untimed requests before each run (default 2000)
#   ROUNDS            rounds (default 7)
#   KS                in-flight counts (default "64 256")
#   MODES             kinds of document (default "repeated distinct")
#   WRK_SECONDS       wrk duration (default 3)
#   MEM_COUNTS        requests held open for the memory runs (default "256 1024")
#   MEM_ROUNDS        rounds of memory runs (default 3)
#   HOLD_S            seconds slow_server.py holds each /slow request (default 5)
#   RUN_TIMEOUT       seconds allowed for one client run (default 120)
#   TARGETS_OUT       if set, a file the target lines are appended to (run_all.sh)
#   RESULTS_DIR       where conc.md goes (default: results/ next to this script)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
include_dir=$(cd "$here/../include" && pwd)
lib_dir=${NETLAYER_LIB_DIR:-$here/../build/lib}
N=${N:-20000}
WARMUP=${WARMUP:-2000}
ROUNDS=${ROUNDS:-7}
KS=${KS:-64 256}
MODES=${MODES:-repeated distinct}
RESULTS_DIR=${RESULTS_DIR:-$here/results}
WRK_SECONDS=${WRK_SECONDS:-3}
MEM_COUNTS=${MEM_COUNTS:-256 1024}
MEM_ROUNDS=${MEM_ROUNDS:-3}
HOLD_S=${HOLD_S:-5}
RUN_TIMEOUT=${RUN_TIMEOUT:-120}

if [[ ! -e "$lib_dir/libnetlayer.so" ]]; then
    echo "run_conc: $lib_dir/libnetlayer.so not found (set NETLAYER_LIB_DIR, or build: cmake --build build)" >&2
    exit 1
fi
lib_dir=$(cd "$lib_dir" && pwd)

# 1,024 connections held open at once, plus nginx's, wrk's and the server's own.
if [[ $(ulimit -n) != unlimited && $(ulimit -n) -lt 4096 ]]; then
    ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
    if [[ $(ulimit -n) != unlimited && $(ulimit -n) -lt 2200 ]]; then
        echo "run_conc: ulimit -n is $(ulimit -n) (hard $(ulimit -Hn)); the memory runs need ~2200" >&2
        exit 1
    fi
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/netlayer-conc.XXXXXX")
slow_pid=""
cleanup() {
    "$here/nginx.sh" stop "$work/nginx" >/dev/null 2>&1 || true
    if [[ -n "$slow_pid" ]] && kill -0 "$slow_pid" 2>/dev/null; then
        kill -TERM "$slow_pid" 2>/dev/null || true
        wait "$slow_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "== build"
cc -O2 -Wall -I"$include_dir" -o "$work/conc_raw" "$here/conc_raw.c" -lcurl
# A copy of the library in the work dir, under its soname too: a build that replaces
# the library while the rounds run does not change what they measure.
mkdir -p "$work/lib"
cp -L "$lib_dir/libnetlayer.so" "$work/lib/libnetlayer.so"
soname=$(objdump -p "$work/lib/libnetlayer.so" 2>/dev/null | awk '$1 == "SONAME" { print $2 }')
[[ -n "$soname" ]] && ln -sf libnetlayer.so "$work/lib/$soname"
cc -O2 -Wall -I"$include_dir" -o "$work/conc_netlayer" "$here/conc_netlayer.c" \
    -L"$work/lib" -lnetlayer -Wl,-rpath,"$work/lib" -lpthread
cc -O2 -Wall -I"$include_dir" -o "$work/conc_memory" "$here/conc_memory.c" -lcurl \
    -L"$work/lib" -lnetlayer -Wl,-rpath,"$work/lib" -lpthread

echo "== servers"
url=$("$here/nginx.sh" start "$work/nginx")
status_url=${url%/*}/nginx_status
echo "nginx: $url"
python3 "$here/slow_server.py" "$work/slow.port" "$HOLD_S" 2>"$work/slow.err" &
slow_pid=$!
for _ in $(seq 50); do
    [[ -s "$work/slow.port" ]] && break
    sleep 0.1
done
if [[ ! -s "$work/slow.port" ]]; then
    echo "run_conc: slow_server.py did not start:" >&2
    cat "$work/slow.err" >&2
    exit 1
fi
slow_url="http://127.0.0.1:$(cat "$work/slow.port")/"
echo "slow server: ${slow_url}slow (holds ${HOLD_S}s)"

accepts() {
    curl -s --max-time 5 "$status_url" | awk 'NR == 3 { print $1 }'
}

results=$work/results.tsv   # report.py's format: ok K=k mode name round req_s cpu_us conns | fail ... rc
memres=$work/memory.tsv     # name count round before during per_req held   |  fail ... rc
failures=$work/failures.txt
: > "$results"
: > "$memres"
: > "$failures"

# run_client NAME K MODE ROUND: NAME is raw, batch or async; MODE repeated or distinct.
run_client() {
    local name=$1 k=$2 mode=$3 round=$4 before after out rc=0 cmd
    case "$name" in
        raw) cmd=("$work/conc_raw" "$url" "$k" "$N" "$WARMUP" "$mode") ;;
        *) cmd=("$work/conc_netlayer" "$name" "$url" "$k" "$N" "$WARMUP" "$mode") ;;
    esac
    before=$(accepts)
    out=$(timeout "$RUN_TIMEOUT" "${cmd[@]}" 2>"$work/$name.err") || rc=$?
    after=$(accepts)
    if [[ $rc -ne 0 ]]; then
        local why="exit code $rc"
        [[ $rc -eq 124 ]] && why="killed by timeout after ${RUN_TIMEOUT}s (hang)"
        [[ $rc -eq 3 ]] && why="hang detected by the client (exit 3)"
        [[ $rc -gt 128 && $rc -ne 124 ]] && why="killed by signal $((rc - 128)) (crash)"
        printf '  round %d  K=%-4s %-8s %-6s FAILED: %s\n' "$round" "$k" "$mode" "$name" "$why"
        sed 's/^/      /' "$work/$name.err" | head -20
        {
            echo "- round $round, K=$k, $mode, $name: $why"
            sed 's/^/    /' "$work/$name.err" | head -20
        } >> "$failures"
        printf 'fail\tK=%s\t%s\t%s\t%s\t%s\n' "$k" "$mode" "$name" "$round" "$rc" >> "$results"
        return 0
    fi
    [[ "$name" != raw ]] && cp "$work/$name.err" "$work/lib-version.err"
    # out: NAME K N elapsed req_per_s cpu_us_per_req
    read -r _ _ _ elapsed rps cpu <<<"$out"
    local conns=$((after - before - 1))
    printf 'ok\tK=%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$k" "$mode" "$name" "$round" "$rps" "$cpu" "$conns" >> "$results"
    printf '  round %d  K=%-4s %-8s %-6s %8s req/s  %7s us CPU/req  %6ss  %d conn(s)\n' \
        "$round" "$k" "$mode" "$name" "$rps" "$cpu" "$elapsed" "$conns"
}

read -r -a modes <<<"$MODES"
echo "== $ROUNDS rounds, K in {$KS}, modes {${modes[*]}}, N=$N (+$WARMUP warm-up) per run, raw/batch/async"
for round in $(seq "$ROUNDS"); do
    order=("${modes[@]}")
    if (( round % 2 == 0 )); then   # alternate which kind of document goes first
        order=(); for (( i=${#modes[@]}-1; i>=0; i-- )); do order+=("${modes[i]}"); done
    fi
    for k in $KS; do
        for mode in "${order[@]}"; do
            for name in raw batch async; do
                run_client "$name" "$k" "$mode" "$round"
            done
        done
    done
done

echo "== wrk ceilings (-t2, ${WRK_SECONDS}s)"
meta=()
for k in $KS; do
    [[ $WRK_SECONDS == 0 ]] && break
    w=$(wrk -t2 -c"$k" -d"${WRK_SECONDS}s" "$url" 2>&1 || true)
    rps=$(awk '/^Requests\/sec:/ { printf "%.0f", $2 }' <<<"$w")
    errs=$(grep -E 'Socket errors|Non-2xx' <<<"$w" | tr '\n' ' ' || true)
    echo "  wrk -t2 -c$k: ${rps:-?} req/s ${errs}"
    [[ -n "$rps" ]] && meta+=("ceiling.K$k=$rps" "ceiling_cmd.K$k=wrk -t2 -c$k -d${WRK_SECONDS}s")
done

echo "== memory per in-flight request ($MEM_ROUNDS rounds, held ${HOLD_S}s by slow_server.py)"
for round in $(seq "$MEM_ROUNDS"); do
    for count in $MEM_COUNTS; do
        for name in raw netlayer; do
            rc=0
            out=$(timeout "$RUN_TIMEOUT" "$work/conc_memory" "$name" "$slow_url" "$count" 2>"$work/mem.err") || rc=$?
            if [[ $rc -ne 0 ]]; then
                printf '  round %d  %-8s %5d held: FAILED (exit %d)\n' "$round" "$name" "$count" "$rc"
                sed 's/^/      /' "$work/mem.err" | head -20
                {
                    why="exit code $rc"
                    [[ $rc -eq 124 ]] && why="killed by timeout after ${RUN_TIMEOUT}s (hang)"
                    [[ $rc -eq 3 ]] && why="hang detected by the client (exit 3)"
                    [[ $rc -gt 128 && $rc -ne 124 ]] && why="killed by signal $((rc - 128)) (crash)"
                    echo "- memory round $round, $name, $count held: $why"
                    sed 's/^/    /' "$work/mem.err" | head -20
                } >> "$failures"
                printf 'fail\t%s\t%s\t%s\t%s\n' "$name" "$count" "$round" "$rc" >> "$memres"
                continue
            fi
            # out: MODE-mem COUNT before during per_req held
            read -r _ _ before during per held <<<"$out"
            printf 'ok\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$count" "$round" "$before" "$during" "$per" "$held" >> "$memres"
            printf '  round %d  %-8s %5d held: VmRSS %6s -> %6s KiB  = %5s KiB per request\n' \
                "$round" "$name" "$count" "$before" "$during" "$per"
        done
    done
done

lib_version=$(grep -h '^netlayer: library' "$work/lib-version.err" 2>/dev/null | sed 's/^netlayer: library //' || true)
mkdir -p "$RESULTS_DIR"
targets_args=()
[[ -n "${TARGETS_OUT:-}" ]] && targets_args=(--targets-out "$TARGETS_OUT")
python3 "$here/report.py" conc "$results" "$RESULTS_DIR/conc.md" --mem "$memres" --failures "$failures" \
    "${targets_args[@]}" "n=$N" "warmup=$WARMUP" "rounds=$ROUNDS" "cores=$(nproc)" \
    "curl=$(curl-config --version)" "nginx=$(/usr/sbin/nginx -v 2>&1 | sed 's/.*: //')" \
    "netlayer=${lib_version:-unknown}" "when=$(date -u '+%Y-%m-%d %H:%M UTC')" "hold_s=$HOLD_S" "${meta[@]}"
# The chart of throughput and CPU per client, next to the table.
python3 "$here/plot.py" "$RESULTS_DIR/conc.md" "$RESULTS_DIR/conc.svg" || echo "run_conc: no chart drawn" >&2

if [[ -s "$failures" ]]; then
    echo "run_conc: some runs failed (see above and $RESULTS_DIR/conc.md)" >&2
    exit 1
fi
