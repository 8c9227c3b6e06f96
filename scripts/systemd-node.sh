#!/usr/bin/env bash
# A systemd node for tests of the systemd cgroup driver: Debian's systemd as PID 1 of private
# pid, mount, cgroup, uts and ipc namespaces (the way container images run systemd, with
# container= set), sharing the host's network and filesystems.
#
#   scripts/systemd-node.sh start --state-dir DIR [--hostname NAME] [--bind SRC:DST]...
#   scripts/systemd-node.sh exec  --state-dir DIR [--unit NAME] -- CMD [ARG]...
#   scripts/systemd-node.sh stop  --state-dir DIR
#   scripts/systemd-node.sh pid   --state-dir DIR
#
# start   gives the namespaces a cgroup of their own in every hierarchy (kts-systemd-<hash of
#         DIR>, under this process's cgroups), mounts fresh cgroup filesystems rooted there, binds
#         DIR/run on /run and each SRC on DST (a missing DST is created on the host as an empty
#         directory and removed again by stop), and starts systemd with only the units of
#         DIR/run/systemd/system: system.slice and empty targets, nothing else (a --bind onto
#         /etc/systemd/system adds units of the test's own). Every packaged and
#         admin unit directory and generator directory is hidden behind an empty one, and /tmp and
#         /var/tmp are private tmpfs (what the node shares from under them, this checkout, DIR
#         and the --bind sources, stays at its path): nothing of the host's boot
#         (systemd-tmpfiles, mounts, services) can run. Prints the host pid of that systemd once its manager answers.
# exec    runs CMD inside the namespaces, in the working directory of the caller; with --unit, in
#         a transient scope NAME of that systemd (`systemd-run --scope`), so that the command
#         and its children live in the node's own cgroup tree as a service's would.
# stop    kills that systemd (SIGKILL to the pid it recorded: the kernel ends every process of
#         its pid namespace with it, and the mount namespace goes with them), then removes the
#         cgroups and the mount points start created. Stop what you ran inside first (a
#         containerd: `exec -- scripts/containerd.sh stop`), since its bridge lives on the host.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SELF="$REPO/scripts/systemd-node.sh"
CMD=${1:-}
[[ $# -gt 0 ]] && shift
STATE_DIR=""
HOSTNAME_NS="kts-systemd-node"
BINDS=()
UNIT=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --state-dir) STATE_DIR=${2:?--state-dir needs a value}; shift 2 ;;
    --hostname) HOSTNAME_NS=${2:?--hostname needs a value}; shift 2 ;;
    --bind) BINDS+=("${2:?--bind needs SRC:DST}"); shift 2 ;;
    --unit) UNIT=${2:?--unit needs a value}; shift 2 ;;
    --) shift; break ;;
    *) echo "systemd-node.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
STATE_DIR=${STATE_DIR:-${KTS_STATE_DIR:-}}
[[ -n "$STATE_DIR" ]] || { echo "systemd-node.sh: --state-dir is required" >&2; exit 2; }
STATE_DIR=$(mkdir -p "$STATE_DIR" && cd "$STATE_DIR" && pwd)
PIDFILE="$STATE_DIR/systemd.pid"
CG="kts-systemd-$(echo -n "$STATE_DIR" | md5sum | cut -c1-8)"

die() { echo "systemd-node.sh: $*" >&2; exit 1; }

# The live systemd of DIR: the recorded pid, if it still runs systemd.
node_pid() {
  local pid
  pid=$(cat "$PIDFILE" 2>/dev/null) || return 1
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  [[ "$(readlink "/proc/$pid/exe" 2>/dev/null)" == */systemd ]] || return 1
  echo "$pid"
}

# Host cgroup v1 mounts as "mountpoint options-for-mount" lines (controllers or none,name=X).
v1_mounts() {
  findmnt -n -r -o TARGET,OPTIONS -t cgroup | while read -r target options; do
    local keep=() o
    IFS=, read -ra opts <<<"$options"
    for o in "${opts[@]}"; do
      case "$o" in rw|ro|relatime|noatime|nosuid|nodev|noexec|clone_children|xattr|release_agent=*) ;; name=*) keep+=(none "$o") ;; *) keep+=("$o") ;; esac
    done
    (IFS=,; echo "$target ${keep[*]}")
  done
}

write_units() {
  local u="$STATE_DIR/run/systemd/system"
  rm -rf "$STATE_DIR/run"
  mkdir -p "$u" "$STATE_DIR/empty"
  cat >"$u/kts-node.target" <<'EOF'
[Unit]
Description=kubelet-ts test node (nothing of the host's boot)
DefaultDependencies=no
EOF
  cat >"$u/system.slice" <<'EOF'
[Unit]
Description=System Slice
DefaultDependencies=no
EOF
  # The targets a service's default dependencies name, empty: a unit file as shipped (kubelet.service) starts.
  local t
  for t in sysinit basic shutdown network-online multi-user; do
    printf '[Unit]\nDescription=%s (empty)\nDefaultDependencies=no\n' "$t.target" >"$u/$t.target"
  done
}

# Host side: a cgroup of our own in every hierarchy, joined, then the namespaces.
stage1() {
  : >"$STATE_DIR/cgroups.list"
  local target
  if [[ -f /sys/fs/cgroup/cgroup.controllers ]]; then
    join_cgroup /sys/fs/cgroup "$(awk -F: '$1 == "0" { print $3 }' /proc/self/cgroup)"
  else
    local opts key cur
    while read -r target opts; do
      key=${opts#none,}; key=${key%%,*}
      cur=$(awk -F: -v k="$key" '{ n = split($2, c, ","); for (i = 1; i <= n; i++) if (c[i] == k) print $3 }' /proc/self/cgroup)
      join_cgroup "$target" "$cur"
    done < <(v1_mounts)
    target=$(findmnt -n -r -o TARGET -t cgroup2 | head -n1)
    [[ -n "$target" ]] && join_cgroup "$target" "$(awk -F: '$1 == "0" { print $3 }' /proc/self/cgroup)"
  fi
  exec unshare --pid --fork --mount --cgroup --uts --ipc --mount-proc --propagation private \
    env -i container=kubelet-ts PATH=/usr/sbin:/usr/bin:/sbin:/bin KTS_STATE_DIR="$STATE_DIR" \
    KTS_HOSTNAME="$HOSTNAME_NS" KTS_BINDS="${BINDS[*]:-}" KTS_V1_MOUNTS="$(v1_mounts | tr '\n' ';')" \
    "$SELF" --stage2
}

join_cgroup() { # hierarchy mount, this process's cgroup in it
  local dir="$1${2%/}/$CG"
  mkdir -p "$dir"
  if [[ -f "$dir/cpuset.cpus" && -z "$(cat "$dir/cpuset.cpus")" ]]; then
    cat "$(dirname "$dir")/cpuset.cpus" >"$dir/cpuset.cpus"
    cat "$(dirname "$dir")/cpuset.mems" >"$dir/cpuset.mems"
  fi
  echo $$ >"$dir/cgroup.procs"
  echo "$dir" >>"$STATE_DIR/cgroups.list"
}

# Private tmpfs on /tmp and /var/tmp (systemd-tmpfiles --boot would wipe /tmp: no unit here runs
# it, and they are private anyway). What the node shares with the host from under them (the
# args: this checkout, when cloned there, DIR, the --bind sources) is bound back at its own path,
# from a hold on the host's directory taken before the tmpfs hides it. Run once /run is the node's.
private_tmp() {
  local hold=/run/kts-host-tmp t p q skip kept=()
  mkdir -p "$hold"
  for t in /tmp /var/tmp; do
    mount --bind "$t" "$hold"
    mount -t tmpfs tmpfs "$t"
    for p in "$@"; do
      [[ $p == "$t"/* ]] || continue
      skip=0
      for q in "${kept[@]}"; do [[ $p == "$q" || $p == "$q"/* ]] && skip=1; done
      [[ $skip -eq 0 ]] || continue
      if [[ -d "$hold/${p#"$t"/}" ]]; then mkdir -p "$p"; else mkdir -p "$(dirname "$p")"; : >"$p"; fi
      mount --bind "$hold/${p#"$t"/}" "$p"
      kept+=("$p")
    done
    umount "$hold"
  done
  rmdir "$hold"
}

# Inside: PID 1 of the new pid namespace, in the new mount namespace.
stage2() {
  local d=$KTS_STATE_DIR m opts b
  if [[ -f /sys/fs/cgroup/cgroup.controllers ]]; then
    umount -R /sys/fs/cgroup 2>/dev/null || umount -l /sys/fs/cgroup
    mount -t cgroup2 cgroup2 /sys/fs/cgroup
  else
    umount -R /sys/fs/cgroup 2>/dev/null || umount -l /sys/fs/cgroup
    mount -t tmpfs -o mode=755 tmpfs /sys/fs/cgroup
    IFS=';' read -ra mounts <<<"$KTS_V1_MOUNTS"
    for m in "${mounts[@]}"; do
      [[ -n "$m" ]] || continue
      opts=${m#* }; m=${m%% *}
      mkdir -p "$m"
      mount -t cgroup -o "$opts" cgroup "$m"
    done
    mkdir -p /sys/fs/cgroup/unified
    mount -t cgroup2 cgroup2 /sys/fs/cgroup/unified
  fi
  mount --bind "$d/run" /run
  : >"$d/console.log"
  mount --bind "$d/console.log" /dev/console
  for m in /usr/lib/systemd/system /etc/systemd/system /usr/lib/systemd/system-generators /etc/systemd/system-generators /usr/lib/systemd/user /etc/systemd/user; do
    [[ -d $m ]] && mount --bind "$d/empty" "$m"
  done
  local shared=("$REPO" "$d")
  for b in $KTS_BINDS; do shared+=("${b%%:*}"); done
  private_tmp "${shared[@]}"
  for b in $KTS_BINDS; do mount --bind "${b%%:*}" "${b#*:}"; done
  # systemd sets the hostname from /etc/hostname when it starts: give it ours.
  echo "$KTS_HOSTNAME" >"$d/hostname"
  mount --bind "$d/hostname" /etc/hostname
  hostname "$KTS_HOSTNAME"
  exec /lib/systemd/systemd --log-target=console --log-level=info --unit=kts-node.target
}

start() {
  local pid b dst
  if pid=$(node_pid); then echo "$pid"; return 0; fi
  [[ $(id -u) -eq 0 ]] || die "must run as root"
  [[ -x /lib/systemd/systemd ]] || die "systemd is not installed (scripts/install-deps.sh installs it)"
  write_units
  : >"$STATE_DIR/mountpoints.list"
  for b in "${BINDS[@]}"; do
    dst=${b#*:}
    [[ -e "${b%%:*}" ]] || die "--bind $b: ${b%%:*} does not exist"
    if [[ ! -e "$dst" ]]; then mkdir -p "$dst"; echo "$dst" >>"$STATE_DIR/mountpoints.list"; fi
  done
  local args=(--stage1 --state-dir "$STATE_DIR" --hostname "$HOSTNAME_NS")
  for b in "${BINDS[@]}"; do args+=(--bind "$b"); done
  setsid "$SELF" "${args[@]}" </dev/null >"$STATE_DIR/launcher.log" 2>&1 &
  local launcher=$!
  for _ in $(seq 1 100); do
    pid=$(pgrep -P "$launcher" -x systemd || true)
    [[ -n "$pid" ]] && break
    kill -0 "$launcher" 2>/dev/null || { cat "$STATE_DIR/launcher.log" >&2; die "the namespaces did not start"; }
    sleep 0.1
  done
  [[ -n "$pid" ]] || { kill -KILL "$launcher" 2>/dev/null; die "systemd did not start (log: $STATE_DIR/launcher.log)"; }
  echo "$pid" >"$PIDFILE"
  # Ready when its manager answers on the private bus.
  for _ in $(seq 1 100); do
    if nsenter -t "$pid" -a systemctl show -p Version >/dev/null 2>&1; then
      echo "$pid"; return 0
    fi
    sleep 0.1
  done
  tail -n 30 "$STATE_DIR/console.log" >&2
  stop
  die "systemd's manager did not answer within 10 s (log: $STATE_DIR/console.log)"
}

exec_in() {
  local pid
  pid=$(node_pid) || die "no systemd node runs for $STATE_DIR (start it first)"
  [[ $# -gt 0 ]] || die "exec needs a command after --"
  if [[ -n "$UNIT" ]]; then
    exec nsenter -t "$pid" -a --wd="$PWD" systemd-run --quiet --scope --collect --unit="$UNIT" -p Delegate=yes -- "$@"
  fi
  exec nsenter -t "$pid" -a --wd="$PWD" "$@"
}

stop() {
  local pid dir
  if pid=$(node_pid); then
    kill -KILL "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -f "$PIDFILE"
  # Deepest first; a cgroup that still holds a process (there should be none) stays, and says so.
  if [[ -f "$STATE_DIR/cgroups.list" ]]; then
    while read -r dir; do
      [[ -d "$dir" ]] || continue
      find "$dir" -depth -type d -exec rmdir {} \; 2>/dev/null || true
      [[ -d "$dir" ]] && echo "systemd-node.sh: cgroup $dir is not empty" >&2
    done <"$STATE_DIR/cgroups.list"
    rm -f "$STATE_DIR/cgroups.list"
  fi
  if [[ -f "$STATE_DIR/mountpoints.list" ]]; then
    while read -r dir; do rmdir "$dir" 2>/dev/null || true; done <"$STATE_DIR/mountpoints.list"
    rm -f "$STATE_DIR/mountpoints.list"
  fi
}

case "$CMD" in
  start) start ;;
  --stage1) stage1 ;;
  --stage2) stage2 ;;
  exec) exec_in "$@" ;;
  stop) stop ;;
  pid) node_pid ;;
  *) echo "usage: $0 start|exec|stop|pid --state-dir DIR ..." >&2; exit 2 ;;
esac
