#!/usr/bin/env bash
# Python HTTP client benchmark: netlayer vs requests, httpx, urllib3, pycurl, aiohttp,
# repeated and distinct documents (a new query per request) in the same rounds.
#
#   bindings/python/benchmarks/run_bench.sh [bench_http.py options, e.g. --rounds 3]
#
# Environment: NETLAYER_LIB_DIR (default build/lib), RESULTS_DIR (default
# benchmarks/results), TARGETS_OUT (a file the target lines are appended to),
# PACKAGE_DIR (the Python package installed and measured; default bindings/python).
#
# Needs the CMake build (build/lib/libnetlayer.so.1) and nginx (/usr/sbin/nginx);
# installs libcurl's and OpenSSL's headers (apt-get) when missing, since pycurl is
# built from source against the system's libcurl. Creates its own virtualenv,
# build/venv-bench (not the project's dependencies), installs the peers and this
# package there, builds benchmarks/seq_raw.c (the sequential reference), starts a
# private nginx (benchmarks/nginx.sh; on CPU 0, the sequential clients on CPU 1) and
# writes benchmarks/results/python.md and its chart python.svg (benchmarks/plot.py). About 2-4 minutes with the default 7 rounds.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"

lib_dir="${NETLAYER_LIB_DIR:-$root/build/lib}"
results_dir="${RESULTS_DIR:-$root/benchmarks/results}"
if [ ! -e "$lib_dir/libnetlayer.so.1" ]; then
    echo "error: $lib_dir/libnetlayer.so.1 not found; build the library first:" \
         "cmake -S . -B build -G Ninja && cmake --build build" >&2
    exit 1
fi
lib_dir="$(cd "$lib_dir" && pwd)"
mkdir -p "$results_dir"
results_dir="$(cd "$results_dir" && pwd)"

# pycurl is built from source against the system's libcurl (the one libnetlayer.so
# links), not taken from the wheel that bundles its own libcurl.
if ! command -v curl-config >/dev/null || [ ! -e /usr/include/openssl/ssl.h ]; then
    echo "installing libcurl's and OpenSSL's headers for pycurl (apt-get)" >&2
    apt-get install -y -q libcurl4-openssl-dev libssl-dev >/dev/null
fi
system_curl="libcurl/$(curl-config --version | awk '{print $2}')"

venv="$root/build/venv-bench"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c "import requests, httpx, urllib3, aiohttp, orjson" 2>/dev/null; then
    "$venv/bin/python" -m pip install -q requests httpx urllib3 aiohttp orjson
fi
if ! "$venv/bin/python" -c "import pycurl, sys; sys.exit('$system_curl ' not in pycurl.version + ' ')" 2>/dev/null; then
    PYCURL_SSL_LIBRARY=openssl "$venv/bin/python" -m pip install -q --force-reinstall --no-cache-dir \
        --no-binary pycurl pycurl
fi
"$venv/bin/python" -c "import pycurl; print('pycurl:', pycurl.version)"
package_dir="${PACKAGE_DIR:-$root/bindings/python}"
rm -rf "$package_dir/build"  # setuptools' staging dir: no stale files
NETLAYER_BUILD_LIB="$lib_dir" "$venv/bin/python" -m pip install -q --no-deps --force-reinstall "$package_dir"

dir="$(mktemp -d)"
cleanup() { "$root/benchmarks/nginx.sh" stop "$dir" || true; rm -rf "$dir"; }
trap cleanup EXIT
# With two CPUs or more, nginx keeps CPU 0 and the sequential clients run on CPU 1:
# always across cores (see benchmarks/nginx.sh, NGINX_CPU).
pin=()
if [ "$(nproc)" -ge 2 ]; then
    export NGINX_CPU=0
    pin=(--client-cpu 1)
fi
url="$("$root/benchmarks/nginx.sh" start "$dir")"
echo "nginx: $url"

# The sequential reference: libcurl from C (benchmarks/seq_raw.c), built against the
# same system libcurl.
cc -O2 -Wall -I"$root/include" -o "$dir/seq_raw" "$root/benchmarks/seq_raw.c" -lcurl

targets=()
if [ -n "${TARGETS_OUT:-}" ]; then
    touch "$TARGETS_OUT"
    targets=(--targets-out "$(cd "$(dirname "$TARGETS_OUT")" && pwd)/$(basename "$TARGETS_OUT")")
fi
cd "$root/build"  # import the installed netlayer, not the sources
unset NETLAYER_LIBRARY NETLAYER_NO_BUNDLED
rc=0
"$venv/bin/python" "$here/bench_http.py" "$url" --raw-c "$dir/seq_raw" "${pin[@]}" \
    --out "$results_dir/python.md" "${targets[@]}" "$@" || rc=$?
# The chart of throughput and CPU per client, next to the table (also when a run failed).
if [ -f "$results_dir/python.md" ]; then
    python3 "$root/benchmarks/plot.py" "$results_dir/python.md" "$results_dir/python.svg" \
        || echo "run_bench: no chart drawn" >&2
fi
exit "$rc"
