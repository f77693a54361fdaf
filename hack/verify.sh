#!/usr/bin/env bash
# Checks the conventions by machine: gofmt, go vet, staticcheck, and the import rule that
# product code never imports k8s.io/kubernetes (only hack/tools may).
set -euo pipefail
cd "$(dirname "$0")/.."
fail=0
unformatted=$(gofmt -l cmd pkg internal test hack/localup 2>/dev/null || true)
if [[ -n "$unformatted" ]]; then
	echo "not gofmt-formatted:"; echo "$unformatted"; fail=1
fi
go vet ./... || fail=1
# staticcheck (built from the module proxy by hack/tools/build.sh, its module
# hack/tools/lint) with the checks staticcheck.conf names: unused code,
# deprecated APIs, ineffective assignments and the like.
hack/tools/build.sh staticcheck >/dev/null
_output/bin/staticcheck ./... || fail=1
if grep -rln --include='*.go' '"k8s.io/kubernetes/' cmd pkg internal test 2>/dev/null; then
	echo "the files above import k8s.io/kubernetes: only hack/tools may"; fail=1
fi
# Feature gate names are pkg/features' typed constants (generated from
# upstream's table by hack/tools/k8s/gen-features): a misspelt constant does
# not compile, while a name declared or converted from a string anywhere else
# is caught, if at all, only when that code runs.
if grep -rnE --include='*.go' 'featuregate\.Feature( = "|\()' cmd pkg internal test hack/localup 2>/dev/null |
	grep -v '^pkg/features/'; then
	echo "the lines above declare a feature gate outside pkg/features: use its constant, features.X (a gate of kcm's own goes in pkg/features)"; fail=1
fi
for d in $(find cmd pkg internal -type d); do
	if ls "$d"/*.go >/dev/null 2>&1 && ! ls "$d"/doc.go >/dev/null 2>&1 && [[ "$d" != cmd/kube-controller-manager ]]; then
		echo "$d: every package has a doc.go"; fail=1
	fi
done
# Every workqueue runs on controller.QueueClock, which lets the queues'
# metric and heartbeat tickers share one timer per period (more than half
# of an idle kcm's wake-ups otherwise): queues are built from a config
# literal that names its Clock, never by a constructor without one.
if grep -rnoE --include='*.go' --exclude='*_test.go' 'workqueue\.New[A-Za-z]*' cmd pkg internal |
	grep -vE '(RateLimiter|WithConfig)$'; then
	echo "the lines above build a workqueue without a config: use a ...WithConfig constructor with Clock: controller.QueueClock(...)"; fail=1
fi
# A config literal may span lines: awk reads each from its opening to its
# first closing brace.
noclock=$(grep -rlE --include='*.go' --exclude='*_test.go' 'QueueConfig\[' cmd pkg internal | xargs -r awk '
	FNR == 1 { open = 0 }
	{
		text = $0
		if (!open && (i = index(text, "QueueConfig[")) > 0) { open = 1; start = FNR; lit = ""; text = substr(text, i) }
		if (open) {
			if ((j = index(text, "}")) > 0) {
				lit = lit substr(text, 1, j); open = 0
				if (lit !~ /Clock:/) print FILENAME ":" start
			} else lit = lit text
		}
	}' || true)
if [[ -n "$noclock" ]]; then
	echo "$noclock"; echo "the workqueue configs above name no Clock: add Clock: controller.QueueClock(...)"; fail=1
fi
# Tracked files: no executable binaries, nothing over 1 MB outside the
# allow-list (the PGO profile and generated tables may grow).
large_ok=(cmd/kube-controller-manager/default.pgo pkg/features/zz_generated_upstream.go)
while IFS= read -r -d '' f; do
	[[ -f "$f" ]] || continue
	magic=$(head -c 4 "$f" | od -An -tx1 | tr -d ' \n')
	case $magic in
	7f454c46 | cffaedfe | cefaedfe | feedface | feedfacf | 4d5a*)
		echo "$f: an executable binary is tracked"; fail=1; continue ;;
	esac
	if [[ -x "$f" && "$(head -c 2 "$f")" != "#!" ]]; then
		echo "$f: executable but not a script"; fail=1
	fi
	if (($(stat -c %s "$f") > 1048576)) && [[ ! " ${large_ok[*]} " == *" $f "* ]]; then
		echo "$f: tracked file over 1 MB (allow-list in hack/verify.sh)"; fail=1
	fi
done < <(git ls-files -z)
[[ $fail == 0 ]] && echo "verify: ok"
exit $fail
