#!/usr/bin/env bash
# run_conc.sh — concurrent GET throughput, client CPU and memory per in-flight
# request: raw libcurl multi vs Netlayer (nl_request_batch and nl_request_async).
#
# Builds conc_raw, conc_netlayer and conc_memory, starts a private nginx
# (nginx.sh, worker_processes 1) and slow_server.py, then:
#   1. ROUNDS rounds; each round runs, for K = 64 then K = 256, raw, netlayer-batch
#      and netlayer-async (N requests each, after WARMUP untimed ones), so every
#      client sees the same drift of the machine;
#   2. wrk -t2 -c64 and wrk -t2 -c256 (WRK_SECONDS) as the ceilings;
#   3. MEM_ROUNDS rounds of conc_memory (raw, netlayer) with 256 and with 1024
#      requests held open by slow_server.py.
# Prints a table and writes Markdown to results/conc.md: per-round figures,
# medians, medians of the per-round ratios netlayer/raw (throughput and CPU),
# memory per in-flight request, and whether the targets are met.
# A client run that fails, hangs or crashes is reported (exit code and stderr)
# and left out of the medians; the script carries on and exits 1 at the end.
#
# Environment:
#   NETLAYER_LIB_DIR  directory holding libnetlayer.so (default: ../build/lib)
#   N                 requests per run (default 20000)
#   WARMUP            untimed requests before each run (default 2000)
#   ROUNDS            rounds (default 5)
#   KS                in-flight counts (default "64 256")
#   WRK_SECONDS       wrk duration (default 3)
#   MEM_COUNTS        requests held open for the memory runs (default "256 1024")
#   MEM_ROUNDS        rounds of memory runs (default 3)
#   HOLD_S            seconds slow_server.py holds each /slow request (default 5)
#   RUN_TIMEOUT       seconds allowed for one client run (default 120)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
include_dir=$(cd "$here/../include" && pwd)
lib_dir=${NETLAYER_LIB_DIR:-$here/../build/lib}
N=${N:-20000}
WARMUP=${WARMUP:-2000}
ROUNDS=${ROUNDS:-5}
KS=${KS:-64 256}
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
cc -O2 -Wall -o "$work/conc_raw" "$here/conc_raw.c" -lcurl
rpath=$lib_dir
soname=$(objdump -p "$lib_dir/libnetlayer.so" 2>/dev/null | awk '$1 == "SONAME" { print $2 }')
if [[ -n "$soname" && ! -e "$lib_dir/$soname" ]]; then
    mkdir -p "$work/lib"
    ln -s "$lib_dir/libnetlayer.so" "$work/lib/$soname"
    rpath=$work/lib
fi
cc -O2 -Wall -I"$include_dir" -o "$work/conc_netlayer" "$here/conc_netlayer.c" \
    -L"$lib_dir" -lnetlayer -Wl,-rpath,"$rpath" -lpthread
cc -O2 -Wall -I"$include_dir" -o "$work/conc_memory" "$here/conc_memory.c" -lcurl \
    -L"$lib_dir" -lnetlayer -Wl,-rpath,"$rpath" -lpthread

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

results=$work/results.tsv   # kind name K round req_s cpu_us elapsed conns  |  fail ... rc
memres=$work/memory.tsv     # name count round before during per_req held   |  fail ... rc
failures=$work/failures.txt
: > "$results"
: > "$memres"
: > "$failures"

# run_client NAME K ROUND: NAME is raw, batch or async.
run_client() {
    local name=$1 k=$2 round=$3 before after out rc=0 cmd
    case "$name" in
        raw) cmd=("$work/conc_raw" "$url" "$k" "$N" "$WARMUP") ;;
        *) cmd=("$work/conc_netlayer" "$name" "$url" "$k" "$N" "$WARMUP") ;;
    esac
    before=$(accepts)
    out=$(timeout "$RUN_TIMEOUT" "${cmd[@]}" 2>"$work/$name.err") || rc=$?
    after=$(accepts)
    if [[ $rc -ne 0 ]]; then
        local why="exit code $rc"
        [[ $rc -eq 124 ]] && why="killed by timeout after ${RUN_TIMEOUT}s (hang)"
        [[ $rc -eq 3 ]] && why="hang detected by the client (exit 3)"
        [[ $rc -gt 128 && $rc -ne 124 ]] && why="killed by signal $((rc - 128)) (crash)"
        printf '  round %d  K=%-4s %-6s FAILED: %s\n' "$round" "$k" "$name" "$why"
        sed 's/^/      /' "$work/$name.err" | head -20
        {
            echo "- round $round, K=$k, $name: $why"
            sed 's/^/    /' "$work/$name.err" | head -20
        } >> "$failures"
        printf 'fail\t%s\t%s\t%s\t%s\n' "$name" "$k" "$round" "$rc" >> "$results"
        return 0
    fi
    [[ "$name" != raw ]] && cp "$work/$name.err" "$work/netlayer.err"
    # out: NAME K N elapsed req_per_s cpu_us_per_req
    read -r _ _ _ elapsed rps cpu <<<"$out"
    local conns=$((after - before - 1))
    printf 'ok\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$k" "$round" "$rps" "$cpu" "$elapsed" "$conns" >> "$results"
    printf '  round %d  K=%-4s %-6s %8s req/s  %7s us CPU/req  %6ss  %d conn(s)\n' \
        "$round" "$k" "$name" "$rps" "$cpu" "$elapsed" "$conns"
}

echo "== $ROUNDS rounds, K in {$KS}, N=$N (+$WARMUP warm-up) per run, interleaved raw/batch/async"
for round in $(seq "$ROUNDS"); do
    for k in $KS; do
        for name in raw batch async; do
            run_client "$name" "$k" "$round"
        done
    done
done

echo "== wrk ceilings (-t2, ${WRK_SECONDS}s)"
wrk_rows=""
for k in $KS; do
    w=$(wrk -t2 -c"$k" -d"${WRK_SECONDS}s" "$url" 2>&1 || true)
    rps=$(awk '/^Requests\/sec:/ { printf "%.0f", $2 }' <<<"$w")
    errs=$(grep -E 'Socket errors|Non-2xx' <<<"$w" | tr '\n' ' ' || true)
    echo "  wrk -t2 -c$k: ${rps:-?} req/s ${errs}"
    wrk_rows+="$k ${rps:-nan}"$'\n'
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

lib_version=$(grep -h '^netlayer: library' "$work/netlayer.err" 2>/dev/null | sed 's/^netlayer: library //' || true)
mkdir -p "$here/results"
python3 - "$results" "$memres" "$failures" "$here/results/conc.md" "$N" "$WARMUP" "$WRK_SECONDS" \
    "$wrk_rows" "$HOLD_S" "$(nproc)" "$(curl-config --version)" \
    "$(/usr/sbin/nginx -v 2>&1 | sed 's/.*: //')" "$lib_version" "$(date -u '+%Y-%m-%d %H:%M UTC')" <<'PY'
import statistics, sys

(res_path, mem_path, fail_path, md_path, n, warmup, wrk_s, wrk_rows, hold_s, cores,
 curl_v, nginx_v, lib_v, when) = sys.argv[1:15]
TARGET_TPUT, TARGET_MEM = 0.8, 64.0

runs, fails = {}, []
for line in open(res_path):
    f = line.rstrip("\n").split("\t")
    if f[0] == "fail":
        fails.append((f[1], int(f[2]), int(f[3]), int(f[4])))
        continue
    _, name, k, rnd, rps, cpu, elapsed, conns = f
    runs.setdefault(int(k), {}).setdefault(int(rnd), {})[name] = (float(rps), float(cpu), int(conns))
wrk = {}
for line in wrk_rows.strip().splitlines():
    k, v = line.split()
    wrk[int(k)] = float(v)
mem = {}
mem_fails = []
for line in open(mem_path):
    f = line.rstrip("\n").split("\t")
    if f[0] == "fail":
        mem_fails.append(f[1:])
        continue
    _, name, count, rnd, before, during, per, held = f
    mem.setdefault((name, int(count)), []).append((int(before), int(during), float(per)))
failure_text = open(fail_path).read().rstrip()

out, md = [], []
P = lambda s="": out.append(s)
M = lambda s="": md.append(s)
med = statistics.median

M(f"### Concurrent GETs, K in flight ({when})")
M()
M(f"Rounds interleaved (each round: K=64 raw, batch, async, then K=256 raw, batch, async), "
  f"N = {n} requests per run after {warmup} warm-up requests; {nginx_v} `return 200` (70-byte JSON), "
  f"1 worker ({cores} cores, loopback); {curl_v}; Netlayer {lib_v or 'unknown'}. "
  f"*raw* = libcurl multi, `curl_multi_socket_action` + epoll, K easy handles re-added as they finish; "
  f"*batch* = `nl_request_batch` of K documents, repeated; *async* = K `nl_request_async` kept in flight "
  f"(the callback starts the next). CPU = client user+sys (getrusage, all threads) per request. "
  f"*conns* = connections nginx accepted during the run, warm-up included (K = reused throughout).")

summary = []
for k in sorted(runs):
    rows = []
    for rnd in sorted(runs[k]):
        r = runs[k][rnd]
        if "raw" not in r:
            continue
        raw = r["raw"]
        b, a = r.get("batch"), r.get("async")
        rows.append(dict(rnd=rnd, raw=raw, b=b, a=a,
                         br=(b[0] / raw[0], b[1] / raw[1]) if b else None,
                         ar=(a[0] / raw[0], a[1] / raw[1]) if a else None))
    header = ["round", "raw req/s", "raw µs/req", "batch req/s", "batch µs/req", "async req/s",
              "async µs/req", "batch/raw req/s", "batch/raw CPU", "async/raw req/s", "async/raw CPU",
              "conns raw/b/a"]
    fmt0 = lambda v: "FAIL" if v is None else f"{v:.0f}"
    fmt1 = lambda v: "FAIL" if v is None else f"{v:.1f}"
    fmt2 = lambda v: "–" if v is None else f"{v:.2f}"
    lines = []
    for r in rows:
        lines.append([str(r["rnd"]), fmt0(r["raw"][0]), fmt1(r["raw"][1]),
                      fmt0(r["b"] and r["b"][0]), fmt1(r["b"] and r["b"][1]),
                      fmt0(r["a"] and r["a"][0]), fmt1(r["a"] and r["a"][1]),
                      fmt2(r["br"] and r["br"][0]), fmt2(r["br"] and r["br"][1]),
                      fmt2(r["ar"] and r["ar"][0]), fmt2(r["ar"] and r["ar"][1]),
                      "/".join(str(x[2]) if x else "-" for x in (r["raw"], r["b"], r["a"]))])
    def m(sel):
        vals = [sel(r) for r in rows if sel(r) is not None]
        return med(vals) if vals else None
    meds = dict(raw_rps=m(lambda r: r["raw"][0]), raw_cpu=m(lambda r: r["raw"][1]),
                b_rps=m(lambda r: r["b"] and r["b"][0]), b_cpu=m(lambda r: r["b"] and r["b"][1]),
                a_rps=m(lambda r: r["a"] and r["a"][0]), a_cpu=m(lambda r: r["a"] and r["a"][1]),
                br=m(lambda r: r["br"] and r["br"][0]), bc=m(lambda r: r["br"] and r["br"][1]),
                ar=m(lambda r: r["ar"] and r["ar"][0]), ac=m(lambda r: r["ar"] and r["ar"][1]))
    median = ["median", fmt0(meds["raw_rps"]), fmt1(meds["raw_cpu"]), fmt0(meds["b_rps"]),
              fmt1(meds["b_cpu"]), fmt0(meds["a_rps"]), fmt1(meds["a_cpu"]), fmt2(meds["br"]),
              fmt2(meds["bc"]), fmt2(meds["ar"]), fmt2(meds["ac"]), ""]
    ceiling = wrk.get(k, float("nan"))
    summary.append((k, meds, ceiling))

    allrows = [header] + lines + [median]
    widths = [max(len(r[i]) for r in allrows) for i in range(len(header))]
    f = lambda r: "  ".join(c.rjust(w) for c, w in zip(r, widths))
    P(f"K = {k} in flight")
    P(f(header))
    P("  ".join("-" * w for w in widths))
    for r in lines:
        P(f(r))
    P("  ".join("-" * w for w in widths))
    P(f(median))
    pct = lambda v: "–" if v is None or ceiling != ceiling else f"{v / ceiling:.0%}"
    P(f"ceiling wrk -t2 -c{k} -d{wrk_s}s: {ceiling:.0f} req/s; median raw = {pct(meds['raw_rps'])} of it, "
      f"batch = {pct(meds['b_rps'])}, async = {pct(meds['a_rps'])}")
    P()

    M()
    M(f"#### K = {k} in flight")
    M()
    M("| " + " | ".join(header) + " |")
    M("|" + "|".join("---:" for _ in header) + "|")
    for r in lines:
        M("| " + " | ".join(r) + " |")
    M("| " + " | ".join(f"**{c}**" if c else "" for c in median) + " |")
    M()
    M(f"Ceiling, `wrk -t2 -c{k} -d{wrk_s}s`: **{ceiling:.0f} req/s** (median raw = {pct(meds['raw_rps'])} "
      f"of it, batch = {pct(meds['b_rps'])}, async = {pct(meds['a_rps'])}).")

# Memory.
mem_header = ["client", "held", "runs", "VmRSS before KiB", "VmRSS during KiB", "KiB per request (median)",
              "min–max"]
mem_lines = []
for (name, count) in sorted(mem, key=lambda x: (x[1], x[0] != "raw")):
    v = mem[(name, count)]
    pers = [x[2] for x in v]
    mem_lines.append([name, str(count), str(len(v)), f"{med([x[0] for x in v]):.0f}",
                      f"{med([x[1] for x in v]):.0f}", f"{med(pers):.1f}",
                      f"{min(pers):.1f}–{max(pers):.1f}"])
P(f"memory per in-flight request (VmRSS during − before) / held; requests held {hold_s}s by slow_server.py")
if mem_lines:
    widths = [max(len(r[i]) for r in [mem_header] + mem_lines) for i in range(len(mem_header))]
    f = lambda r: "  ".join(c.rjust(w) for c, w in zip(r, widths))
    P(f(mem_header))
    P("  ".join("-" * w for w in widths))
    for r in mem_lines:
        P(f(r))
P()
M()
M("#### Memory per in-flight request")
M()
M(f"Separate process per run: warm-up request, VmRSS (`/proc/self/status`) read, then *held* requests "
  f"started at once against a stdlib-asyncio server (`slow_server.py`) that holds each for {hold_s} s "
  f"without sending anything; once the server reports all of them held (its `/stats`), VmRSS is sampled "
  f"for ~300 ms and the largest value kept. Netlayer: `nl_request_async` with `maxConcurrent` = held; "
  f"raw: fresh easy handles in one multi (`CURLMOPT_MAXCONNECTS` = held).")
M()
M("| " + " | ".join(mem_header) + " |")
M("|" + "|".join("---:" if i else "---" for i in range(len(mem_header))) + "|")
for r in mem_lines:
    M("| " + " | ".join(r) + " |")

# Targets.
verdict = []
for k, meds, _ in summary:
    for mode, key in (("batch", "br"), ("async", "ar")):
        v = meds[key]
        ok = v is not None and v >= TARGET_TPUT
        verdict.append(f"throughput K={k}, netlayer-{mode}: median ratio "
                       f"{'n/a' if v is None else f'{v:.2f}'} vs ≥ {TARGET_TPUT} → {'MET' if ok else 'NOT MET'}")
for k in sorted({f[1] for f in fails} - {k for k, _, _ in summary}):
    verdict.append(f"throughput K={k}: no successful round → NOT MET (see failed runs)")
for (name, count), v in sorted(mem.items(), key=lambda x: (x[0][1], x[0][0])):
    if name != "netlayer":
        continue
    per = med([x[2] for x in v])
    verdict.append(f"memory, netlayer, {count} held: {per:.1f} KiB per request vs < {TARGET_MEM:.0f} KiB → "
                   f"{'MET' if per < TARGET_MEM else 'NOT MET'}")
if not any(n == "netlayer" for n, _ in mem):
    verdict.append("memory, netlayer: no successful run → NOT MET")
P("targets (issue): Netlayer ≥ 0.8× raw libcurl multi throughput at 64 and 256 in flight; "
  "< 64 KiB per in-flight request")
for v in verdict:
    P("  " + v)
M()
M("#### Targets")
M()
M("Netlayer ≥ 0.8× raw libcurl multi throughput at 64 and at 256 in flight (median of per-round "
  "ratios), and under 64 KiB of memory per in-flight request:")
M()
for v in verdict:
    M(f"- {v}")
if failure_text:
    P()
    P("FAILED RUNS (left out of the medians):")
    P(failure_text)
    M()
    M("#### Failed runs (left out of the medians)")
    M()
    M("```")
    M(failure_text)
    M("```")
M()
M("Ratios are medians of the per-round ratios (netlayer/raw), so each ratio compares runs taken "
  "seconds apart. For CPU, lower is better: a CPU ratio of 2.00 means Netlayer spends twice raw "
  "libcurl's CPU per request.")

print()
print("\n".join(out))
open(md_path, "w").write("\n".join(md) + "\n")
print(f"wrote {md_path}")
PY

if [[ -s "$failures" ]]; then
    echo "run_conc: some runs failed (see above and results/conc.md)" >&2
    exit 1
fi
