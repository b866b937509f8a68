#!/usr/bin/env bash
# Soak: N (default 1,000,000) mixed requests on one Netlayer client against nginx.
# Prints soak.c's report and writes it to results/soak.md (RESULTS_DIR to change).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lib_dir=${NETLAYER_LIB_DIR:-$here/../build/lib}
results_dir=${RESULTS_DIR:-$here/results}
n=${N:-1000000}
work=$(mktemp -d)
trap '"$here/nginx.sh" stop "$work/nginx" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
cc -O2 -I"$here/../include" -o "$work/soak" "$here/soak.c" -L"$lib_dir" -lnetlayer -Wl,-rpath,"$lib_dir" -lpthread
url=$("$here/nginx.sh" start "$work/nginx")
start=$(date +%s)
"$work/soak" "$url" "$n" | tee "$work/soak.out"
seconds=$(( $(date +%s) - start ))
mkdir -p "$results_dir"
{
    echo "## Soak"
    echo
    echo "Generated $(date -u '+%Y-%m-%d %H:%M UTC') by \`benchmarks/run_soak.sh\`: $n requests on one"
    echo "client against nginx (80% \`nl_request\` successes, 10% 404s, 10% \`nl_request_async\`"
    echo "cancelled at once), ${seconds} s; $(nproc) cores. Target: RSS drift after warm-up under 10 MB."
    echo
    echo '```'
    cat "$work/soak.out"
    echo '```'
} > "$results_dir/soak.md"
echo "wrote $results_dir/soak.md"
