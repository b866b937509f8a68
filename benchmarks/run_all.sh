#!/usr/bin/env bash
# run_all.sh — every benchmark the performance targets are checked with, in one go:
#
#   1. run_seq.sh    C, sequential: nl_request (and nl_request_borrowed) vs raw libcurl
#   2. run_conc.sh   C, 64 and 256 in flight: nl_request_batch, nl_request_async vs raw
#                    libcurl multi (and one round of the memory-per-request runs)
#   3. bindings/python/benchmarks/run_bench.sh   the Python package vs pycurl,
#                    requests, httpx, urllib3 (sequential) and aiohttp (256 in flight)
#
# each with repeated and distinct documents in the same interleaved rounds. Writes
# results/seq.md, results/conc.md, results/python.md (each with its chart, .svg) and
# results/summary.md (every
# target: the ratio for repeated and for distinct documents, the target, met or
# missed). About 5-10 minutes on a 2-core machine; run it on a quiet machine.
#
# Environment (passed on to the three scripts):
#   NETLAYER_LIB_DIR  directory holding libnetlayer.so (default: ../build/lib)
#   ROUNDS            rounds of every suite (default 7)
#   SEQ_N             requests per run of run_seq.sh (default 20000)
#   CONC_N            requests per run of run_conc.sh (default 40000: at 64 and 256 in
#                     flight a run of 20000 lasts well under a second on this kind of
#                     machine, and single rounds swing widely)
#   WARMUP            untimed requests before each C run (each script's default)
#   MEM_ROUNDS        rounds of memory runs in run_conc.sh (default 1)
#   PY_ARGS           extra bench_http.py options, e.g. "--seq 1000 --conc 2000"
#   RESULTS_DIR       where the results go (default: results/ next to this script)
#   SUITES            which to run (default "seq conc python"; "openapi" runs
#                     run_openapi.sh too, which has no target of its own)
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
export ROUNDS=${ROUNDS:-7}
export MEM_ROUNDS=${MEM_ROUNDS:-1}
export RESULTS_DIR=${RESULTS_DIR:-$here/results}
SEQ_N=${SEQ_N:-20000}
CONC_N=${CONC_N:-40000}
SUITES=${SUITES:-seq conc python}
PY_ARGS=${PY_ARGS:-}

missing=()
for tool in cc curl curl-config wrk taskset objdump python3; do
    command -v "$tool" >/dev/null || missing+=("$tool")
done
[[ -x /usr/sbin/nginx ]] || missing+=("/usr/sbin/nginx (nginx-light)")
if (( ${#missing[@]} )); then
    echo "run_all: missing: ${missing[*]} (apt-get install -y nginx-light wrk libcurl4-openssl-dev)" >&2
    exit 1
fi

mkdir -p "$RESULTS_DIR"
RESULTS_DIR=$(cd "$RESULTS_DIR" && pwd)
export TARGETS_OUT
TARGETS_OUT=$(mktemp "${TMPDIR:-/tmp}/netlayer-targets.XXXXXX")
trap 'rm -f "$TARGETS_OUT"' EXIT

started=$(date +%s)
# Read before the run: the suites rewrite the tracked results files.
source_rev=$(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)
status=()
for suite in $SUITES; do
    t0=$(date +%s)
    echo "==== $suite"
    rc=0
    case "$suite" in
        seq) N=$SEQ_N "$here/run_seq.sh" || rc=$? ;;
        conc) N=$CONC_N "$here/run_conc.sh" || rc=$? ;;
        # shellcheck disable=SC2086  # PY_ARGS is a list of options
        python) "$root/bindings/python/benchmarks/run_bench.sh" --rounds "$ROUNDS" $PY_ARGS || rc=$? ;;
        openapi) "$here/run_openapi.sh" || rc=$? ;;
        *) echo "run_all: unknown suite $suite" >&2; rc=2 ;;
    esac
    status+=("$suite=$rc:$(( $(date +%s) - t0 ))")
done
elapsed=$(( $(date +%s) - started ))

python3 - "$TARGETS_OUT" "$RESULTS_DIR/summary.md" "$elapsed" "$ROUNDS" \
    "$source_rev" \
    "$(date -u '+%Y-%m-%d %H:%M UTC')" "${status[@]}" <<'PY'
import sys

targets_path, out_path, elapsed, rounds, revision, when, *status = sys.argv[1:]
names = {"seq": "C, sequential", "conc": "C, concurrent", "python": "Python"}
files = {"seq": "seq.md", "conc": "conc.md", "python": "python.md"}
rows = [line.rstrip("\n").split("\t") for line in open(targets_path, encoding="utf-8") if line.strip()]
lines = [
    "## Performance targets",
    "",
    f"`benchmarks/run_all.sh`, {rounds} rounds per suite, {int(elapsed) // 60} min {int(elapsed) % 60} s; "
    f"{when}; source `{revision}`. Ratios are medians of per-round ratios, repeated and distinct "
    f"documents measured in the same rounds; the targets are checked on distinct documents.",
    "",
    "| suite | group | comparison | measure | repeated | distinct | target | result |",
    "|---|---|---|---|---:|---:|---:|---|",
]
for suite, group, comparison, measure, rep, dis, target, result in rows:
    shown = f"**{result}**" if result.startswith("missed") else result
    lines.append(f"| {names.get(suite, suite)} | {group} | {comparison} | {measure} | {rep} | {dis} | "
                 f"{target} | {shown} |")
met = sum(r[-1] == "met" for r in rows)
lines += ["", f"{met} of {len(rows)} targets met.", ""]
failed = []
for entry in status:
    suite, rest = entry.split("=", 1)
    rc, seconds = rest.split(":")
    detail = f"[{files.get(suite, suite)}]({files.get(suite, suite)})"
    lines.append(f"- {names.get(suite, suite)}: {detail}, {int(seconds) // 60} min {int(seconds) % 60} s"
                 + ("" if rc == "0" else f", **exit code {rc}** (see the script's output)"))
    if rc != "0":
        failed.append(suite)
lines.append("")
open(out_path, "w", encoding="utf-8").write("\n".join(lines))
print("\n".join(lines))
print(f"wrote {out_path}")
sys.exit(1 if failed else 0)
PY
