package bench

import (
	"context"
	"reflect"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/cmd/kube-controller-manager/app"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
)

func TestAllocateNodeCIDRs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"--allocate-node-cidrs=true"}, true},
		{[]string{"--allocate-node-cidrs"}, true},
		{[]string{"--allocate-node-cidrs=true", "--v=2", "--allocate-node-cidrs=false"}, false},
		{[]string{"--allocate-node-cidrs=false", "--allocate-node-cidrs=true"}, true},
	} {
		if got := AllocateNodeCIDRs(tc.args); got != tc.want {
			t.Errorf("AllocateNodeCIDRs(%v) = %v, want %v", tc.args, got, tc.want)
		}
	}
}

func scenario(t *testing.T, name string) Scenario {
	t.Helper()
	s, err := SelectScenarios([]string{name})
	if err != nil || len(s) != 1 {
		t.Fatalf("SelectScenarios(%s): %v, %v", name, s, err)
	}
	return s[0]
}

func TestRequirements(t *testing.T) {
	dep := scenario(t, ScenarioDeployments)
	var phases []string
	for _, p := range dep.Phases {
		phases = append(phases, p.Name)
	}
	if want := []string{"create", "scale", "roll", "delete", "idle"}; !reflect.DeepEqual(phases, want) {
		t.Fatalf("deployments phases %v, want %v", phases, want)
	}
	base := []string{names.ServiceAccount, names.NodeLifecycle, names.Deployment, names.ReplicaSet}
	withGC := append(append([]string(nil), base...), names.GarbageCollector)
	want := [][]string{base, base, base, withGC, withGC}
	if got := dep.Requirements(nil); !reflect.DeepEqual(got, want) {
		t.Errorf("deployments requirements:\n%v\nwant\n%v", got, want)
	}

	nodes := scenario(t, ScenarioNodes)
	if got := nodes.Requirements([]string{"--allocate-node-cidrs=true"}); !reflect.DeepEqual(got, [][]string{{names.NodeLifecycle, names.NodeIpam}}) {
		t.Errorf("nodes with CIDRs: %v", got)
	}
	if got := nodes.Requirements([]string{"--allocate-node-cidrs=true", "--allocate-node-cidrs=false"}); !reflect.DeepEqual(got, [][]string{{names.NodeLifecycle}}) {
		t.Errorf("nodes without CIDRs: %v", got)
	}
}

func TestSelectScenarios(t *testing.T) {
	s, err := SelectScenarios([]string{"nodes", " deployments", ""})
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 2 || s[0].Name != ScenarioDeployments || s[1].Name != ScenarioNodes {
		t.Errorf("got %v, want the run order deployments, nodes", s)
	}
	if _, err := SelectScenarios([]string{"pods"}); err == nil {
		t.Error("an unknown phase set was accepted")
	}
	if _, err := SelectScenarios([]string{""}); err == nil {
		t.Error("an empty selection was accepted")
	}
}

func TestMissingControllers(t *testing.T) {
	ctor := func(context.Context, *controllermanager.ControllerContext, string) (controllermanager.Controller, error) {
		return nil, nil
	}
	reg := controllermanager.Registry{
		names.Deployment: {Name: names.Deployment, New: ctor},
		names.ReplicaSet: {Name: names.ReplicaSet},
	}
	got := MissingControllers(reg, []string{names.Deployment, names.ReplicaSet, names.GarbageCollector})
	if want := []string{names.ReplicaSet, names.GarbageCollector}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}

	// Our real registry: whatever it holds today, the answer names only
	// controllers the phases need.
	need := []string{names.Deployment, names.ReplicaSet, names.NodeLifecycle, names.GarbageCollector}
	for _, m := range MissingControllers(app.NewRegistry(), need) {
		if d := app.NewRegistry()[m]; d != nil && d.New != nil {
			t.Errorf("%s reported missing but has a constructor", m)
		}
	}
}

func TestParseQPSSetting(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    []string
		wantErr bool
	}{
		{in: "default", want: nil},
		{in: "500", want: []string{"--kube-api-qps=500", "--kube-api-burst=500"}},
		{in: "100/200", want: []string{"--kube-api-qps=100", "--kube-api-burst=200"}},
		{in: "0", wantErr: true},
		{in: "fast", wantErr: true},
		{in: "100/x", wantErr: true},
	} {
		q, err := ParseQPSSetting(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("%q: err %v, wantErr %v", tc.in, err, tc.wantErr)
			continue
		}
		if err == nil && (!reflect.DeepEqual(q.Args(), tc.want) || q.Name != tc.in) {
			t.Errorf("%q: got %+v args %v, want %v", tc.in, q, q.Args(), tc.want)
		}
	}
}

func TestRolledOut(t *testing.T) {
	d := func(mut func(*appsv1.Deployment)) *appsv1.Deployment {
		x := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Generation: 3},
			Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](10)},
			Status:     appsv1.DeploymentStatus{ObservedGeneration: 3, Replicas: 10, UpdatedReplicas: 10, AvailableReplicas: 10},
		}
		if mut != nil {
			mut(x)
		}
		return x
	}
	for _, tc := range []struct {
		name string
		d    *appsv1.Deployment
		gen  int64
		want bool
	}{
		{"done", d(nil), 3, true},
		{"cache older than our write", d(nil), 4, false},
		{"generation not observed", d(func(x *appsv1.Deployment) { x.Status.ObservedGeneration = 2 }), 3, false},
		{"old replicas left", d(func(x *appsv1.Deployment) { x.Status.Replicas = 12 }), 3, false},
		{"not all updated", d(func(x *appsv1.Deployment) { x.Status.UpdatedReplicas = 7 }), 3, false},
		{"not all available", d(func(x *appsv1.Deployment) { x.Status.AvailableReplicas = 9 }), 3, false},
		{"other size", d(func(x *appsv1.Deployment) { x.Spec.Replicas = ptr.To[int32](5) }), 3, false},
	} {
		if got := RolledOut(tc.d, tc.gen, 10); got != tc.want {
			t.Errorf("%s: RolledOut = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestNodeInitialized(t *testing.T) {
	tainted := &corev1.Node{Spec: corev1.NodeSpec{PodCIDR: "10.244.1.0/24", Taints: []corev1.Taint{{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}}}}
	if ok, _ := NodeInitialized(tainted, true); ok {
		t.Error("a tainted node counted as initialized")
	}
	noCIDR := &corev1.Node{}
	if ok, why := NodeInitialized(noCIDR, true); ok || why != "no podCIDR" {
		t.Errorf("no podCIDR: %v %q", ok, why)
	}
	if ok, _ := NodeInitialized(noCIDR, false); !ok {
		t.Error("without --allocate-node-cidrs a podCIDR is not needed")
	}
}

func TestValidateAndWarnings(t *testing.T) {
	cfg := Config{
		OutDir: "x", Scenarios: Scenarios(), Binaries: []string{Upstream, Ours},
		QPSSettings: []QPSSetting{{Name: "default"}},
		Params:      Params{Nodes: 50, Deployments: 300, Replicas: 5, ScaleTo: 10, NewNodes: 100, Idle: time.Minute, PhaseTimeout: time.Minute, Workers: 16},
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if w := cfg.Warnings(); len(w) != 0 {
		t.Errorf("default sizes warn: %v", w)
	}
	cfg.Params.Nodes = 10
	if w := cfg.Warnings(); len(w) != 1 {
		t.Errorf("3900 pods on 10 nodes: warnings %v", w)
	}
	cfg.Binaries = []string{"kind"}
	cfg.Params.Workers = 0
	if err := cfg.Validate(); err == nil {
		t.Error("an unknown binary and no workers were accepted")
	}
}
