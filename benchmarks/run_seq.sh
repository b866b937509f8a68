#!/usr/bin/env bash
# run_seq.sh — sequential GET throughput and client CPU: raw libcurl vs Netlayer.
#
# Builds seq_raw and seq_netlayer, starts a private nginx (nginx.sh), runs
# ROUNDS rounds interleaved (raw, netlayer, raw, netlayer, ...) of N requests
# each, runs wrk -t1 -c1 once as the single-connection ceiling, and prints a
# table with per-round figures, netlayer/raw ratios and their medians. The same
# table is written as Markdown to results/seq.md.
#
# Environment:
#   NETLAYER_LIB_DIR  directory holding libnetlayer.so (default /work/main/.build/release)
#   N                 requests per run (default 20000)
#   WARMUP            untimed requests before each run (default 1000)
#   ROUNDS            rounds (default 5)
#   WRK_SECONDS       wrk duration (default 3)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
include_dir=$(cd "$here/../include" && pwd)
lib_dir=${NETLAYER_LIB_DIR:-$here/../build/lib}
N=${N:-20000}
WARMUP=${WARMUP:-1000}
ROUNDS=${ROUNDS:-5}
WRK_SECONDS=${WRK_SECONDS:-3}
RUN_TIMEOUT=${RUN_TIMEOUT:-120}   # seconds allowed for one client run

if [[ ! -e "$lib_dir/libnetlayer.so" ]]; then
    echo "run_seq: $lib_dir/libnetlayer.so not found (set NETLAYER_LIB_DIR, or build: swift build -c release)" >&2
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
cc -O2 -Wall -o "$work/seq_raw" "$here/seq_raw.c" -lcurl
# The library's soname is libnetlayer.so.1 but SwiftPM writes only libnetlayer.so:
# give the loader a libnetlayer.so.1 to find (a symlink in the work dir) when
# the library dir has none.
rpath=$lib_dir
soname=$(objdump -p "$lib_dir/libnetlayer.so" 2>/dev/null | awk '$1 == "SONAME" { print $2 }')
if [[ -n "$soname" && ! -e "$lib_dir/$soname" ]]; then
    mkdir -p "$work/lib"
    ln -s "$lib_dir/libnetlayer.so" "$work/lib/$soname"
    rpath=$work/lib
fi
cc -O2 -Wall -I"$include_dir" -o "$work/seq_netlayer" "$here/seq_netlayer.c" \
    -L"$lib_dir" -lnetlayer -Wl,-rpath,"$rpath"

echo "== nginx"
url=$("$here/nginx.sh" start "$work/nginx")
status_url=${url%/*}/nginx_status
echo "$url"

# nginx's count of accepted connections. The status request is itself one.
accepts() {
    curl -s --max-time 5 "$status_url" | awk 'NR == 3 { print $1 }'
}

# run_client NAME: runs it once, appends "name round req_s cpu_us elapsed conns" to results.
results=$work/results.tsv
: > "$results"
run_client() {
    local name=$1 round=$2 before after out
    before=$(accepts)
    if ! out=$(timeout "$RUN_TIMEOUT" "$work/seq_$name" "$url" "$N" "$WARMUP" 2>"$work/$name.err"); then
        echo "run_seq: $name failed in round $round:" >&2
        cat "$work/$name.err" >&2
        exit 1
    fi
    after=$(accepts)
    # out: NAME N elapsed req_per_s cpu_us_per_req
    read -r _ _ elapsed rps cpu <<<"$out"
    local conns=$((after - before - 1))   # connections the client opened (warm-up included)
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$round" "$rps" "$cpu" "$elapsed" "$conns" >> "$results"
    printf '  round %d  %-8s %8s req/s  %7s us CPU/req  %6ss  %d connection(s)\n' \
        "$round" "$name" "$rps" "$cpu" "$elapsed" "$conns"
}

echo "== $ROUNDS rounds, N=$N (+$WARMUP warm-up) per run, interleaved"
for round in $(seq "$ROUNDS"); do
    run_client raw "$round"
    run_client netlayer "$round"
done

echo "== wrk -t1 -c1 -d${WRK_SECONDS}s"
wrk_rps=$(wrk -t1 -c1 -d"${WRK_SECONDS}s" "$url" | awk '/^Requests\/sec:/ { printf "%.0f", $2 }')
echo "  wrk: $wrk_rps req/s"

lib_version=$(grep -h '^netlayer: library' "$work/netlayer.err" | sed 's/^netlayer: library //' || true)
mkdir -p "$here/results"
python3 - "$results" "$here/results/seq.md" "$N" "$WARMUP" "$wrk_rps" "$WRK_SECONDS" \
    "$(nproc)" "$(curl-config --version)" "$(/usr/sbin/nginx -v 2>&1 | sed 's/.*: //')" \
    "$lib_version" "$(date -u '+%Y-%m-%d %H:%M UTC')" <<'PY'
import statistics, sys

path, md_path, n, warmup, wrk, wrk_s, cores, curl_v, nginx_v, lib_v, when = sys.argv[1:12]
rows = {}
for line in open(path):
    name, rnd, rps, cpu, elapsed, conns = line.split("\t")
    rows.setdefault(int(rnd), {})[name] = (float(rps), float(cpu), int(conns))

table = []
for rnd in sorted(rows):
    raw, nl = rows[rnd]["raw"], rows[rnd]["netlayer"]
    table.append((rnd, raw[0], raw[1], nl[0], nl[1], nl[0] / raw[0], nl[1] / raw[1], raw[2], nl[2]))

med = lambda i: statistics.median(r[i] for r in table)
header = ["round", "raw req/s", "raw CPU µs/req", "netlayer req/s", "netlayer CPU µs/req",
          "req/s ratio (nl/raw)", "CPU ratio (nl/raw)", "conns raw/nl"]
lines = [[str(r[0]), f"{r[1]:.0f}", f"{r[2]:.1f}", f"{r[3]:.0f}", f"{r[4]:.1f}",
          f"{r[5]:.2f}", f"{r[6]:.2f}", f"{r[7]}/{r[8]}"] for r in table]
median = ["median", f"{med(1):.0f}", f"{med(2):.1f}", f"{med(3):.0f}", f"{med(4):.1f}",
          f"{med(5):.2f}", f"{med(6):.2f}", ""]
wrk_rps = float(wrk) if wrk else float("nan")

# Terminal table.
allrows = [header] + lines + [median]
widths = [max(len(r[i]) for r in allrows) for i in range(len(header))]
fmt = lambda r: "  ".join(c.rjust(w) for c, w in zip(r, widths))
print()
print(fmt(header))
print("  ".join("-" * w for w in widths))
for r in lines:
    print(fmt(r))
print("  ".join("-" * w for w in widths))
print(fmt(median))
print()
print(f"single-connection ceiling (wrk -t1 -c1 -d{wrk_s}s): {wrk_rps:.0f} req/s; "
      f"median raw = {med(1) / wrk_rps:.0%} of it, netlayer = {med(3) / wrk_rps:.0%}")
print(f"ratios are medians of per-round ratios; 'conns' = new connections nginx accepted per run (warm-up included)")
reused = all(r[7] <= 2 and r[8] <= 2 for r in table)
if not reused:
    print("WARNING: a client opened more than 2 connections in a run; it is not reusing its connection")

# Markdown fragment.
md = []
md.append(f"### Sequential GETs, one connection ({when})")
md.append("")
md.append(f"{len(table)} rounds interleaved (raw, netlayer, …), N = {n} requests per run after {warmup} "
          f"warm-up requests; {nginx_v} `return 200`, 1 worker ({cores} cores, loopback); {curl_v}; "
          f"Netlayer {lib_v or 'unknown'}. CPU = client user+sys (getrusage) per request.")
md.append("")
md.append("| " + " | ".join(header) + " |")
md.append("|" + "|".join("---:" for _ in header) + "|")
for r in lines:
    md.append("| " + " | ".join(r) + " |")
md.append("| " + " | ".join(f"**{c}**" if c else "" for c in median) + " |")
md.append("")
md.append(f"Single-connection ceiling, `wrk -t1 -c1 -d{wrk_s}s`: **{wrk_rps:.0f} req/s** "
          f"(median raw libcurl = {med(1) / wrk_rps:.0%} of it, Netlayer = {med(3) / wrk_rps:.0%}).")
md.append("")
md.append("Ratios are medians of the per-round ratios. *conns* = new connections nginx accepted "
          "during the run, warm-up included (1 = the connection was reused throughout).")
if not reused:
    md.append("")
    md.append("**Warning:** a client opened more than 2 connections in a run (no connection reuse).")
open(md_path, "w").write("\n".join(md) + "\n")
print(f"\nwrote {md_path}")
PY
