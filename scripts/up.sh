#!/usr/bin/env bash
# README command 1: install what this machine lacks, build, start a private containerd and
# kubelet-ts in standalone mode with the example static pods, and wait until they run.
#   bash scripts/up.sh          start (idempotent)
#   bash scripts/up.sh down     stop kubelet-ts and containerd (and the pods' containers)
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
STATE="$REPO/.state/kubelet"
PIDFILE="$STATE/kubelet.pid"
PORT=${KUBELET_TS_READ_ONLY_PORT:-10255}

stop_kubelet() {
  if [[ -f "$PIDFILE" ]] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
    kill -TERM "$(cat "$PIDFILE")"
    for _ in $(seq 50); do kill -0 "$(cat "$PIDFILE")" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$(cat "$PIDFILE")" 2>/dev/null || true
  fi
  rm -f "$PIDFILE"
}

if [[ "${1:-}" == "down" ]]; then
  stop_kubelet
  bash scripts/containerd.sh stop
  echo "kubelet-ts and containerd stopped"
  exit 0
fi

bash scripts/install-deps.sh
[[ -d node_modules ]] || npm ci --no-audit --no-fund
npm run build --silent
ENDPOINT=$(bash scripts/containerd.sh start)

mkdir -p "$STATE/manifests" "$STATE/root" "$STATE/logs"
cp -n examples/static-pods/*.yaml "$STATE/manifests/" 2>/dev/null || true
cat > "$STATE/config.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
staticPodPath: $STATE/manifests
containerRuntimeEndpoint: $ENDPOINT
readOnlyPort: $PORT
# A development node: every port on loopback. The main port (10250, TLS) is closed until
# authentication/authorization are configured (docs/security.md).
address: 127.0.0.1
healthzPort: 10248
podLogsDir: $STATE/logs
fileCheckFrequency: 20s
# Upstream 1.35 refuses to start on a cgroup v1 host unless told so; harmless on cgroup v2.
failCgroupV1: false
YAML

stop_kubelet
nohup bin/kubelet-ts.js --config "$STATE/config.yaml" --root-dir "$STATE/root" --logging-format=text >"$STATE/kubelet.log" 2>&1 &
echo $! >"$PIDFILE"

echo "waiting for the example pods to be Running..."
for _ in $(seq 120); do
  phases=$(curl -fsS "http://127.0.0.1:$PORT/pods" 2>/dev/null | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{try{const l=JSON.parse(s);console.log(l.items.map(p=>p.metadata.name+"="+(p.status&&p.status.phase)).join(" "))}catch{}})' || true)
  if [[ -n "$phases" && "$phases" != *Pending* && "$phases" == *Running* ]]; then break; fi
  sleep 0.5
done
cat <<MSG
kubelet-ts is running (pid $(cat "$PIDFILE")), containerd at $ENDPOINT
pods: ${phases:-none yet, see $STATE/kubelet.log}

  curl -s localhost:$PORT/pods | jq '.items[] | {name: .metadata.name, phase: .status.phase, ip: .status.podIP}'
  curl -s localhost:18080/                  # the hostNetwork web pod
  curl -s localhost:10248/healthz
  curl -s localhost:$PORT/metrics | grep ^kubelet_
  curl -s localhost:$PORT/stats/summary | jq .node.memory
  edit or add manifests in $STATE/manifests/ ; logs: $STATE/kubelet.log
  bash scripts/up.sh down                   # stop everything
MSG
