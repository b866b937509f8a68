#!/usr/bin/env bash
# Soak: N (default 1,000,000) mixed requests on one Netlayer client against nginx.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lib_dir=${NETLAYER_LIB_DIR:-$here/../build/lib}
work=$(mktemp -d)
trap '"$here/nginx.sh" stop "$work/nginx" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
cc -O2 -I"$here/../include" -o "$work/soak" "$here/soak.c" -L"$lib_dir" -lnetlayer -Wl,-rpath,"$lib_dir" -lpthread
url=$("$here/nginx.sh" start "$work/nginx")
time "$work/soak" "$url" "${N:-1000000}"
