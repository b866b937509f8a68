#!/usr/bin/env bash
# nginx.sh start|stop DIR — a private nginx-light for the benchmarks.
#
#   start DIR  writes DIR/nginx.conf (prefix, pid, logs and temp paths all in DIR),
#              starts /usr/sbin/nginx on 127.0.0.1 on a free port, and prints
#              http://127.0.0.1:PORT/small.json  (the port is also kept in DIR/port;
#              http://127.0.0.1:PORT/nginx_status gives nginx's connection counters)
#   stop DIR   stops that nginx (pid from DIR/nginx.pid) and waits for it to exit.
#
# NGINX_CPU=N (optional) keeps the worker on CPU N (worker_cpu_affinity), so a client
# pinned to another CPU always meets the server across cores: unpinned, the scheduler
# sometimes puts both on one CPU, where a cheap client's sequential request costs a
# third to a half of a cross-core one (no wake-up IPI), and req/s measures placement.
set -euo pipefail

NGINX=${NGINX:-/usr/sbin/nginx}
cmd=${1:-}
dir=${2:-}
if [[ -z "$cmd" || -z "$dir" ]]; then
    echo "usage: $0 start|stop DIR" >&2
    exit 2
fi

case "$cmd" in
start)
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    if [[ -f "$dir/nginx.pid" ]] && kill -0 "$(cat "$dir/nginx.pid")" 2>/dev/null; then
        echo "nginx already running from $dir (pid $(cat "$dir/nginx.pid"))" >&2
        exit 1
    fi
    mkdir -p "$dir/logs" "$dir/tmp/client_body" "$dir/tmp/proxy" "$dir/tmp/fastcgi" \
             "$dir/tmp/uwsgi" "$dir/tmp/scgi"
    # Pick a free port: bind port 0 on loopback and let the kernel choose.
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
    # Run the worker as the current user (as root, nginx would otherwise drop to nobody).
    user_line=""
    if [[ $(id -u) -eq 0 ]]; then
        user_line="user root $(id -gn);"
    fi
    affinity_line=""
    if [[ -n "${NGINX_CPU:-}" ]]; then
        # worker_cpu_affinity takes a bit mask, CPU 0 rightmost: CPU 2 is 100.
        affinity_line="worker_cpu_affinity 1$(printf '%*s' "$NGINX_CPU" '' | tr ' ' 0);"
    fi
    cat > "$dir/nginx.conf" <<CONF
$user_line
daemon on;
worker_processes 1;
$affinity_line
pid $dir/nginx.pid;
error_log $dir/logs/error.log warn;

events {
    worker_connections 1024;
}

http {
    access_log off;
    keepalive_requests 10000000;
    keepalive_timeout 300s;
    client_body_temp_path $dir/tmp/client_body;
    proxy_temp_path $dir/tmp/proxy;
    fastcgi_temp_path $dir/tmp/fastcgi;
    uwsgi_temp_path $dir/tmp/uwsgi;
    scgi_temp_path $dir/tmp/scgi;

    server {
        listen 127.0.0.1:$port;
        server_name localhost;

        location = /small.json {
            default_type application/json;
            return 200 '{"id":1,"title":"Dune","year":2021,"tags":["sf","novel"],"rating":8.1}';
        }

        # Connection counters ("accepts"), so run_seq.sh can check that a client
        # really reuses its connection.
        location = /nginx_status {
            stub_status;
        }
    }
}
CONF
    echo "$port" > "$dir/port"
    # -p: prefix, -c: our config, -e: error log used before the config is read.
    "$NGINX" -p "$dir/" -c "$dir/nginx.conf" -e "$dir/logs/error.log"
    # Wait until it answers (up to ~5 s).
    for _ in $(seq 50); do
        if python3 - "$port" <<'PY' 2>/dev/null
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=0.5)
s.close()
PY
        then
            echo "http://127.0.0.1:$port/small.json"
            exit 0
        fi
        sleep 0.1
    done
    echo "nginx did not start; see $dir/logs/error.log" >&2
    exit 1
    ;;
stop)
    pidfile="$dir/nginx.pid"
    if [[ ! -f "$pidfile" ]]; then
        echo "no $pidfile; nothing to stop" >&2
        exit 0
    fi
    pid=$(cat "$pidfile")
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid"   # master: fast shutdown, takes its worker with it
        for _ in $(seq 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        if kill -0 "$pid" 2>/dev/null; then
            kill -KILL "$pid" 2>/dev/null || true
        fi
    fi
    rm -f "$pidfile"
    ;;
*)
    echo "usage: $0 start|stop DIR" >&2
    exit 2
    ;;
esac
