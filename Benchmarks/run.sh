#!/usr/bin/env bash
# Benchmarks SessionFetcher against raw URLSession, AsyncHTTPClient and curl on a loopback nginx with
# one worker, and prints one Markdown table (also saved to Benchmarks/results/latest.md).
#
#   bash Benchmarks/run.sh            # 3 rounds, 2,000 small GETs per run: about 5-9 minutes
#   bash Benchmarks/run.sh --quick    # 2 rounds, 1,000 small GETs per run
#   bash Benchmarks/run.sh --only small,mime --rounds 5     # any fetcher-bench option (README.md)
#
# Environment: BENCH_PORT (default 18931, the next free port is taken when busy), BENCH_WORK (work
# directory, default $TMPDIR/sessionfetcher-bench), BENCH_BIG_SIZE (bytes of the big file, default
# 1 GiB), BENCH_KEEP_FILES=1 keeps the generated 1 GiB file for the next run.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
port="${BENCH_PORT:-18931}"
work="${BENCH_WORK:-${TMPDIR:-/tmp}/sessionfetcher-bench}"
big_size="${BENCH_BIG_SIZE:-1073741824}"
log() { echo "run.sh: $*" >&2; }

# --- Tools: nginx, curl, GNU time (peak RSS and context switches of every run) ---
as_root=()
if [ "$(id -u)" -ne 0 ]; then as_root=(sudo); fi
nginx_bin="$(command -v nginx || true)"
[ -n "$nginx_bin" ] || { [ -x /usr/sbin/nginx ] && nginx_bin=/usr/sbin/nginx; } || true
missing=()
[ -n "$nginx_bin" ] || missing+=(nginx)
command -v curl >/dev/null || missing+=(curl)
[ -x /usr/bin/time ] || missing+=(time)
if [ "${#missing[@]}" -gt 0 ]; then
  log "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${as_root[@]}" apt-get update -qq
  packages=("${missing[@]/#nginx/nginx-light}")
  if ! "${as_root[@]}" apt-get install -y -qq "${packages[@]}" >&2; then
    packages=("${missing[@]}")
    "${as_root[@]}" apt-get install -y -qq "${packages[@]}" >&2
  fi
  nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"
fi

# --- Files ---
mkdir -p "$work/www/upload" "$work/nginx/logs" "$work/nginx/tmp" "$here/results"
printf hello > "$work/www/small.txt"
if [ "$(stat -c %s "$work/www/big.bin" 2>/dev/null || echo 0)" != "$big_size" ]; then
  log "writing $big_size random bytes to $work/www/big.bin"
  head -c "$big_size" /dev/urandom > "$work/www/big.bin"
fi

# --- TLS: a private CA and a certificate for 127.0.0.1, made now; the URLSession engine's runs
# trust the CA through a bundle bind-mounted in their own mount namespace (Driver.swift) ---
if [ ! -f "$work/tls/server.pem" ]; then
  mkdir -p "$work/tls"
  sh "$here/../scripts/make-test-certs.sh" "$work/tls" >/dev/null 2>&1 || { log "making certificates failed"; exit 1; }
fi
system_bundle=/etc/ssl/certs/ca-certificates.crt
{ cat "$system_bundle" 2>/dev/null || true; cat "$work/tls/ca.pem"; } > "$work/tls/bundle.pem"

# --- nginx: one worker on free loopback ports (plain, TLS with HTTP/1.1, TLS with HTTP/2) ---
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
free_port() { # first free port from $1
  local candidate="$1"
  for _ in $(seq 1 20); do port_busy "$candidate" || break; candidate=$((candidate + 1)); done
  port_busy "$candidate" && { log "no free port found"; exit 1; }
  echo "$candidate"
}
port="$(free_port "$port")"
tls_port="$(free_port $((port + 1)))"
h2_port="$(free_port $((tls_port + 1)))"
user_line=""
# The scaling rows' 16 hosts are 127.0.0.1 to 127.0.0.16 (all loopback on Linux), one server.
extra_listens=""
for host in $(seq 2 16); do extra_listens+="        listen 127.0.0.$host:$port;"$'\n'; done
if [ "$(id -u)" -eq 0 ]; then user_line="user root root;"; fi
cat > "$work/nginx/nginx.conf" <<CONF
$user_line
worker_processes 1;
pid logs/nginx.pid;
error_log logs/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_requests 10000000;
    keepalive_timeout 75s;
    default_type application/octet-stream;
    client_body_temp_path $work/nginx/tmp/client_body;
    proxy_temp_path $work/nginx/tmp/proxy;
    fastcgi_temp_path $work/nginx/tmp/fastcgi;
    uwsgi_temp_path $work/nginx/tmp/uwsgi;
    scgi_temp_path $work/nginx/tmp/scgi;
    server {
        listen 127.0.0.1:$port;
$extra_listens
        server_name localhost;
        root $work/www;
        location / { }
        location /upload/ {
            client_max_body_size 0;
            dav_methods PUT;
            create_full_put_path on;
        }
        location = /nginx_status { stub_status; }
    }
    server {
        listen 127.0.0.1:$tls_port ssl;
        listen 127.0.0.1:$h2_port ssl http2;
        server_name localhost;
        ssl_certificate $work/tls/server.pem;
        ssl_certificate_key $work/tls/server.key;
        ssl_session_cache shared:TLS:10m;
        root $work/www;
        location / { }
        location /upload/ {
            client_max_body_size 0;
            dav_methods PUT;
            create_full_put_path on;
        }
    }
}
CONF

stop_nginx() {
  if [ -f "$work/nginx/logs/nginx.pid" ]; then
    kill -QUIT "$(cat "$work/nginx/logs/nginx.pid")" 2>/dev/null || true
  fi
  rm -rf "$work/out.bin" "$work/www/upload" "$work/logs" "$work/runs" "$work/viewer"
  if [ "${BENCH_KEEP_FILES:-0}" != 1 ]; then rm -rf "$work"; fi
}
trap stop_nginx EXIT
"$nginx_bin" -p "$work/nginx/" -c nginx.conf -e logs/error.log
for _ in $(seq 1 50); do port_busy "$port" && break; sleep 0.1; done
curl -sf "http://127.0.0.1:$port/small.txt" >/dev/null || { log "nginx did not answer on $port"; exit 1; }

# --- Build (release) and run ---
log "building in release (a first build with AsyncHTTPClient takes several minutes)"
swift build -c release --package-path "$here" --product fetcher-bench >&2
bin="$(swift build -c release --package-path "$here" --show-bin-path)/fetcher-bench"

nginx_version="$("$nginx_bin" -v 2>&1 | sed 's/.*nginx\///')"
swift_version="$(swift --version 2>/dev/null | sed -n 's/.*Swift version \([^ ]*\).*/\1/p' | head -n 1)"
curl_version="$(curl --version | sed -n '1s/^curl \([^ ]*\).*/\1/p')"
revision="$(git -C "$here/.." rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [ -n "$(git -C "$here/.." status --porcelain -- Sources 2>/dev/null)" ]; then
  revision="$revision with uncommitted changes in Sources/"
fi
{
  echo "Machine: $(nproc) cores, $(uname -sr), Swift $swift_version, nginx $nginx_version (1 worker)," \
    "curl $curl_version; library at $revision; $(date -u '+%Y-%m-%d %H:%M UTC'). Command: bash Benchmarks/run.sh $*"
  echo
  "$bin" all --base "http://127.0.0.1:$port/" --tls-base "https://127.0.0.1:$tls_port/" \
    --h2-base "https://127.0.0.1:$h2_port/" --ca "$work/tls/ca.pem" --ca-bundle "$work/tls/bundle.pem" \
    --work "$work" --big-size "$big_size" "$@"
} | tee "$here/results/latest.md"

# --- The log viewer: how long a 10,000-fetch run's index.html takes to open in headless Chromium ---
# (BENCH_VIEWER=0 skips it; skipped with a note when Chromium is missing.)
chromium_bin="$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)"
if [ "${BENCH_VIEWER:-1}" != 1 ]; then
  :
elif [ -z "$chromium_bin" ]; then
  echo "Log viewer: not measured (no Chromium; apt-get install chromium)" | tee -a "$here/results/latest.md"
else
  log "logging 10,000 fetches for the log viewer"
  "$bin" child small fetcher --inflight 16 --count 10000 --logging files \
    --base "http://127.0.0.1:$port/" --work "$work/viewer" >/dev/null
  page="$(ls -d "$work"/viewer/logs/*_log_2*/ | tail -n 1)index.html"
  {
    echo
    echo "Log viewer: index.html of 10,016 logged fetches ($(du -h "$page" | cut -f1)), opened in headless" \
      "$("$chromium_bin" --version 2>/dev/null | head -n 1) until drawn, 3 times:"
    for _ in 1 2 3; do python3 "$here/../.ci/viewer_check.py" --chromium "$chromium_bin" --measure "$page"; done
  } | tee -a "$here/results/latest.md"
fi
