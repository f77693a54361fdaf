package endpointutil

import (
	"reflect"
	"sort"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

func TestFindPort(t *testing.T) {
	always := v1.ContainerRestartPolicyAlways
	pod := &v1.Pod{Spec: v1.PodSpec{
		Containers: []v1.Container{{Ports: []v1.ContainerPort{
			{Name: "http", ContainerPort: 8080, Protocol: v1.ProtocolTCP},
			{Name: "dns", ContainerPort: 5353, Protocol: v1.ProtocolUDP},
		}}},
		InitContainers: []v1.Container{
			{Name: "init", Ports: []v1.ContainerPort{{Name: "init-only", ContainerPort: 1, Protocol: v1.ProtocolTCP}}},
			{Name: "sidecar", RestartPolicy: &always, Ports: []v1.ContainerPort{{Name: "proxy", ContainerPort: 15001, Protocol: v1.ProtocolTCP}}},
		},
	}}
	for _, tc := range []struct {
		target   intstr.IntOrString
		protocol v1.Protocol
		want     int
		wantErr  bool
	}{
		{intstr.FromInt32(9376), v1.ProtocolTCP, 9376, false},
		{intstr.FromString("http"), v1.ProtocolTCP, 8080, false},
		{intstr.FromString("http"), v1.ProtocolUDP, 0, true}, // protocol must match
		{intstr.FromString("dns"), v1.ProtocolUDP, 5353, false},
		{intstr.FromString("proxy"), v1.ProtocolTCP, 15001, false}, // sidecar
		{intstr.FromString("init-only"), v1.ProtocolTCP, 0, true},  // plain init container
		{intstr.FromString("missing"), v1.ProtocolTCP, 0, true},
	} {
		got, err := FindPort(pod, &v1.ServicePort{TargetPort: tc.target, Protocol: tc.protocol})
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("FindPort(%v/%s) = %d, %v; want %d, err %v", tc.target.String(), tc.protocol, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestShouldPodBeInEndpoints(t *testing.T) {
	now := metav1.Now()
	withIP := v1.PodStatus{PodIP: "10.0.0.1", PodIPs: []v1.PodIP{{IP: "10.0.0.1"}}}
	for _, tc := range []struct {
		name        string
		pod         v1.Pod
		terminating bool
		want        bool
	}{
		{"running with IP", v1.Pod{Status: withIP}, false, true},
		{"no IP", v1.Pod{}, true, false},
		{"succeeded", v1.Pod{Status: v1.PodStatus{Phase: v1.PodSucceeded, PodIP: "10.0.0.1"}}, true, false},
		{"failed", v1.Pod{Status: v1.PodStatus{Phase: v1.PodFailed, PodIP: "10.0.0.1"}}, true, false},
		{"terminating, excluded", v1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}, Status: withIP}, false, false},
		{"terminating, included", v1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}, Status: withIP}, true, true},
	} {
		if got := ShouldPodBeInEndpoints(&tc.pod, tc.terminating); got != tc.want {
			t.Errorf("%s: got %v", tc.name, got)
		}
	}
}

func TestShouldSetHostname(t *testing.T) {
	svc := &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"}}
	pod := func(host, sub, ns string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns}, Spec: v1.PodSpec{Hostname: host, Subdomain: sub}}
	}
	if !ShouldSetHostname(pod("h", "web", "ns"), svc) {
		t.Error("hostname with matching subdomain not set")
	}
	for _, p := range []*v1.Pod{pod("", "web", "ns"), pod("h", "other", "ns"), pod("h", "web", "other")} {
		if ShouldSetHostname(p, svc) {
			t.Errorf("hostname set for %+v", p.Spec)
		}
	}
}

func TestServicesForPodChange(t *testing.T) {
	f := informers.NewSharedInformerFactory(fake.NewSimpleClientset(), 0)
	inf := f.Core().V1().Services().Informer()
	if err := AddServiceSelectorIndex(inf); err != nil {
		t.Fatal(err)
	}
	svc := func(name string, sel map[string]string) *v1.Service {
		return &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Spec: v1.ServiceSpec{Selector: sel}}
	}
	for _, s := range []*v1.Service{
		svc("web", map[string]string{"app": "web"}),
		svc("web-canary", map[string]string{"app": "web", "track": "canary"}),
		svc("db", map[string]string{"app": "db"}),
		svc("all", map[string]string{}), // empty selector: every pod
		svc("none", nil),                // no selector: no pod
		{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "web"}, Spec: v1.ServiceSpec{Selector: map[string]string{"app": "web"}}},
	} {
		if err := inf.GetIndexer().Add(s); err != nil {
			t.Fatal(err)
		}
	}
	pod := func(rv string, lbls map[string]string, ready bool, ip string) *v1.Pod {
		status := v1.ConditionFalse
		if ready {
			status = v1.ConditionTrue
		}
		return &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", ResourceVersion: rv, Labels: lbls},
			Status: v1.PodStatus{
				Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: status}},
				PodIPs:     []v1.PodIP{{IP: ip}},
			},
		}
	}
	web := map[string]string{"app": "web"}
	canary := map[string]string{"app": "web", "track": "canary"}
	db := map[string]string{"app": "db"}
	for _, tc := range []struct {
		name     string
		old, cur *v1.Pod
		want     []string
	}{
		{"add", nil, pod("1", canary, false, ""), []string{"ns/all", "ns/web", "ns/web-canary"}},
		{"delete", pod("1", db, false, ""), nil, []string{"ns/all", "ns/db"}},
		{"resync", pod("1", web, true, "a"), pod("1", web, false, "b"), nil},
		{"nothing relevant", pod("1", web, true, "a"), pod("2", web, true, "a"), nil},
		{"ready", pod("1", web, false, "a"), pod("2", web, true, "a"), []string{"ns/all", "ns/web"}},
		{"IP", pod("1", web, true, "a"), pod("2", web, true, "b"), []string{"ns/all", "ns/web"}},
		// Labels only: the Services that gained or lost the pod.
		{"relabelled", pod("1", web, true, "a"), pod("2", canary, true, "a"), []string{"ns/web-canary"}},
		{"moved", pod("1", web, true, "a"), pod("2", db, true, "a"), []string{"ns/db", "ns/web"}},
		// Labels and endpoint: every Service before or after.
		{"relabelled and ready", pod("1", web, false, "a"), pod("2", canary, true, "a"), []string{"ns/all", "ns/web", "ns/web-canary"}},
	} {
		got, err := ServicesForPodChange(inf.GetIndexer(), tc.old, tc.cur)
		if err != nil {
			t.Fatal(err)
		}
		keys := got.UnsortedList()
		sort.Strings(keys)
		if len(keys) == 0 {
			keys = nil
		}
		if !reflect.DeepEqual(keys, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, keys, tc.want)
		}
	}
}

func TestTriggerTimeTracker(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	svc := &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", CreationTimestamp: metav1.NewTime(t0)}}
	pod := func(name string, readyAt time.Time) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1.PodStatus{Conditions: []v1.PodCondition{
			{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(readyAt)},
		}}}
	}
	tr := NewTriggerTimeTracker()
	t1, t2, t3 := t0.Add(time.Second), t0.Add(2*time.Second), t0.Add(3*time.Second)
	steps := []struct {
		pods []*v1.Pod
		want time.Time
	}{
		{[]*v1.Pod{pod("a", t1)}, t0},                                        // first sync: the Service's creation
		{[]*v1.Pod{pod("a", t1)}, time.Time{}},                               // nothing moved
		{[]*v1.Pod{pod("a", t1), pod("b", t3)}, t3},                          // b became ready
		{[]*v1.Pod{pod("a", t2), pod("b", t3)}, t2},                          // a transitioned again
		{[]*v1.Pod{pod("a", t3), pod("c", t2)}, t2},                          // earliest of the changes
		{[]*v1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "x"}}}, time.Time{}}, // no Ready condition
	}
	for i, s := range steps {
		if got := tr.Compute(svc, s.pods); !got.Equal(s.want) {
			t.Errorf("step %d: got %v, want %v", i, got, s.want)
		}
	}
	tr.Delete("ns", "web")
	if got := tr.Compute(svc, nil); !got.Equal(t0) {
		t.Errorf("after Delete: got %v, want the creation time", got)
	}
}

func TestSliceTracker(t *testing.T) {
	slice := func(uid string, gen int64) *discovery.EndpointSlice {
		return &discovery.EndpointSlice{ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns", Name: uid, UID: types.UID(uid), Generation: gen,
			Labels: map[string]string{discovery.LabelServiceName: "web"},
		}}
	}
	tr := NewSliceTracker()
	if tr.Stale("ns", "web", nil) || !tr.ShouldSync(slice("a", 1)) || tr.Has(slice("a", 1)) {
		t.Fatal("an empty tracker knows something")
	}
	tr.Update(slice("a", 2))
	tr.Update(slice("b", 1))
	if tr.ShouldSync(slice("a", 2)) || !tr.ShouldSync(slice("a", 3)) {
		t.Error("ShouldSync: own write vs newer")
	}
	if !tr.Stale("ns", "web", []*discovery.EndpointSlice{slice("a", 1), slice("b", 1)}) {
		t.Error("older generation not stale")
	}
	if !tr.Stale("ns", "web", []*discovery.EndpointSlice{slice("a", 2)}) {
		t.Error("missing written slice not stale")
	}
	if tr.Stale("ns", "web", []*discovery.EndpointSlice{slice("a", 2), slice("b", 1), slice("c", 5)}) {
		t.Error("caught-up cache stale")
	}
	tr.ExpectDeletion(slice("b", 1))
	if !tr.Stale("ns", "web", []*discovery.EndpointSlice{slice("a", 2), slice("b", 1)}) {
		t.Error("deleted slice still cached, not stale")
	}
	if tr.Stale("ns", "web", []*discovery.EndpointSlice{slice("a", 2)}) {
		t.Error("deletion seen, still stale")
	}
	if !tr.HandleDeletion(slice("b", 1)) {
		t.Error("expected deletion reported unexpected")
	}
	if tr.HandleDeletion(slice("a", 2)) {
		t.Error("someone else's deletion reported expected")
	}
	if !tr.HandleDeletion(slice("z", 1)) {
		t.Error("untracked deletion reported unexpected")
	}
	tr.Update(slice("a", 3))
	tr.DeleteService("ns", "web")
	if tr.Has(slice("a", 3)) {
		t.Error("DeleteService kept slices")
	}
}

func TestDeepHashStringFollowsPointers(t *testing.T) {
	a := discovery.EndpointPort{Name: ptr.To("http"), Port: ptr.To(int32(80))}
	b := discovery.EndpointPort{Name: ptr.To("http"), Port: ptr.To(int32(80))}
	if DeepHashString(a) != DeepHashString(b) {
		t.Error("equal values hash differently")
	}
	b.Port = ptr.To(int32(81))
	if DeepHashString(a) == DeepHashString(b) {
		t.Error("different values hash equally")
	}
}
