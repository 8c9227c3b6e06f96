#!/usr/bin/env bash
# Install the real peers the tests drive (containerd, runc, CNI plugins, busybox-static for the
# local images, iproute2/iptables for pod networking, skopeo for the registry tests).
# Idempotent: runs `apt-get update` and `apt-get install` only when a package is missing.
# Quiet unless something fails (then apt's output is printed). Needs root (or sudo).
set -euo pipefail

PACKAGES=(containerd runc containernetworking-plugins busybox-static iproute2 iptables skopeo
  docker-registry apache2-utils inotify-tools util-linux)
# openssl: the main port's self-signed serving certificate, and the test CAs.
PACKAGES+=(openssl)
# dbus-daemon: the private message bus the D-Bus client tests (src/cm/systemd) talk to.
PACKAGES+=(dbus-daemon)
# systemd: the PID 1 of the systemd cgroup driver's test node (scripts/systemd-node.sh); procps for pgrep.
PACKAGES+=(systemd procps)
PACKAGES+=(shellcheck)  # the suite's shellcheck step over scripts/ and .ci/run
PACKAGES+=(prometheus)  # promtool (check metrics, check/test rules) and the prometheus server the monitoring-kit test scrapes with

missing=()
for p in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
  [[ "$status" == ii* ]] || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

SUDO=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install-deps: need root to install: ${missing[*]}" >&2; exit 1; }
  SUDO=(sudo)
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
export DEBIAN_FRONTEND=noninteractive
if ! "${SUDO[@]}" apt-get update -q >"$log" 2>&1; then
  cat "$log" >&2; echo "install-deps: apt-get update failed" >&2; exit 1
fi
# --no-install-recommends: containerd's recommends are not needed; keep the footprint small.
if ! "${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" >"$log" 2>&1; then
  cat "$log" >&2; echo "install-deps: apt-get install ${missing[*]} failed" >&2; exit 1
fi
# The Debian containerd package enables a system-wide containerd.service; we run our own on a
# private socket and do not need it, but leave it alone (it does not conflict: different socket/root).
