#!/usr/bin/env bash
# Builds the libFuzzer target (Swift, -sanitize=fuzzer,address) and runs it.
#
#   Tests/fuzz/run.sh [SECONDS]      default 60; prints libFuzzer's summary
#   Tests/fuzz/run.sh --build-only   builds the target (when a source is newer) and stops
#
# The library's Swift sources (every layer's target and NetlayerC) are compiled with the
# harness as one module (their imports of each other dropped), so the fuzzer reaches
# internal types.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
seconds=${1:-60}
build_only=0
[ "$seconds" = "--build-only" ] && build_only=1
out="$root/build/fuzz"
mkdir -p "$out/src" "$out/corpus" "$out/crashes"
rm -f "$out/src/"*.swift
for f in $(find "$root/Sources/NetlayerJSON" "$root/Sources/NetlayerCore" "$root/Sources/NetlayerCurl" \
                "$root/Sources/NetlayerFeatures" "$root/Sources/NetlayerDocuments" "$root/Sources/Netlayer" \
                "$root/Sources/NetlayerC" -name '*.swift'); do
    # One module: the cross-module imports go (and the umbrella's re-exports), and the
    # files keep unique names.
    name=$(echo "${f#$root/Sources/}" | tr '/' '_')
    sed -E -e '/^(@_exported )?import Netlayer(JSON|Core|Curl|Features|Documents)?$/d' "$f" > "$out/src/$name"
done
cp "$here/FuzzTarget.swift" "$out/src/"
# CRegex (C++ over RE2) is compiled on its own, with the same sanitizer, and reached
# through a module map of its header, as SwiftPM reaches it.
mkdir -p "$out/cregex"
cat > "$out/cregex/module.modulemap" <<MAP
module CRegex {
    header "$root/Sources/CRegex/include/CRegex.h"
    export *
}
MAP
if [ ! -x "$out/netlayer-fuzz" ] || [ -n "$(find "$root/Sources" "$here" -newer "$out/netlayer-fuzz" \( -name '*.swift' -o -name '*.cpp' -o -name '*.h' \) | head -1)" ]; then
    echo "== building the fuzz target"
    clang=$(dirname "$(command -v swiftc)")/clang++
    [ -x "$clang" ] || clang=clang++
    "$clang" -c -fsanitize=fuzzer-no-link,address -O1 -g -std=c++17 -I "$root/Sources/CRegex/include" \
        "$root/Sources/CRegex/CRegex.cpp" -o "$out/cregex/CRegex.o"
    swiftc -j"$(nproc)" -sanitize=fuzzer,address -parse-as-library -Onone -g -module-name NetlayerFuzz -package-name Netlayer \
        -I "$root/Sources/CCurl" -Xcc -fmodule-map-file="$root/Sources/CCurl/module.modulemap" \
        -I "$root/Sources/CYAML" -Xcc -fmodule-map-file="$root/Sources/CYAML/module.modulemap" \
        -I "$root/Sources/CWslay" -Xcc -fmodule-map-file="$root/Sources/CWslay/module.modulemap" \
        -Xcc -fmodule-map-file="$out/cregex/module.modulemap" \
        "$out/src/"*.swift "$out/cregex/CRegex.o" -lcurl -lyaml -lre2 -lwslay -lcrypto -lz -lstdc++ -o "$out/netlayer-fuzz" 2>&1 \
        | grep -v "warning:" | grep -E "error|rror:" || true
    [ -x "$out/netlayer-fuzz" ] || { echo "fuzz build failed" >&2; exit 1; }
fi
[ "$build_only" -eq 0 ] || exit 0
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
