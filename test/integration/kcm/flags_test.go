package kcm

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// runBinary runs the binary to completion (bounded) and returns its exit
// code and combined output.
func runBinary(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, binary, args...).CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out)
	case errors.As(err, &exit):
		return exit.ExitCode(), string(out)
	default:
		t.Fatalf("running %v: %v", args, err)
		return -1, ""
	}
}

func TestInvalidFlagsExitOneNamingTheFlag(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		args []string
		want string // must appear in the output
	}{
		{"unknown controller", []string{"--controllers=*,nosuchcontroller"}, `"nosuchcontroller" is not in the list of known controllers`},
		{"unknown disabled controller", []string{"--controllers=-nosuch"}, `"nosuch" is not in the list of known controllers`},
		{"negative qps", []string{"--kube-api-qps=-1"}, "--kube-api-qps=-1"},
		{"lease not above renew deadline", []string{"--leader-elect-lease-duration=5s", "--leader-elect-renew-deadline=10s"}, "--leader-elect-lease-duration=5s must be greater than --leader-elect-renew-deadline=10s"},
		{"malformed cluster cidr", []string{"--cluster-cidr=10.244.0.0/33"}, "--cluster-cidr=10.244.0.0/33"},
		{"malformed service range", []string{"--service-cluster-ip-range=not-a-cidr"}, "--service-cluster-ip-range=not-a-cidr"},
		{"three service ranges", []string{"--service-cluster-ip-range=10.0.0.0/16,fd00::/108,10.1.0.0/16"}, "--service-cluster-ip-range"},
		{"unreadable root ca", []string{"--root-ca-file=/nonexistent/ca.crt"}, "--root-ca-file=/nonexistent/ca.crt"},
		{"unreadable sa key", []string{"--service-account-private-key-file=/nonexistent/sa.key"}, "--service-account-private-key-file=/nonexistent/sa.key"},
		{"unreadable serving cert", []string{"--tls-cert-file=/nonexistent/tls.crt", "--tls-private-key-file=/nonexistent/tls.key"}, "--tls-cert-file=/nonexistent/tls.crt"},
		{"unreadable signing cert", []string{"--cluster-signing-cert-file=/nonexistent/ca.crt", "--cluster-signing-key-file=/nonexistent/ca.key"}, "--cluster-signing-cert-file=/nonexistent/ca.crt"},
		{"unknown feature gate", []string{"--feature-gates=NoSuchGate=true"}, "unrecognized feature gate: NoSuchGate"},
		{"zero workers", []string{"--concurrent-deployment-syncs=0"}, "concurrent-deployment-syncs must be greater than 0"},
		{"not a number", []string{"--kube-api-burst=lots"}, `"--kube-api-burst"`},
		{"unknown flag", []string{"--no-such-flag"}, "unknown flag: --no-such-flag"},
		{"positional argument", []string{"extra"}, "does not take any arguments"},
		{"allocate without cidr", []string{"--allocate-node-cidrs=true"}, "--allocate-node-cidrs=true requires --cluster-cidr"},
		{"in-tree cloud provider", []string{"--cloud-provider=aws"}, "--cloud-provider=aws"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// A kubeconfig is given so that only the flag under test is wrong.
			code, out := runBinary(t, append([]string{"--kubeconfig=" + kcmConf}, tc.args...)...)
			if code != 1 {
				t.Errorf("exit code = %d, want 1; output:\n%s", code, out)
			}
			if !strings.Contains(out, tc.want) {
				t.Errorf("output does not contain %q:\n%s", tc.want, out)
			}
			if strings.Contains(out, "panic") || strings.Contains(out, "goroutine ") {
				t.Errorf("output shows a panic:\n%s", out)
			}
		})
	}
}

func TestVersionAndHelp(t *testing.T) {
	t.Parallel()
	code, out := runBinary(t, "--version")
	if code != 0 || !strings.HasPrefix(out, "Kubernetes v") {
		t.Errorf("--version: exit %d, output %q", code, out)
	}
	code, out = runBinary(t, "--help")
	if code != 0 {
		t.Fatalf("--help: exit %d", code)
	}
	for _, section := range []string{"Debugging flags:", "Generic flags:", "Secure serving flags:", "Authentication flags:",
		"Authorization flags:", "Deployment-controller flags:", "Node-lifecycle-controller flags:", "Metrics flags:",
		"Logs flags:", "Misc flags:", "Global flags:"} {
		if !strings.Contains(out, section) {
			t.Errorf("--help lacks section %q", section)
		}
	}
}
