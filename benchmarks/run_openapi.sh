#!/usr/bin/env bash
# run_openapi.sh — load time and per-call cost of OpenAPI documents (openapi_bench.c):
# the Swagger Petstore (YAML, 19 operations) and OpenAI's description (JSON, 3.4 MB,
# 288 operations). Writes results/openapi.md. Needs no server: the clients answer
# from a stub transport, so only Netlayer's own work is timed.
#
# Environment: NETLAYER_LIB_DIR (default ../build/lib), ROUNDS (7), CALLS (20000),
# RESULTS_DIR (results/ next to this script).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
lib_dir=$(cd "${NETLAYER_LIB_DIR:-$root/build/lib}" && pwd)
rounds=${ROUNDS:-7}
calls=${CALLS:-20000}
results=${RESULTS_DIR:-$here/results}
work=$(mktemp -d "${TMPDIR:-/tmp}/netlayer-openapi.XXXXXX")
trap 'rm -rf "$work"' EXIT

cc -O2 -std=c99 -I"$root/include" "$here/openapi_bench.c" -L"$lib_dir" -Wl,-rpath,"$lib_dir" -lnetlayer \
    -o "$work/openapi_bench"
gzip -dc "$root/Tests/openapi/openai-openapi.json.gz" > "$work/openai-openapi.json"

rows=$(
    NETLAYER_SPEC_FILE="$root/Tests/openapi/petstore-openapi.yaml" "$work/openapi_bench" petstore getPetById "$rounds" "$calls"
    NETLAYER_SPEC_FILE="$root/Tests/openapi/petstore-openapi.yaml" "$work/openapi_bench" petstore findPetsByStatus "$rounds" "$calls"
    NETLAYER_SPEC_FILE="$work/openai-openapi.json" "$work/openapi_bench" openai createChatCompletion "$rounds" "$calls"
)
mkdir -p "$results"
{
    echo "# OpenAPI: load time and per-call cost"
    echo
    echo "One run of \`benchmarks/run_openapi.sh\` ($rounds rounds, $calls calls per measure and round;"
    echo "source \`$(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)\`, $(date -u '+%Y-%m-%d %H:%M UTC'))."
    echo "Medians over the rounds. Load: \`nl_client_new\` + \`nl_client_free\` of a config with the"
    echo "document, beside the same config without it. Per call: microseconds per \`nl_call_borrowed\`"
    echo "of the operation, and per \`nl_request_borrowed\` of the same request written as an endpoint"
    echo "document, both answered by a stub transport (no network), with the same arguments every"
    echo "call (repeated) and with a new value in each call (distinct)."
    echo
    echo "| document | operation | load (ms) | config without it (ms) | call, repeated (µs) | request, repeated (µs) | overhead, repeated (µs) | call, distinct (µs) | request, distinct (µs) | overhead, distinct (µs) |"
    echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    echo "$rows"
} > "$results/openapi.md"
cat "$results/openapi.md"
