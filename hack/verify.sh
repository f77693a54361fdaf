#!/usr/bin/env bash
# Checks the conventions by machine: gofmt, go vet, and the import rule that
# product code never imports k8s.io/kubernetes (only hack/tools may).
set -euo pipefail
cd "$(dirname "$0")/.."
fail=0
unformatted=$(gofmt -l cmd pkg internal test hack/localup 2>/dev/null || true)
if [[ -n "$unformatted" ]]; then
	echo "not gofmt-formatted:"; echo "$unformatted"; fail=1
fi
go vet ./... || fail=1
if grep -rln --include='*.go' '"k8s.io/kubernetes/' cmd pkg internal test 2>/dev/null; then
	echo "the files above import k8s.io/kubernetes: only hack/tools may"; fail=1
fi
for d in $(find cmd pkg internal -type d); do
	if ls "$d"/*.go >/dev/null 2>&1 && ! ls "$d"/doc.go >/dev/null 2>&1 && [[ "$d" != cmd/kube-controller-manager ]]; then
		echo "$d: every package has a doc.go"; fail=1
	fi
done
[[ $fail == 0 ]] && echo "verify: ok"
exit $fail
