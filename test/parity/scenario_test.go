package parity

import (
	"strings"
	"testing"
	"time"
)

// TestShippedScenarios loads every scenario in scenarios/ and checks that
// each names only known controllers.
func TestShippedScenarios(t *testing.T) {
	scenarios, err := LoadScenarios("scenarios/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	reg := DefaultRegistry()
	quick := 0
	for _, s := range scenarios {
		if s.Description == "" {
			t.Errorf("%s: no description", s.Path)
		}
		if _, err := missing(reg, s); err != nil {
			t.Errorf("%s: %v", s.Path, err)
		}
		if s.Quick {
			quick++
		}
	}
	if quick == 0 {
		t.Error("no quick scenario: make test would run none")
	}
}

func TestParseScenario(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		wantErr string
	}{{
		name: "every step kind",
		yaml: `
requires: [serviceaccount]
nodes: 2
objects: {apiVersion: v1, kind: Namespace, metadata: {name: a}}
steps:
- apply: [{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: a}}]
- patch: {kind: ConfigMap, namespace: a, name: c, patch: {data: {x: y}}}
- patch: {kind: ConfigMap, namespace: a, name: c, type: json, patch: [{op: remove, path: /data/x}]}
- scale: {kind: Deployment, namespace: a, name: d, replicas: 3}
- setImage: {kind: Deployment, namespace: a, name: d, container: app, image: nginx:2}
- delete: {kind: Deployment, namespace: a, name: d, propagation: Foreground}
- patch: {kind: Pod, namespace: a, selector: app=d, subresource: status, patch: {status: {phase: Failed}}}
- delete: {kind: Pod, namespace: a, selector: app=d}
- wait: {kind: Pod, namespace: a, selector: app=d, for: count=0, timeout: 2m}
- wait: {kind: Deployment, namespace: a, name: d, for: "condition=Available=False"}
- wait: {kind: Deployment, namespace: a, name: d, for: "jsonpath={.status.replicas}=3"}
- controllerManager: restart
- settle: {quiet: 5s, timeout: 30}
- nodes: 3
capture:
- kind: Deployment
- {kind: Event, sources: [deployment-controller], reasons: [ScalingReplicaSet], counts: false}
ignore: ["Pod:spec.nodeName"]
timeout: 10m
`,
	}, {
		name:    "unknown field",
		yaml:    "capture: [{kind: Pod}]\nstep: []\n",
		wantErr: `unknown field "step"`,
	}, {
		name:    "two actions in a step",
		yaml:    "capture: [{kind: Pod}]\nsteps: [{controllerManager: stop, settle: {}}]\n",
		wantErr: "exactly one action",
	}, {
		name:    "no action",
		yaml:    "capture: [{kind: Pod}]\nsteps: [{}]\n",
		wantErr: "exactly one action",
	}, {
		name:    "name and selector",
		yaml:    "capture: [{kind: Pod}]\nsteps: [{delete: {kind: Pod, namespace: a, name: p, selector: x=y}}]\n",
		wantErr: "either name or selector",
	}, {
		name:    "no capture",
		yaml:    "steps: []\n",
		wantErr: "capture",
	}, {
		name:    "bad wait condition",
		yaml:    "capture: [{kind: Pod}]\nsteps: [{wait: {kind: Pod, name: p, for: ready}}]\n",
		wantErr: `for "ready"`,
	}, {
		name:    "count with a name",
		yaml:    "capture: [{kind: Pod}]\nsteps: [{wait: {kind: Pod, name: p, for: count=1}}]\n",
		wantErr: "selector, not a name",
	}, {
		name:    "exists without a name",
		yaml:    "capture: [{kind: Pod}]\nsteps: [{wait: {kind: Pod, namespace: a}}]\n",
		wantErr: "needs a name",
	}, {
		name:    "bad propagation",
		yaml:    "capture: [{kind: Pod}]\nsteps: [{delete: {kind: Pod, name: p, propagation: foreground}}]\n",
		wantErr: "propagation",
	}, {
		name:    "bad controller-manager action",
		yaml:    "capture: [{kind: Pod}]\nsteps: [{controllerManager: reboot}]\n",
		wantErr: "reboot",
	}, {
		name:    "object without a name",
		yaml:    "capture: [{kind: Pod}]\nobjects: [{apiVersion: v1, kind: Namespace}]\n",
		wantErr: "metadata.name",
	}, {
		name:    "event options on another kind",
		yaml:    "capture: [{kind: Pod, counts: false}]\n",
		wantErr: "Event only",
	}, {
		name:    "event reasons on another kind",
		yaml:    "capture: [{kind: Pod, reasons: [Killing]}]\n",
		wantErr: "Event only",
	}, {
		name:    "zero nodes",
		yaml:    "capture: [{kind: Pod}]\nsteps: [{nodes: 0}]\n",
		wantErr: "at least 1",
	}, {
		name:    "bad ignore",
		yaml:    "capture: [{kind: Pod}]\nignore: [spec.nodeName]\n",
		wantErr: "Kind:path",
	}, {
		name:    "bad duration",
		yaml:    "capture: [{kind: Pod}]\ntimeout: soon\n",
		wantErr: "duration",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseScenario([]byte(tc.yaml))
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestScenarioDefaults(t *testing.T) {
	s, err := ParseScenario([]byte(`
objects:
- {apiVersion: v1, kind: Namespace, metadata: {name: a}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: a}}
steps:
- apply: {apiVersion: v1, kind: Namespace, metadata: {name: b}}
- settle: {quiet: 1.5}
capture: [{kind: ConfigMap}]
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.namespaces(), ","); got != "a,b" {
		t.Errorf("namespaces %q, want a,b", got)
	}
	if got := s.Steps[1].Settle.Quiet.or(time.Hour); got != 1500*time.Millisecond {
		t.Errorf("quiet %s, want 1.5s", got)
	}
	if got := s.Timeout.or(DefaultScenarioTimeout); got != DefaultScenarioTimeout {
		t.Errorf("timeout %s, want the default", got)
	}
}
