# kcm: a from-scratch kube-controller-manager.
#
#   make run     local control plane (etcd, kube-apiserver, kube-scheduler,
#                kwok fake nodes) with this kube-controller-manager on it
#   make test    unit and integration tests (builds the test binaries first)
#   make verify  gofmt, go vet, staticcheck, import rules
#   make parity  every parity scenario on upstream and on kcm, diffed
#   make chaos   parity scenarios with faults on kcm's run (docs/CHAOS.md)
#   make bench   the same load on upstream and on kcm, figures side by side
#   make conformance  upstream's [Conformance] specs against kcm
#   make e2e-kubeadm  a kind-like kubeadm cluster running kcm's image (root)

SHELL := /usr/bin/env bash
OUT   := $(CURDIR)/_output
BIN   := $(OUT)/bin
KUBE_VERSION ?= v1.37.1
VERSION_PKG := k8s.io/component-base/version
LDFLAGS := -s -w \
	-X $(VERSION_PKG).gitVersion=$(KUBE_VERSION)-kcm \
	-X $(VERSION_PKG).gitMajor=1 -X $(VERSION_PKG).gitMinor=37 \
	-X $(VERSION_PKG).gitTreeState=clean
# go test's default 10-minute limit per package is too tight for
# test/chaos's TestFaultsQuick on a loaded 2-core machine (about 7 minutes
# alone, more beside the other packages).
GO_TEST_FLAGS ?= -count=1 -timeout=30m

export KUBEBUILDER_ASSETS := $(BIN)

.PHONY: all build tools e2e-test run test unit integration verify clean features golden bench parity chaos conformance e2e-node e2e-kubeadm

all: build

# Both binaries, kube-controller-manager and cloud-controller-manager,
# into $(BIN).
build:
	CGO_ENABLED=0 go build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/kube-controller-manager ./cmd/cloud-controller-manager

# Test binaries (etcd, kube-apiserver, kube-scheduler, upstream
# kube-controller-manager, kwok), built from the Go module proxy; skipped
# when already built at the pinned versions.
tools:
	hack/tools/build.sh

# Upstream's e2e suite and the kubectl it runs, only for the targets that
# run it (not make test).
e2e-test:
	hack/tools/build.sh e2e.test kubectl

# Built rather than `go run`, so Ctrl-C reaches localup directly and make
# does not report the interrupt as a failure.
run: build tools
	go build -o $(BIN)/localup ./hack/localup
	$(BIN)/localup --kcm $(BIN)/kube-controller-manager $(RUN_FLAGS)

test: build tools
	go test $(GO_TEST_FLAGS) ./...

unit:
	go test $(GO_TEST_FLAGS) -short ./cmd/... ./pkg/... ./internal/...

integration: build tools
	go test $(GO_TEST_FLAGS) ./test/...

verify:
	hack/verify.sh

# Each scenario of test/parity/scenarios on upstream and on kcm, normalised
# diff. PARITY_FLAGS e.g. --scenarios 'test/parity/scenarios/rootca-*.yaml'
# --keep, or --self-check (upstream against itself).
parity: build tools
	go run ./test/parity/cmd/parity $(PARITY_FLAGS)

# Parity under faults (test/chaos, docs/CHAOS.md): each scenario with a
# fault class (throttle, churn, compaction, tcp, restart, crash) on for
# kcm's run, diffed against upstream's calm run, with a counts table in
# _output/chaos/results.md. Every scenario under every fault is long: pick,
# e.g. CHAOS_FLAGS="--faults throttle,crash --control
# --scenarios 'test/parity/scenarios/job-*.yaml'".
chaos: build tools
	go run ./test/chaos/cmd/chaos $(CHAOS_FLAGS)

# Benchmark: upstream against ours under load, in one run (long; see
# docs/BENCHMARKS.md, "Running it"), e.g. make bench BENCH_FLAGS='--phases nodes'.
bench: build tools
	go run ./test/bench/cmd/bench $(BENCH_FLAGS)

# Upstream's [Conformance] specs of test/conformance/specs.txt on local
# control planes with kcm (CONFORMANCE_FLAGS=--upstream: upstream's binary),
# e.g. CONFORMANCE_FLAGS="--focus 'Garbage collector'" (README, Conformance).
conformance: build tools e2e-test
	go run ./test/conformance/cmd/conformance $(CONFORMANCE_FLAGS)

# A real node on this machine (containerd, runc, a TLS-bootstrapped kubelet,
# kube-proxy and CoreDNS) joined to a local control plane run by kcm
# (E2E_NODE_FLAGS=--upstream: upstream's binary), checked, then torn down;
# root, installs Debian packages when missing (README, Real node). Built, not
# go run, so that Ctrl-C reaches it and its teardown runs.
e2e-node: build tools
	hack/tools/build.sh kubectl kubelet kube-proxy agnhost coredns pause
	$(if $(findstring --containerd,$(E2E_NODE_FLAGS)),hack/tools/build.sh containerd containerd-shim-runc-v2)
	CGO_ENABLED=0 go build -o $(BIN)/hostpathplugin ./test/node/cmd/hostpathplugin
	go build -o $(BIN)/e2e-node ./test/node/cmd/e2e-node
	$(BIN)/e2e-node $(E2E_NODE_FLAGS)

# A kind-like cluster made by kubeadm v1.37.1 on this machine (a
# control-plane node and a worker, each its own network, mount and UTS
# namespace, containerd and kubelet) with kcm's image in the
# kube-controller-manager static pod (E2E_KUBEADM_FLAGS=--upstream: kubeadm's
# default image), checked, swapped in place, then torn down; root, installs
# Debian packages when missing (README, kubeadm). Built, not go run, so that
# Ctrl-C reaches it and its teardown runs.
e2e-kubeadm: build tools
	hack/tools/build.sh kubeadm kubectl kubelet kube-proxy agnhost coredns pause
	CGO_ENABLED=0 go build -o $(BIN)/hostpathplugin ./test/node/cmd/hostpathplugin
	go build -o $(BIN)/e2e-kubeadm ./test/kubeadm/cmd/e2e-kubeadm
	$(BIN)/e2e-kubeadm $(E2E_KUBEADM_FLAGS)

# Regenerates pkg/features from upstream's feature gates.
features:
	cd hack/tools/k8s && go run ./gen-features -o ../../../pkg/features/zz_generated_upstream.go

# Prints what upstream's code computes for the golden tests' inputs (the
# testdata/golden-*.json files that the tests and these generators both
# read), to check or update the values the tests expect.
golden:
	cd hack/tools/k8s && for p in daemonsetgolden deployhash endpointsgolden mirroringgolden; do \
		echo "== $$p"; go run ./$$p || exit 1; done

clean:
	rm -rf $(OUT)
