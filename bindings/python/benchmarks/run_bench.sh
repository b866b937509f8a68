#!/usr/bin/env bash
# Python HTTP client benchmark: netlayer vs requests, httpx, urllib3, pycurl, aiohttp.
#
#   bindings/python/benchmarks/run_bench.sh [bench_http.py options, e.g. --rounds 3]
#
# Needs the CMake build (build/lib/libnetlayer.so.0.1.0), nginx (/usr/sbin/nginx) and,
# for pycurl, libcurl's and OpenSSL's headers (apt-get install libcurl4-openssl-dev
# libssl-dev). Creates its own virtualenv, build/venv-bench (not the project's
# dependencies), installs the peers and this package there, starts a private nginx
# (benchmarks/nginx.sh) and writes benchmarks/results/python.md. About 3 minutes.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"

if [ ! -e "$root/build/lib/libnetlayer.so.0.1.0" ]; then
    echo "error: build the library first: cmake -S . -B build -G Ninja && cmake --build build" >&2
    exit 1
fi

venv="$root/build/venv-bench"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c "import requests, httpx, urllib3, pycurl, aiohttp, orjson" 2>/dev/null; then
    if ! command -v curl-config >/dev/null; then
        echo "error: pycurl builds against libcurl: apt-get install -y libcurl4-openssl-dev libssl-dev" >&2
        exit 1
    fi
    "$venv/bin/python" -m pip install -q requests httpx urllib3 pycurl aiohttp orjson
fi
rm -rf "$root/bindings/python/build"  # setuptools' staging dir: no stale files
NETLAYER_BUILD_LIB="$root/build/lib" "$venv/bin/python" -m pip install -q --no-deps --force-reinstall \
    "$root/bindings/python"

dir="$(mktemp -d)"
cleanup() { "$root/benchmarks/nginx.sh" stop "$dir" || true; rm -rf "$dir"; }
trap cleanup EXIT
url="$("$root/benchmarks/nginx.sh" start "$dir")"
echo "nginx: $url"

mkdir -p "$root/benchmarks/results"
cd "$root/build"  # import the installed netlayer, not the sources
unset NETLAYER_LIBRARY NETLAYER_NO_BUNDLED
"$venv/bin/python" "$here/bench_http.py" "$url" --out "$root/benchmarks/results/python.md" "$@"
