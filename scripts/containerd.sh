#!/usr/bin/env bash
# Run a private containerd (CRI enabled) for kubelet-ts development and tests.
#
#   scripts/containerd.sh start  [--state-dir DIR] [--bridge NAME] [--subnet CIDR]
#                                [--snapshotter overlayfs|native] [--no-import]
#                                [--version 1.6|1.7|2] [--systemd-cgroup] [--no-cni-config]
#   scripts/containerd.sh stop   [--state-dir DIR] [--daemon-only]
#   scripts/containerd.sh status [--state-dir DIR]
#   scripts/containerd.sh endpoint [--state-dir DIR]
#
# DIR defaults to <repo>/.state/containerd. Everything the daemon owns lives under DIR: config,
# root, state, runc state (DIR/runc), CNI config and IPAM state, the grpc socket
# DIR/containerd.sock and its ttrpc twin, logs (DIR/containerd.log) and the pid (DIR/containerd.pid).
# 1.7 and 2.x run with CDI on (enable_cdi) and read CDI specs from DIR/cdi only; DIR/cdi.env names
# that directory for tests (CDI_SPEC_DIR=, empty on 1.6, which has no CDI).
#
# start   writes DIR/config.toml and the CNI conflist, starts containerd in the background (once:
#         a second start finds the running daemon), waits for the CRI plugin, imports the local
#         images (scripts/build-images.mjs) into namespace k8s.io and prints the endpoint
#         `unix://DIR/containerd.sock` on stdout (the only thing it prints unless it fails).
# stop    stops the daemon (TERM, then KILL), then removes every container it left running
#         (runc delete --force), kills its shims, unmounts everything under DIR (pod netns, shm,
#         rootfs), deletes the bridge and wipes root/state: the next start is a fresh runtime
#         (no sandboxes or containers; images re-imported). Nothing is left running or mounted.
#         --daemon-only stops only the daemon and keeps containers, shims and state (restart tests:
#         the next start recovers them).
# status  exit 0 and print "running pid=... endpoint=..." when the daemon is up, else exit 1.
#
# --systemd-cgroup sets SystemdCgroup = true in runc's options (kubeadm's setup): runc then asks
# systemd for each container's scope under the slice the sandbox's cgroup parent names, so the
# daemon must run on a node whose PID 1 is systemd (tests: scripts/systemd-node.sh exec).
#
# --no-cni-config (or KUBELET_TS_CTR_NO_CNI=1) starts with an empty CNI conf dir DIR/cni/net.d, as
# a node before its network add-on: the runtime reports NetworkReady=false ("cni plugin not
# initialized") until a conflist appears there. The conflist is written to DIR/cni/ instead, for a
# test to copy into DIR/cni/net.d when the network should come up.
#
# Releases (--version, or $KUBELET_TS_CTR_VERSION): 1.6 is the system's containerd (Debian
# bookworm's, installed by scripts/install-deps.sh). 1.7 (Debian trixie's) and 2 (Debian sid's)
# are fetched on first use with `apt-get download` through a private sources list, lists and
# cache under <repo>/.state/containerd-releases/apt (the system's apt setup is not touched), and
# unpacked with `dpkg -x` into <repo>/.state/containerd-releases/<version>/; their containerd,
# containerd-shim-runc-v2 and ctr run first on PATH, with bookworm's runc. Every release reads
# the same version-2 config file: 1.7 natively, 2.x by migrating it at start (verified on 2.1).
#
# Networking: a bridge + host-local CNI network, isGateway, no masquerade (no iptables rules).
# Defaults: the default DIR uses bridge kts0 / 10.88.0.0/16; DIR=<repo>/.state/test-containerd uses
# kts1 / 10.89.0.0/16; any other DIR gets a bridge and /16 derived from a hash of its path.
# start creates the bridge and marks it as ours (ifalias kubelet-ts:DIR); a start whose bridge is
# held by the live daemon of another state dir (a second clone) fails: pass --bridge/--subnet.
# The overlayfs snapshotter is used when an overlay mount works under DIR, else native.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CMD=${1:-}
[[ $# -gt 0 ]] && shift
STATE_DIR="$REPO/.state/containerd"
# KUBELET_TS_CTR_BRIDGE / KUBELET_TS_CTR_SUBNET override the defaults below (parallel work trees of
# one machine each need their own bridge for their .state/test-containerd).
BRIDGE="${KUBELET_TS_CTR_BRIDGE:-}"
SUBNET="${KUBELET_TS_CTR_SUBNET:-}"
IMPORT=1
SNAPSHOTTER_FORCE=""
DAEMON_ONLY=0
SYSTEMD_CGROUP=false
NO_CNI="${KUBELET_TS_CTR_NO_CNI:-0}"
VERSION="${KUBELET_TS_CTR_VERSION:-1.6}"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --state-dir) STATE_DIR=${2:?--state-dir needs a value}; shift 2 ;;
    --state-dir=*) STATE_DIR=${1#*=}; shift ;;
    --bridge) BRIDGE=${2:?--bridge needs a value}; shift 2 ;;
    --subnet) SUBNET=${2:?--subnet needs a value}; shift 2 ;;
    --snapshotter) SNAPSHOTTER_FORCE=${2:?--snapshotter needs a value}; shift 2 ;;
    --no-import) IMPORT=0; shift ;;
    --daemon-only) DAEMON_ONLY=1; shift ;;
    --systemd-cgroup) SYSTEMD_CGROUP=true; shift ;;
    --no-cni-config) NO_CNI=1; shift ;;
    --version) VERSION=${2:?--version needs a value}; shift 2 ;;
    --version=*) VERSION=${1#*=}; shift ;;
    *) echo "containerd.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$STATE_DIR"
STATE_DIR=$(cd "$STATE_DIR" && pwd -P)

SOCK="$STATE_DIR/containerd.sock"
CONFIG="$STATE_DIR/config.toml"
PIDFILE="$STATE_DIR/containerd.pid"
LOG="$STATE_DIR/containerd.log"
NETFILE="$STATE_DIR/network.env"
# CDI spec directory (containerd 1.7 and 2.x) and the file naming it for tests.
CDI_DIR="$STATE_DIR/cdi"
CDI_ENV="$STATE_DIR/cdi.env"
RUNC_ROOT="$STATE_DIR/runc"
# The second runtime handler ("alt", for RuntimeClass tests): runc again, with its own state root.
RUNC_ALT_ROOT="$STATE_DIR/runc-alt"
IMAGES_DIR="$REPO/.state/images"
NS=k8s.io
export PATH="$PATH:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

die() { echo "containerd.sh: $*" >&2; exit 1; }

RELEASES="$REPO/.state/containerd-releases"
case "$VERSION" in
  1.6) SUITE="" ;;
  1.7) SUITE=trixie ;;
  2|2.x) VERSION=2; SUITE=sid ;;
  *) die "--version must be 1.6, 1.7 or 2 (got $VERSION)" ;;
esac

apt_private() { # apt-get/apt-cache with our own sources, lists and cache only
  local tool=$1; shift
  "$tool" -o Dir::Etc::sourcelist="$RELEASES/apt/sources.list" -o Dir::Etc::sourceparts=- \
    -o Dir::State::Lists="$RELEASES/apt/lists" -o Dir::Cache="$RELEASES/apt/cache" \
    -o APT::Get::List-Cleanup=0 -o Debug::NoLocking=1 "$@"
}

fetch_release() {
  # Unpacks Debian $SUITE's containerd into $RELEASES/$VERSION (once).
  local dest="$RELEASES/$VERSION" tmp deb
  [[ -x "$dest/usr/bin/containerd" ]] && return 0
  if ! command -v apt-get >/dev/null || ! command -v dpkg >/dev/null; then die "apt-get and dpkg are needed to fetch containerd $VERSION"; fi
  mkdir -p "$RELEASES/apt/lists/partial" "$RELEASES/apt/cache/archives/partial"
  printf 'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian %s main\n' trixie sid >"$RELEASES/apt/sources.list"
  apt_private apt-get -qq update >/dev/null 2>&1 || die "apt-get update of the private trixie/sid lists failed"
  tmp=$(mktemp -d)
  (cd "$tmp" && apt_private apt-get -qq download "containerd/$SUITE" >/dev/null 2>&1) || { rm -rf "$tmp"; die "apt-get download containerd/$SUITE failed"; }
  deb=$(find "$tmp" -maxdepth 1 -name 'containerd_*.deb' | head -n1)
  [[ -n "$deb" ]] || { rm -rf "$tmp"; die "no containerd package downloaded from $SUITE"; }
  rm -rf "$dest.partial"
  dpkg -x "$deb" "$dest.partial" || { rm -rf "$tmp" "$dest.partial"; die "dpkg -x $deb failed"; }
  rm -rf "$tmp"
  mv "$dest.partial" "$dest"
}

if [[ -n "$SUITE" && ( "$CMD" == start || "$CMD" == status || "$CMD" == stop ) ]]; then
  [[ "$CMD" == start ]] && fetch_release
  # The release's containerd, shim and ctr come first; runc stays bookworm's.
  [[ -d "$RELEASES/$VERSION/usr/bin" ]] && export PATH="$RELEASES/$VERSION/usr/bin:$PATH"
fi

if (( ${#SOCK} + 6 > 107 )); then
  die "socket path $SOCK.ttrpc is too long for a unix socket; use a shorter --state-dir"
fi

daemon_pid() {
  # The recorded pid, if that process is still our containerd.
  # Falls back to looking for a containerd started with our config (pid file lost).
  local pid=""
  [[ -f "$PIDFILE" ]] && pid=$(<"$PIDFILE")
  if [[ "$pid" =~ ^[0-9]+$ && -r /proc/$pid/cmdline ]] \
      && { tr '\0' ' ' </proc/"$pid"/cmdline; } 2>/dev/null | grep -qF -- "containerd --config $CONFIG"; then
    echo "$pid"
    return 0
  fi
  # (A /proc scan rather than pgrep: procps is not installed everywhere.)
  local p
  pid=""
  for p in /proc/[0-9]*; do
    if [[ "$( { tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null)" == "containerd --config $CONFIG " ]]; then
      pid=${p#/proc/}
      break
    fi
  done
  [[ -n "$pid" ]] || return 1
  echo "$pid" >"$PIDFILE"
  echo "$pid"
}

network_defaults() {
  if [[ -f "$NETFILE" && -z "$BRIDGE" && -z "$SUBNET" ]]; then
    # shellcheck disable=SC1090
    source "$NETFILE"
    return
  fi
  if [[ -z "$BRIDGE" || -z "$SUBNET" ]]; then
    local b s
    if [[ "$STATE_DIR" == "$REPO/.state/containerd" ]]; then
      b=kts0; s=10.88.0.0/16
    elif [[ "$STATE_DIR" == "$REPO/.state/test-containerd" ]]; then
      b=kts1; s=10.89.0.0/16
    else
      local h
      h=$(printf '%s' "$STATE_DIR" | sha256sum | cut -c1-8)
      b="kts${h:0:6}"
      s="10.$(( 128 + 16#${h:6:2} % 96 )).0.0/16"
    fi
    BRIDGE=${BRIDGE:-$b}
    SUBNET=${SUBNET:-$s}
  fi
}

overlay_works() {
  local d="$STATE_DIR/.overlay-check"
  rm -rf "$d"
  mkdir -p "$d"/{lower,upper,work,merged}
  if mount -t overlay overlay -o "lowerdir=$d/lower,upperdir=$d/upper,workdir=$d/work" "$d/merged" 2>/dev/null; then
    umount "$d/merged"
    rm -rf "$d"
    return 0
  fi
  rm -rf "$d"
  return 1
}

cdi_config() {
  # CDI (device plugins' CDI_devices): 1.7 has it off by default, 2.x on with /etc/cdi and
  # /var/run/cdi; both get it on, reading only DIR/cdi (tests write their specs there). 2.x's
  # migration of this version-2 config moves both keys to io.containerd.cri.v1.runtime. 1.6 has
  # no CDI at all: the keys are left out rather than relying on it ignoring them.
  [[ "$VERSION" == 1.6 ]] && return 0
  printf '    enable_cdi = true\n    cdi_spec_dirs = ["%s"]\n' "$CDI_DIR"
}

write_cdi_env() {
  # DIR/cdi.env tells tests where this daemon reads CDI specs (empty on 1.6: no CDI).
  if [[ "$VERSION" == 1.6 ]]; then printf 'CDI_SPEC_DIR=\n' >"$CDI_ENV"; return 0; fi
  mkdir -p "$CDI_DIR"
  printf 'CDI_SPEC_DIR=%s\n' "$CDI_DIR" >"$CDI_ENV"
}

write_config() {
  local snapshotter=$1
  mkdir -p "$STATE_DIR"/{root,state,opt,cni/net.d,cni/networks,runc,certs.d}
  write_cdi_env
  cat >"$CONFIG" <<EOF
# Written by scripts/containerd.sh; regenerated on every start.
version = 2
root = "$STATE_DIR/root"
state = "$STATE_DIR/state"
oom_score = 0
disabled_plugins = [
  "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.tracing.processor.v1.otlp",
  "io.containerd.internal.v1.tracing",
]

[grpc]
  address = "$SOCK"
  uid = 0
  gid = 0

[ttrpc]
  address = "$SOCK.ttrpc"

[debug]
  address = ""
  level = "info"

[metrics]
  address = ""

[plugins]
  [plugins."io.containerd.internal.v1.opt"]
    path = "$STATE_DIR/opt"

  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "localhost/kubelet-ts/pause:latest"
    restrict_oom_score_adj = true
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"
    enable_selinux = false
    # Pod network namespaces under DIR/state rather than /run/netns, so "containerd.sh stop" finds them.
    netns_mounts_under_state_dir = true
    max_container_log_line_size = 16384
$(cdi_config)

    # Per-registry hosts.toml files (e.g. certs.d/127.0.0.1:PORT/hosts.toml for a plain-HTTP
    # registry on loopback, written by the registry tests); read at every pull.
    [plugins."io.containerd.grpc.v1.cri".registry]
      config_path = "$STATE_DIR/certs.d"

    [plugins."io.containerd.grpc.v1.cri".containerd]
      snapshotter = "$snapshotter"
      default_runtime_name = "runc"
      discard_unpacked_layers = false

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"

        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
          SystemdCgroup = $SYSTEMD_CGROUP
          Root = "$RUNC_ROOT"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.alt]
        runtime_type = "io.containerd.runc.v2"

        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.alt.options]
          SystemdCgroup = $SYSTEMD_CGROUP
          Root = "$RUNC_ALT_ROOT"

    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "/usr/lib/cni"
      conf_dir = "$STATE_DIR/cni/net.d"
      max_conf_num = 1

  [plugins."io.containerd.runtime.v1.linux"]
    runtime_root = "$RUNC_ROOT/v1"
EOF
  local conflist="$STATE_DIR/cni/net.d/10-kubelet-ts.conflist"
  if [[ "$NO_CNI" == 1 ]]; then
    find "$STATE_DIR/cni/net.d" -mindepth 1 -maxdepth 1 -delete
    conflist="$STATE_DIR/cni/10-kubelet-ts.conflist"
  fi
  cat >"$conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "kubelet-ts-$BRIDGE",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$STATE_DIR/cni/networks",
        "ranges": [[{ "subnet": "$SUBNET" }]],
        "routes": [{ "dst": "0.0.0.0/0" }]
      }
    }
  ]
}
EOF
  printf 'BRIDGE=%s\nSUBNET=%s\nSNAPSHOTTER=%s\n' "$BRIDGE" "$SUBNET" "$snapshotter" >"$NETFILE"
}

owner_alive() {
  # Is the containerd of state dir $1 running?
  local pid
  pid=$(cat "$1/containerd.pid" 2>/dev/null) || return 1
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  [[ "$( { tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null)" == "containerd --config $1/config.toml " ]]
}

claim_bridge() {
  # The CNI bridge plugin creates the bridge on the first pod; we create it first and mark it
  # (ifalias "kubelet-ts:DIR") so that a second daemon with another state dir but the same
  # bridge name (two clones on one machine) is refused instead of sharing pod IPs.
  local alias owner
  if [[ -e /sys/class/net/$BRIDGE ]]; then
    alias=$(cat "/sys/class/net/$BRIDGE/ifalias" 2>/dev/null || true)
    if [[ "$alias" == kubelet-ts:* ]]; then
      owner=${alias#kubelet-ts:}
      if [[ "$owner" != "$STATE_DIR" ]] && owner_alive "$owner"; then
        die "bridge $BRIDGE is in use by the containerd of $owner; pass --bridge NAME --subnet CIDR"
      fi
    fi
  else
    ip link add "$BRIDGE" type bridge || die "cannot create bridge $BRIDGE"
  fi
  echo "kubelet-ts:$STATE_DIR" >"/sys/class/net/$BRIDGE/ifalias" 2>/dev/null || true
  ip link set "$BRIDGE" up 2>/dev/null || true
}

cri_status() {
  # Prints the CRI plugin's status column (ok / error / skip) or nothing.
  ctr -a "$SOCK" plugins ls 2>/dev/null | awk '$1 == "io.containerd.grpc.v1" && $2 == "cri" { print $NF }'
}

import_images() {
  local snapshotter=$1 out
  command -v node >/dev/null || die "node is needed to build the local images"
  node "$REPO/scripts/build-images.mjs" --quiet --out "$IMAGES_DIR" \
    || die "building the local images failed"
  for img in pause busybox busybox-uid1000 busybox-uid1000-gid1000 busybox-nobody; do
    if ! out=$(ctr -a "$SOCK" -n "$NS" images import --snapshotter "$snapshotter" \
        "$IMAGES_DIR/$img.tar" 2>&1); then
      echo "$out" >&2
      die "ctr images import $img.tar failed"
    fi
  done
}

start() {
  exec 9>"$STATE_DIR/.lock"
  flock -w 120 9 || die "timed out waiting for the lock on $STATE_DIR"
  local pid snapshotter
  network_defaults
  if pid=$(daemon_pid); then
    local running
    running=$(cat "$STATE_DIR/version" 2>/dev/null || echo 1.6)
    [[ "$running" == "$VERSION" ]] || die "the containerd of $STATE_DIR runs version $running, not $VERSION: stop it first"
    # Already running: make sure the images are there (cheap, idempotent) and report it.
    # shellcheck disable=SC1090
    source "$NETFILE"
    # shellcheck disable=SC2153 # SNAPSHOTTER comes from $NETFILE, written by the start that runs
    [[ $IMPORT -eq 1 ]] && import_images "$SNAPSHOTTER"
    echo "unix://$SOCK"
    return 0
  fi
  command -v containerd >/dev/null || die "containerd not installed (run scripts/install-deps.sh)"
  command -v runc >/dev/null || die "runc not installed (run scripts/install-deps.sh)"
  [[ -x /usr/lib/cni/bridge && -x /usr/lib/cni/host-local ]] || die "CNI plugins missing in /usr/lib/cni (run scripts/install-deps.sh)"
  [[ $(id -u) -eq 0 ]] || die "must run as root"

  claim_bridge
  if [[ -n "$SNAPSHOTTER_FORCE" ]]; then snapshotter=$SNAPSHOTTER_FORCE
  elif overlay_works; then snapshotter=overlayfs
  else snapshotter=native; fi
  write_config "$snapshotter"
  echo "$VERSION" >"$STATE_DIR/version"
  rm -f "$SOCK" "$SOCK.ttrpc"
  echo "=== $(date -u +%FT%TZ) start (snapshotter=$snapshotter bridge=$BRIDGE subnet=$SUBNET)" >>"$LOG"
  # 9>&-: the daemon must not inherit (and so hold) our lock.
  setsid containerd --config "$CONFIG" </dev/null >>"$LOG" 2>&1 9>&- &
  pid=$!
  echo "$pid" >"$PIDFILE"

  local deadline=$(( SECONDS + 30 )) st=""
  while :; do
    if ! kill -0 "$pid" 2>/dev/null; then
      tail -n 30 "$LOG" >&2
      rm -f "$PIDFILE"
      die "containerd exited during startup (log: $LOG)"
    fi
    if [[ -S "$SOCK" ]]; then
      st=$(cri_status)
      [[ -n "$st" ]] && break
    fi
    (( SECONDS < deadline )) || { tail -n 30 "$LOG" >&2; stop_all; die "containerd did not come up within 30s (log: $LOG)"; }
    sleep 0.1
  done
  if [[ "$st" != ok ]]; then
    grep -i 'cri' "$LOG" | tail -n 20 >&2 || true
    stop_all
    die "the CRI plugin did not load (status: $st; log: $LOG)"
  fi
  [[ $IMPORT -eq 1 ]] && import_images "$snapshotter"
  echo "unix://$SOCK"
}

stop_daemon() {
  local pid
  pid=$(daemon_pid) || { rm -f "$PIDFILE"; return 0; }
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -f "$PIDFILE" "$SOCK" "$SOCK.ttrpc"
}

our_shims() {
  # Shim processes started by this daemon: their command line names our socket.
  local p cmd
  for p in /proc/[0-9]*; do
    cmd=$( { tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null) || continue
    [[ "$cmd" == *containerd-shim* && "$cmd" == *"-address $SOCK "* ]] && echo "${p#/proc/}"
  done
  return 0
}

stop_all() {
  network_defaults
  stop_daemon

  # Containers still running: runc state for them is private to us (runc option Root, per handler).
  local root ns id
  for root in "$RUNC_ROOT" "$RUNC_ALT_ROOT"; do
    [[ -d "$root" ]] || continue
    for ns in "$root"/*/; do
      [[ -d "$ns" ]] || continue
      for id in "$ns"*/; do
        [[ -d "$id" ]] || continue
        id=$(basename "$id")
        runc --root "${ns%/}" delete --force "$id" >/dev/null 2>&1 || true
      done
    done
  done

  # Shims: TERM, then KILL; then their sockets (/run/containerd/s/<hash>, named in each task's
  # "address" file), which a killed shim leaves behind.
  local shims pid sockets
  sockets=$(cat "$STATE_DIR"/state/io.containerd.runtime.v2.task/*/*/address 2>/dev/null | sed -n 's|^unix://||p') || true
  shims=$(our_shims)
  if [[ -n "$shims" ]]; then
    for pid in $shims; do kill -TERM "$pid" 2>/dev/null || true; done
    for _ in $(seq 1 30); do
      local alive=0
      for pid in $shims; do kill -0 "$pid" 2>/dev/null && alive=1; done
      [[ $alive -eq 0 ]] && break
      sleep 0.1
    done
    for pid in $shims; do kill -KILL "$pid" 2>/dev/null || true; done
  fi
  for pid in $sockets; do [[ -S "$pid" ]] && rm -f "$pid"; done
  rmdir /run/containerd/s /run/containerd 2>/dev/null || true

  # Pod network namespaces whose eth0 is a veth on our bridge (the CRI puts them in /run/netns).
  if [[ -n "$BRIDGE" ]] && ip link show "$BRIDGE" >/dev/null 2>&1; then
    local ours nsf peer
    ours=" $(ip -o link show master "$BRIDGE" 2>/dev/null | awk -F': ' '{print $1}' | tr '\n' ' ') "
    for nsf in /run/netns/cni-*; do
      [[ -e "$nsf" ]] || continue
      peer=$(ip -n "$(basename "$nsf")" -o link show eth0 2>/dev/null | sed -n 's/.*eth0@if\([0-9]*\).*/\1/p')
      if [[ -n "$peer" && "$ours" == *" $peer "* ]]; then
        umount "$nsf" 2>/dev/null || umount -l "$nsf" 2>/dev/null || true
        rm -f "$nsf"
      fi
    done
    local alias
    alias=$(cat "/sys/class/net/$BRIDGE/ifalias" 2>/dev/null || true)
    if [[ -z "$alias" || "$alias" == "kubelet-ts:$STATE_DIR" ]]; then
      ip link del "$BRIDGE" 2>/dev/null || true
    fi
  fi

  # Anything still mounted under the state dir (sandbox shm, task rootfs), deepest first.
  local m
  for _ in 1 2 3; do
    m=$(findmnt -rn -o TARGET | awk -v d="$STATE_DIR/" 'index($0, d) == 1' | sort -r)
    [[ -z "$m" ]] && break
    while IFS= read -r t; do
      t=$(printf '%b' "$t")
      umount "$t" 2>/dev/null || umount -l "$t" 2>/dev/null || true
    done <<<"$m"
  done
  rm -rf "$STATE_DIR/cni/networks"

  # Forget the dead sandboxes and containers too, so the next start is fresh (it re-imports the
  # images). Only when nothing is mounted below any more; --one-file-system as a second guard.
  if [[ -z "$(findmnt -rn -o TARGET | awk -v d="$STATE_DIR/" 'index($0, d) == 1')" ]]; then
    rm -rf --one-file-system "$STATE_DIR/root" "$STATE_DIR/state" "$RUNC_ROOT" "$RUNC_ALT_ROOT" "$STATE_DIR/opt"
  else
    echo "containerd.sh: some mounts under $STATE_DIR could not be removed; keeping its root/state" >&2
  fi
}

case "$CMD" in
  start) start ;;
  stop)
    exec 9>"$STATE_DIR/.lock"
    flock -w 120 9 || die "timed out waiting for the lock on $STATE_DIR"
    if [[ $DAEMON_ONLY -eq 1 ]]; then stop_daemon; else stop_all; fi
    ;;
  status)
    if pid=$(daemon_pid); then
      network_defaults
      echo "running pid=$pid endpoint=unix://$SOCK bridge=$BRIDGE subnet=$SUBNET"
    else
      echo "stopped"
      exit 1
    fi
    ;;
  endpoint) echo "unix://$SOCK" ;;
  *)
    sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | grep '^#' | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
