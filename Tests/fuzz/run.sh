#!/usr/bin/env bash
# Builds the libFuzzer target (Swift, -sanitize=fuzzer,address) and runs it.
#
#   Tests/fuzz/run.sh [SECONDS]      default 60; prints libFuzzer's summary
#
# The Netlayer and NetlayerC sources are compiled with the harness as one module
# (their `import Netlayer` lines dropped), so the fuzzer reaches internal types.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
seconds=${1:-60}
out="$root/build/fuzz"
mkdir -p "$out/src" "$out/corpus" "$out/crashes"
rm -f "$out/src/"*.swift
for f in $(find "$root/Sources/Netlayer" "$root/Sources/NetlayerC" -name '*.swift'); do
    # One module: the cross-module imports go, and the files keep unique names.
    name=$(echo "${f#$root/Sources/}" | tr '/' '_')
    sed -e '/^import Netlayer$/d' "$f" > "$out/src/$name"
done
cp "$here/FuzzTarget.swift" "$out/src/"
if [ ! -x "$out/netlayer-fuzz" ] || [ -n "$(find "$root/Sources" "$here" -newer "$out/netlayer-fuzz" -name '*.swift' | head -1)" ]; then
    echo "== building the fuzz target"
    swiftc -sanitize=fuzzer,address -parse-as-library -Onone -g -module-name NetlayerFuzz -package-name Netlayer \
        -I "$root/Sources/CCurl" -Xcc -fmodule-map-file="$root/Sources/CCurl/module.modulemap" \
        -I "$root/Sources/CYAML" -Xcc -fmodule-map-file="$root/Sources/CYAML/module.modulemap" \
        "$out/src/"*.swift -lcurl -lyaml -o "$out/netlayer-fuzz" 2>&1 | grep -v "warning:" | grep -E "error|rror:" || true
    [ -x "$out/netlayer-fuzz" ] || { echo "fuzz build failed" >&2; exit 1; }
fi
echo "== fuzzing for ${seconds}s (corpus: Tests/fuzz/corpus + build/fuzz/corpus)"
cd "$out/crashes"
SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0 "$out/netlayer-fuzz" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len=4096 -print_final_stats=1 "$out/corpus" "$here/corpus" 2>&1 | tee "$out/last-run.log" | \
    grep -E "^(#[0-9]+ +DONE|Done|stat::|==[0-9]+==ERROR|SUMMARY|INFO: seed)" || true
if grep -qE "ERROR: (libFuzzer|AddressSanitizer)|SUMMARY: AddressSanitizer|deadly signal" "$out/last-run.log"; then
    echo "fuzz: a crash was found; see $out/last-run.log and $out/crashes" >&2
    echo "0 passed, 1 failed"
    exit 1
fi
runs=$(grep -oE "stat::number_of_executed_units: *[0-9]+" "$out/last-run.log" | grep -oE "[0-9]+$" || echo "?")
echo "fuzz: $runs executions in ${seconds}s, no crash"
echo "1 passed, 0 failed"
