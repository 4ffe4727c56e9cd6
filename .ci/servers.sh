#!/usr/bin/env bash
# Real third-party servers for the interop suite, on loopback only (see shared reference servers.md):
#   httpbin under gunicorn (gthread) on 127.0.0.1 and 127.0.0.2, nginx (static files with ETags,
#   a 1 GiB file, PUT uploads to disk through dav; also on a Unix socket), squid (forward proxy with Basic proxy auth),
#   microsocks (SOCKS5 with username/password).
#
#   source .ci/servers.sh
#   interop_install            # apt + pip (needs root and the package archives)
#   interop_start DIR          # writes configs and files under DIR, starts, waits, exports SESSIONFETCHER_*
#   interop_stop               # stops what interop_start started (also safe when nothing runs)
#
# Ports are fixed and uncommon; a port already in use is an error (gunicorn would keep retrying).

INTEROP_HTTPBIN_PORT="${INTEROP_HTTPBIN_PORT:-27583}"
INTEROP_NGINX_PORT="${INTEROP_NGINX_PORT:-27581}"
INTEROP_NGINX_TLS_PORT="${INTEROP_NGINX_TLS_PORT:-27582}"
INTEROP_SQUID_PORT="${INTEROP_SQUID_PORT:-27528}"
INTEROP_SOCKS_PORT="${INTEROP_SOCKS_PORT:-27529}"
INTEROP_PROXY_USER=fetcher
INTEROP_PROXY_PASSWORD=s3cret
interop_pids=()
interop_dir=""

interop_install() {
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends nginx-light squid apache2-utils microsocks >/dev/null
  # Brotli for nginx, where Debian has it for this nginx (the br test is skipped without it).
  apt-get install -y -qq --no-install-recommends libnginx-mod-http-brotli-filter >/dev/null 2>&1 || true
  python3 -m venv "$1/venv-httpbin"
  # Versions measured to work together on Python 3.11.
  "$1/venv-httpbin/bin/pip" install -q --disable-pip-version-check \
    'httpbin==0.10.4' 'gunicorn==27.0.1' 'flask==3.1.3' 'werkzeug==3.1.9'
}

interop_port_free() {
  ! (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null
}

interop_wait() { # host port name
  local i
  for i in $(seq 1 100); do
    if (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "interop: $3 did not start on $1:$2" >&2
  return 1
}

interop_start() {
  interop_dir="$1"
  local d="$interop_dir"
  for port in "$INTEROP_HTTPBIN_PORT" "$INTEROP_NGINX_PORT" "$INTEROP_NGINX_TLS_PORT" "$INTEROP_SQUID_PORT" \
    "$INTEROP_SOCKS_PORT"; do
    if ! interop_port_free 127.0.0.1 "$port"; then
      echo "interop: port $port on 127.0.0.1 is already in use" >&2
      return 1
    fi
  done

  # httpbin: two hosts (127.0.0.1 and 127.0.0.2), one process.
  "$d/venv-httpbin/bin/gunicorn" -k gthread --threads 16 -w 1 --no-control-socket \
    -b "127.0.0.1:$INTEROP_HTTPBIN_PORT" -b "127.0.0.2:$INTEROP_HTTPBIN_PORT" \
    --log-level warning httpbin:app >"$d/httpbin.log" 2>&1 &
  interop_pids+=($!)

  # nginx: static files (ETag), 1 GiB and 256 MiB random files, PUT uploads to disk.
  mkdir -p "$d/nginx/www/upload" "$d/nginx/logs" "$d/nginx/tmp"
  head -c 1024 /dev/urandom >"$d/nginx/www/1k.bin"
  head -c 1073741824 /dev/urandom >"$d/nginx/www/1g.bin"
  head -c 268435456 "$d/nginx/www/1g.bin" >"$d/nginx/www/256m.bin"
  # Compressible text (gzip and br on the fly), and a gzip bomb served as it is with
  # Content-Encoding: gzip (1 GiB of zeros in about 1 MiB).
  mkdir -p "$d/nginx/www/text" "$d/nginx/www/bomb"
  for i in $(seq 1 20000); do echo "line $i: the quick brown fox jumps over the lazy dog"; done \
    >"$d/nginx/www/text/lines.txt"
  head -c 1073741824 /dev/zero | gzip -9 >"$d/nginx/www/bomb/zeros.gz"
  # The suite's bomb: FoundationNetworking inflates on the work queue every URLSession of the test
  # process shares, and 1 GiB held it (and every other test's URLSession fetch) for seconds.
  head -c 67108864 /dev/zero | gzip -9 >"$d/nginx/www/bomb/zeros-64m.gz"
  local brotli_module=/usr/lib/nginx/modules/ngx_http_brotli_filter_module.so brotli_load="" brotli_on=""
  if [ -f "$brotli_module" ]; then
    brotli_load="load_module $brotli_module;"
    brotli_on="brotli on; brotli_types text/plain; brotli_min_length 0;"
  fi
  # The ETag cache's RFC 9111 rules against a real server: one file per Cache-Control or Vary answer.
  for kind in plain private public no-store vary vary-star; do
    mkdir -p "$d/nginx/www/cache/$kind"
    head -c 2048 /dev/urandom >"$d/nginx/www/cache/$kind/file.bin"
  done
  chown -R www-data: "$d/nginx/www/upload" "$d/nginx/tmp" "$d/nginx/logs" 2>/dev/null || true
  chmod 755 "$d"  # workers run as www-data and must reach www/ (mktemp -d makes 0700 folders)
  # TLS: certificates from a private CA, made now (scripts/make-test-certs.sh).
  mkdir -p "$d/tls"
  "$(dirname "${BASH_SOURCE[0]}")/../scripts/make-test-certs.sh" "$d/tls" >/dev/null 2>&1
  cat >"$d/nginx/nginx.conf" <<EOF
$brotli_load
user www-data;
worker_processes 1;
pid nginx.pid;
error_log logs/error.log warn;
events { worker_connections 256; }
http {
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    log_format interop '\$request_method \$uri \$status \$body_bytes_sent "\$http_if_none_match"';
    access_log logs/access.log interop;
    client_body_temp_path tmp/client_body;
    proxy_temp_path tmp/proxy;
    fastcgi_temp_path tmp/fastcgi;
    uwsgi_temp_path tmp/uwsgi;
    scgi_temp_path tmp/scgi;
    sendfile on;
    keepalive_timeout 65;
    etag on;
    log_format interop_cache '\$request_method \$uri?\$args \$status "\$http_if_none_match"';
    log_format interop_tls '\$request_method \$uri \$status \$server_protocol \$connection \$connection_requests';
    server {
        listen 127.0.0.1:$INTEROP_NGINX_TLS_PORT ssl http2;
        server_name localhost;
        ssl_certificate $d/tls/server.pem;
        ssl_certificate_key $d/tls/server.key;
        access_log logs/access-tls.log interop_tls;
        http2_max_concurrent_streams 128;
        root www;
        location / { }
        location /upload/ {
            client_max_body_size 0;
            client_body_buffer_size 1m;
            dav_methods PUT DELETE;
            create_full_put_path on;
            dav_access user:rw group:r all:r;
        }
    }
    server {
        listen 127.0.0.1:$INTEROP_NGINX_PORT;
        listen unix:$d/nginx/nginx.sock;
        server_name localhost;
        root www;
        location / { }
        location /text/ {
            gzip on; gzip_types text/plain; gzip_min_length 0; gzip_comp_level 6;
            $brotli_on
        }
        location /bomb/ {
            types { }
            default_type application/octet-stream;
            add_header Content-Encoding gzip;
        }
        location /upload/ {
            client_max_body_size 0;
            client_body_buffer_size 1m;
            dav_methods PUT DELETE;
            create_full_put_path on;
            dav_access user:rw group:r all:r;
        }
        # The ETag cache's interop rows: each request logged with its query (a probe per test)
        # and the If-None-Match it carried.
        location /cache/ { access_log logs/access-cache.log interop_cache; }
        location /cache/private/ { access_log logs/access-cache.log interop_cache; add_header Cache-Control private; }
        location /cache/public/ { access_log logs/access-cache.log interop_cache; add_header Cache-Control public; }
        location /cache/no-store/ { access_log logs/access-cache.log interop_cache; add_header Cache-Control no-store; }
        location /cache/vary/ { access_log logs/access-cache.log interop_cache; add_header Vary Accept-Language; }
        location /cache/vary-star/ { access_log logs/access-cache.log interop_cache; add_header Vary *; }
    }
}
EOF
  nginx -p "$d/nginx/" -c nginx.conf -e logs/error.log
  interop_wait 127.0.0.1 "$INTEROP_NGINX_PORT" nginx
  interop_wait 127.0.0.1 "$INTEROP_NGINX_TLS_PORT" "nginx (TLS)"

  # squid: forward proxy with Basic proxy auth, loopback only, no cache, no traffic off the machine.
  mkdir -p "$d/squid"
  htpasswd -bc "$d/squid/passwd" "$INTEROP_PROXY_USER" "$INTEROP_PROXY_PASSWORD" 2>/dev/null
  cat >"$d/squid/squid.conf" <<EOF
http_port 127.0.0.1:$INTEROP_SQUID_PORT
pid_filename $d/squid/squid.pid
cache_log $d/squid/cache.log
access_log stdio:$d/squid/access.log
cache_store_log none
cache deny all
cache_mem 8 MB
coredump_dir $d/squid
pinger_enable off
dns_nameservers 127.0.0.1
visible_hostname localhost
shutdown_lifetime 1 seconds
auth_param basic program /usr/lib/squid/basic_ncsa_auth $d/squid/passwd
auth_param basic realm fetcher-test
auth_param basic children 2
acl localnet_lo src 127.0.0.1/32 ::1
acl authed proxy_auth REQUIRED
http_access deny !localnet_lo
http_access allow authed
http_access deny all
EOF
  chown -R proxy:proxy "$d/squid" 2>/dev/null || true
  squid -N -f "$d/squid/squid.conf" >"$d/squid/stdout.log" 2>&1 &
  interop_pids+=($!)

  interop_wait 127.0.0.1 "$INTEROP_HTTPBIN_PORT" "httpbin (127.0.0.1)"
  interop_wait 127.0.0.2 "$INTEROP_HTTPBIN_PORT" "httpbin (127.0.0.2)"
  interop_wait 127.0.0.1 "$INTEROP_SQUID_PORT" squid

  # microsocks: SOCKS5 with username/password, loopback only.
  microsocks -i 127.0.0.1 -p "$INTEROP_SOCKS_PORT" -u "$INTEROP_PROXY_USER" -P "$INTEROP_PROXY_PASSWORD" \
    >"$d/microsocks.log" 2>&1 &
  interop_pids+=($!)
  interop_wait 127.0.0.1 "$INTEROP_SOCKS_PORT" microsocks

  export SESSIONFETCHER_INTEROP=1
  export SESSIONFETCHER_HTTPBIN_URL="http://127.0.0.1:$INTEROP_HTTPBIN_PORT"
  export SESSIONFETCHER_HTTPBIN2_URL="http://127.0.0.2:$INTEROP_HTTPBIN_PORT"
  export SESSIONFETCHER_NGINX_URL="http://127.0.0.1:$INTEROP_NGINX_PORT"
  export SESSIONFETCHER_NGINX_ROOT="$d/nginx/www"
  export SESSIONFETCHER_NGINX_SOCKET="$d/nginx/nginx.sock"
  if [ -f /usr/lib/nginx/modules/ngx_http_brotli_filter_module.so ]; then
    export SESSIONFETCHER_NGINX_BROTLI=1
  fi
  export SESSIONFETCHER_NGINX_ACCESS_LOG="$d/nginx/logs/access.log"
  export SESSIONFETCHER_NGINX_CACHE_LOG="$d/nginx/logs/access-cache.log"
  export SESSIONFETCHER_NGINX_TLS_URL="https://127.0.0.1:$INTEROP_NGINX_TLS_PORT"
  export SESSIONFETCHER_NGINX_TLS_ACCESS_LOG="$d/nginx/logs/access-tls.log"
  export SESSIONFETCHER_TLS_CA="$d/tls/ca.pem"
  export SESSIONFETCHER_PROXY_URL="http://127.0.0.1:$INTEROP_SQUID_PORT"
  export SESSIONFETCHER_PROXY_USER="$INTEROP_PROXY_USER"
  export SESSIONFETCHER_PROXY_PASSWORD="$INTEROP_PROXY_PASSWORD"
  export SESSIONFETCHER_SOCKS_URL="socks5h://127.0.0.1:$INTEROP_SOCKS_PORT"
  echo "interop: httpbin $SESSIONFETCHER_HTTPBIN_URL and $SESSIONFETCHER_HTTPBIN2_URL," \
    "nginx $SESSIONFETCHER_NGINX_URL, squid $SESSIONFETCHER_PROXY_URL, microsocks $SESSIONFETCHER_SOCKS_URL"
}

interop_stop() {
  if [ -n "$interop_dir" ] && [ -f "$interop_dir/nginx/nginx.pid" ]; then
    nginx -p "$interop_dir/nginx/" -c nginx.conf -e logs/error.log -s quit 2>/dev/null || true
  fi
  local pid
  for pid in "${interop_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${interop_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  interop_pids=()
}
