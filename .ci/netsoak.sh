#!/usr/bin/env bash
# The network soak (Soak/Sources/netsoak) on one engine: nginx in a network namespace of its own
# behind a veth pair, a mixed workload across it, link faults (down, blackhole, tbf), a fault proxy
# and nginx reloads/restarts. Needs root and iproute2; installs nginx, iproute2 and nftables.
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

swift build -c release --package-path Soak --product netsoak -Xswiftc -warnings-as-errors
bin="$(swift build -c release --package-path Soak --show-bin-path)/netsoak"
# The soak reaches only loopback and its own namespace; no proxy may route that traffic elsewhere.
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
SESSIONFETCHER_ENGINE="$engine" "$bin" "$@"
