#!/usr/bin/env bash
# Refreshes cmd/kube-controller-manager/default.pgo, the CPU profile `go
# build` optimises kcm with (-pgo=auto): runs the benchmark's phase sets
# at 500 QPS on our binary only, taking 20-second CPU profiles from its
# /debug/pprof/profile (as the cluster's admin) for as long as they run,
# and merges them. PGO_PHASES picks the sets (default: all but nodes, the
# endpoints and daemonsets sets at reduced size). Needs `make build
# tools`; takes about 20 minutes (6 for the deployments set alone).
set -euo pipefail
cd "$(dirname "$0")/.."
out=_output/pgo
rm -rf "$out" && mkdir -p "$out/profiles"

phases=${PGO_PHASES:-deployments,jobs,daemonsets,statefulsets,endpoints,volumes}
go run ./test/bench/cmd/bench --out "$out/bench" --binaries ours --qps-settings 500 --phases "$phases" \
	--daemonset-nodes 100 --services 20 >"$out/bench.log" 2>&1 &
bench=$!

profile() {
	local pid args port kubeconfig admin
	pid=$(pgrep -f '^kube-controller-manager ' | head -1) || return 1
	args=$(tr '\0' ' ' </proc/"$pid"/cmdline)
	port=$(grep -o -- '--secure-port=[0-9]*' <<<"$args" | head -1 | cut -d= -f2)
	kubeconfig=$(grep -o -- '--kubeconfig=[^ ]*' <<<"$args" | head -1 | cut -d= -f2)
	admin=$(dirname "$kubeconfig")/admin.conf
	grep client-certificate-data "$admin" | awk '{print $2}' | base64 -d >"$out/client.crt"
	grep client-key-data "$admin" | awk '{print $2}' | base64 -d >"$out/client.key"
	curl -sfk --cert "$out/client.crt" --key "$out/client.key" \
		"https://127.0.0.1:$port/debug/pprof/profile?seconds=20" -o "$out/profiles/cpu-$(date +%s).pb.gz"
}

while kill -0 "$bench" 2>/dev/null; do
	profile || sleep 1
done
wait "$bench"
find "$out/profiles" -size 0 -delete
go tool pprof -proto "$out"/profiles/cpu-*.pb.gz >cmd/kube-controller-manager/default.pgo
echo "wrote cmd/kube-controller-manager/default.pgo from $(ls "$out"/profiles | wc -l) profiles"
