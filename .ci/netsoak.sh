#!/usr/bin/env bash
# The network soak (Soak/Sources/netsoak) on one engine: nginx and httpbin in a network namespace
# of their own behind a veth pair, a mixed workload across it, link faults (down, blackhole, tbf),
# fault proxies and nginx reloads/restarts. Needs root and iproute2; installs nginx, iproute2 and
# nftables (apt), and httpbin with gunicorn (PyPI, in a virtual environment).
#
#   bash .ci/netsoak.sh ENGINE [netsoak flags...]     ENGINE: urlSession or libcurl
#
# Without root or without `ip` it prints "skipped: <why>" and exits 0, except with CI=true, where
# that is a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
engine="${1:?usage: .ci/netsoak.sh urlSession|libcurl [flags]}"
shift

skip() {
  echo "netsoak ($engine): skipped: $1"
  if [ "${CI:-}" = "true" ]; then exit 1; fi
  exit 0
}

[ "$(id -u)" -eq 0 ] || skip "not running as root (network namespaces need it)"

missing=()
command -v ip >/dev/null || missing+=(iproute2)
command -v nginx >/dev/null || missing+=(nginx-light)
command -v nft >/dev/null || command -v iptables >/dev/null || missing+=(nftables)
if [ "${#missing[@]}" -gt 0 ]; then
  if command -v apt-get >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
      echo "netsoak: apt-get could not install ${missing[*]}" >&2
  fi
fi
command -v ip >/dev/null || skip "\`ip\` (iproute2) is not installed"
command -v nginx >/dev/null || skip "nginx is not installed"

# httpbin (PyPI) under gunicorn, in a virtual environment kept between runs; versions measured to
# work together on Python 3.11.
venv="${NETSOAK_VENV:-${TMPDIR:-/tmp}/sessionfetcher-netsoak-venv}"
if [ ! -x "$venv/bin/gunicorn" ] || ! "$venv/bin/python" -c 'import httpbin' 2>/dev/null; then
  rm -rf "$venv"
  python3 -m venv "$venv" || skip "python3 cannot make a virtual environment (python3-venv)"
  "$venv/bin/pip" install -q --disable-pip-version-check \
    'httpbin==0.10.4' 'gunicorn==27.0.1' 'flask==3.1.3' 'werkzeug==3.1.9' ||
    skip "pip could not install httpbin and gunicorn"
fi

swift build -c release --package-path Soak --product netsoak -Xswiftc -warnings-as-errors
bin="$(swift build -c release --package-path Soak --show-bin-path)/netsoak"
# The soak reaches only loopback and its own namespace; no proxy may route that traffic elsewhere.
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
SESSIONFETCHER_ENGINE="$engine" "$bin" --httpbin "$venv/bin/gunicorn" "$@"
