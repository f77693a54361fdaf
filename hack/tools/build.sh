#!/usr/bin/env bash
# Builds the binaries the tests and the local cluster run, from the Go module
# proxy only: etcd, kube-apiserver, kube-scheduler, upstream
# kube-controller-manager and kwok by default; upstream's e2e suite
# (e2e.test, for make conformance), the kubectl it runs and staticcheck (for
# make verify) only when named. Each lands in $OUT (default _output/bin at
# the repository root) with a .stamp recording the module version it was built
# from; a binary whose stamp matches is not built again.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
OUT=${OUT:-$root/_output/bin}
mkdir -p "$OUT"
export GOFLAGS=-mod=mod CGO_ENABLED=0

# Kubernetes binaries report the version they were built from, as a release
# build does (user agents, /version, kubernetes_build_info).
KUBE_VERSION=$(sed -n 's#^require k8s.io/kubernetes \(v[0-9.]*\)$#\1#p' "$here/k8s/go.mod")
VPKG=k8s.io/component-base/version
KUBE_MINOR=$(echo "$KUBE_VERSION" | cut -d. -f2)
KUBE_LDFLAGS="-X $VPKG.gitVersion=$KUBE_VERSION -X $VPKG.gitMajor=1 -X $VPKG.gitMinor=$KUBE_MINOR -X $VPKG.gitTreeState=clean"

# build DIR PKG NAME [LDFLAGS]: build PKG inside module DIR as $OUT/NAME
# unless current.
build() {
	local dir=$1 pkg=$2 name=$3 ldflags=${4:-}
	# The stamp hashes the module's go.mod, go.sum and the link flags: any
	# version change rebuilds.
	local want
	want=$( (cat "$here/$dir/go.mod" "$here/$dir/go.sum"; echo "$ldflags") | sha256sum | cut -c1-16)
	if [[ -x "$OUT/$name" && "$(cat "$OUT/$name.stamp" 2>/dev/null)" == "$want" ]]; then
		echo "hack/tools: $name is current"
		return
	fi
	echo "hack/tools: building $name ($pkg)"
	local gocmd=(go build)
	[[ $name == *.test ]] && gocmd=(go test -c) # a test binary: the package's _test.go files hold the suite
	(cd "$here/$dir" && "${gocmd[@]}" -trimpath -ldflags "$ldflags" -o "$OUT/$name.tmp" "$pkg")
	mv "$OUT/$name.tmp" "$OUT/$name"
	echo "$want" >"$OUT/$name.stamp"
}

want=("$@")
[[ ${#want[@]} -gt 0 ]] || want=(etcd kube-apiserver kube-scheduler kube-controller-manager kwok)
for b in "${want[@]}"; do
	case $b in
	etcd) build etcd . etcd ;;
	kube-apiserver | kube-scheduler) build k8s "k8s.io/kubernetes/cmd/$b" "$b" "$KUBE_LDFLAGS" ;;
	kube-controller-manager) build k8s k8s.io/kubernetes/cmd/kube-controller-manager upstream-kube-controller-manager "$KUBE_LDFLAGS" ;;
	kwok) build kwok sigs.k8s.io/kwok/cmd/kwok kwok ;;
	# Upstream's cloud-controller-manager with the parity test provider (kcm's
	# source, so its hash is in the stamp).
	upstream-cloud-controller-manager) build ccm . "$b" "$KUBE_LDFLAGS -X main.providerSum=$(cat "$root"/test/parity/cloudprovider/*.go | sha256sum | cut -c1-16)" ;;
	# Its own module: the suite's test dependencies (ginkgo, gomega…) stay
	# out of the one the other binaries are built from.
	e2e.test) build e2e k8s.io/kubernetes/test/e2e e2e.test "$KUBE_LDFLAGS" ;;
	kubectl) build e2e k8s.io/kubernetes/cmd/kubectl kubectl "$KUBE_LDFLAGS" ;;
	# make e2e-node's real node and the programs of its images.
	kubelet | kube-proxy | kubeadm) build node "k8s.io/kubernetes/cmd/$b" "$b" "$KUBE_LDFLAGS" ;;
	agnhost) build node k8s.io/kubernetes/test/images/agnhost agnhost ;;
	coredns) build coredns . coredns ;;
	# containerd 2 with CDI, for e2e-node's --containerd (DRA specs).
	containerd | containerd-shim-runc-v2) build containerd "github.com/containerd/containerd/v2/cmd/$b" "$b" ;;
	pause) build pause . pause ;;
	# hack/verify.sh's linter, in its own module so that its dependencies
	# (golang.org/x/tools…) stay out of the product's and the others'.
	staticcheck) build lint honnef.co/go/tools/cmd/staticcheck staticcheck ;;
	*) echo "hack/tools: unknown binary $b" >&2; exit 2 ;;
	esac
done

# kwok's default stages (the set kwokctl uses) ship inside its module,
# which is in the module cache once kwok was built (not when only other
# binaries were asked for on a fresh machine: then this waits for kwok).
kwokdir=$(cd "$here/kwok" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok 2>/dev/null || true)
if [[ -n $kwokdir && -d $kwokdir ]]; then
	mkdir -p "$OUT/kwok-stages"
	for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
		pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
		install -m 0644 "$kwokdir/kustomize/stage/$f" "$OUT/kwok-stages/$(basename "$f")"
	done
fi
