package endpoints

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/internal/controller/endpointutil"
	"github.com/kcm-dev/kcm/internal/testutil/golden"
)

func goldenAddr(ip, node, pod string) v1.EndpointAddress {
	return v1.EndpointAddress{IP: ip, NodeName: ptr.To(node), TargetRef: &v1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: pod, UID: types.UID("uid-" + pod)}}
}

// goldenSubsetsInput is testdata/golden-subsets.json: per-address,
// per-port subsets as the controller builds them, which
// hack/tools/k8s/endpointsgolden reads too; goldenSubsets is that
// program's "subsets" output (upstream's RepackSubsets).
func goldenSubsetsInput(t *testing.T) []v1.EndpointSubset {
	return golden.Read[[]v1.EndpointSubset](t, "testdata/golden-subsets.json")
}

const goldenSubsets = `[{"addresses":[{"ip":"10.0.0.1","nodeName":"n2","targetRef":{"kind":"Pod","namespace":"ns","name":"b","uid":"uid-b"}},{"ip":"10.0.0.3","nodeName":"n1","targetRef":{"kind":"Pod","namespace":"ns","name":"a","uid":"uid-a"}}],"notReadyAddresses":[{"ip":"10.0.0.2","nodeName":"n1","targetRef":{"kind":"Pod","namespace":"ns","name":"c","uid":"uid-c"}}],"ports":[{"name":"dns","port":53,"protocol":"UDP"},{"name":"https","port":8443,"protocol":"TCP","appProtocol":"kubernetes.io/h2c"}]},{"addresses":[{"ip":"10.0.0.1","nodeName":"n2","targetRef":{"kind":"Pod","namespace":"ns","name":"b","uid":"uid-b"}},{"ip":"10.0.0.10","hostname":"d","nodeName":"n3","targetRef":{"kind":"Pod","namespace":"ns","name":"d","uid":"uid-d"}},{"ip":"10.0.0.3","nodeName":"n1","targetRef":{"kind":"Pod","namespace":"ns","name":"a","uid":"uid-a"}}],"notReadyAddresses":[{"ip":"10.0.0.2","nodeName":"n1","targetRef":{"kind":"Pod","namespace":"ns","name":"c","uid":"uid-c"}}],"ports":[{"name":"http","port":8080,"protocol":"TCP"}]}]`

func TestRepackMatchesUpstream(t *testing.T) {
	got, err := json.Marshal(repackSubsets(goldenSubsetsInput(t)))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != goldenSubsets {
		t.Errorf("repacked\n got %s\nwant %s", got, goldenSubsets)
	}
	// Repacking is idempotent.
	again, _ := json.Marshal(repackSubsets(repackSubsets(goldenSubsetsInput(t))))
	if string(again) != goldenSubsets {
		t.Errorf("repacked twice\n got %s", again)
	}
}

func TestRepackNotReadyWins(t *testing.T) {
	a := goldenAddr("10.0.0.1", "n", "a")
	p := v1.EndpointPort{Port: 80, Protocol: v1.ProtocolTCP}
	got := repackSubsets([]v1.EndpointSubset{
		{Addresses: []v1.EndpointAddress{a}, Ports: []v1.EndpointPort{p}},
		{NotReadyAddresses: []v1.EndpointAddress{a}, Ports: []v1.EndpointPort{p}},
	})
	if len(got) != 1 || len(got[0].Addresses) != 0 || len(got[0].NotReadyAddresses) != 1 {
		t.Errorf("got %+v", got)
	}
}

func addresses(n int, prefix string) []v1.EndpointAddress {
	out := make([]v1.EndpointAddress, n)
	for i := range out {
		out[i] = v1.EndpointAddress{IP: fmt.Sprintf("%s.%d.%d", prefix, i/250, i%250)}
	}
	return out
}

func count(subsets []v1.EndpointSubset) (ready, notReady []int) {
	for _, ss := range subsets {
		ready = append(ready, len(ss.Addresses))
		notReady = append(notReady, len(ss.NotReadyAddresses))
	}
	return ready, notReady
}

func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		ready, notReady         []int
		wantReady, wantNotReady []int
		truncated               bool
	}{
		{"at capacity", []int{600}, []int{400}, []int{600}, []int{400}, false},
		{"not-ready cut first", []int{500, 300}, []int{200, 100}, []int{500, 300}, []int{134, 66}, true},
		// Ready over capacity: proportional, rounded up, the last subset
		// gets what is left; every not-ready address goes.
		{"ready cut", []int{900, 300, 101}, []int{5, 0, 0}, []int{692, 231, 77}, []int{0, 0, 0}, true},
	} {
		var subsets []v1.EndpointSubset
		for i := range tc.ready {
			subsets = append(subsets, v1.EndpointSubset{Addresses: addresses(tc.ready[i], "10.1"), NotReadyAddresses: addresses(tc.notReady[i], "10.2")})
		}
		got := truncateSubsets(subsets)
		r, n := count(subsets)
		if got != tc.truncated || !reflect.DeepEqual(r, tc.wantReady) || !reflect.DeepEqual(n, tc.wantNotReady) {
			t.Errorf("%s: truncated %v, ready %v, not ready %v", tc.name, got, r, n)
		}
	}
}

func TestSyncCreatesUpdatesAndSkips(t *testing.T) {
	h := newHarness(t)
	h.add(service("web", func(s *v1.Service) { s.Labels = map[string]string{"team": "a"} }),
		pod("a", "web", true, "10.0.0.2"), pod("b", "web", false, "10.0.0.1"), pod("c", "web", true))
	if got := h.mustSync("web"); !reflect.DeepEqual(got, []string{"create"}) {
		t.Fatalf("writes %v", got)
	}
	e := h.endpoints("web")
	if want := map[string]string{"team": "a", LabelManagedBy: ControllerName}; !reflect.DeepEqual(e.Labels, want) {
		t.Errorf("labels %v", e.Labels)
	}
	if len(e.Subsets) != 1 || len(e.Subsets[0].Addresses) != 1 || e.Subsets[0].Addresses[0].IP != "10.0.0.2" ||
		len(e.Subsets[0].NotReadyAddresses) != 1 || e.Subsets[0].Ports[0].Port != 8080 {
		t.Errorf("subsets %+v", e.Subsets)
	}
	if _, ok := e.Annotations[v1.EndpointsLastChangeTriggerTime]; !ok {
		t.Error("no trigger time")
	}
	if got := h.mustSync("web"); len(got) != 0 {
		t.Errorf("no change: writes %v", got)
	}
	h.add(pod("b", "web", true, "10.0.0.1"))
	if got := h.mustSync("web"); !reflect.DeepEqual(got, []string{"update"}) {
		t.Errorf("b ready: writes %v", got)
	}
	if e := h.endpoints("web"); len(e.Subsets[0].Addresses) != 2 || len(e.Subsets[0].NotReadyAddresses) != 0 {
		t.Errorf("subsets %+v", e.Subsets)
	}
}

func TestStaleCacheWaitedFor(t *testing.T) {
	h := newHarness(t)
	h.add(service("web"), pod("a", "web", true, "10.0.0.1"))
	h.mustSync("web")
	h.add(pod("b", "web", true, "10.0.0.2"))
	if _, err := h.sync("web"); err != nil { // update; the cache keeps the old version
		t.Fatal(err)
	}
	h.add(pod("c", "web", true, "10.0.0.3"))
	verbs, err := h.sync("web")
	if err == nil || !strings.Contains(err.Error(), "endpoints informer cache is out of date") || len(verbs) != 0 {
		t.Fatalf("stale cache: writes %v, err %v", verbs, err)
	}
	h.catchUp()
	if got := h.mustSync("web"); !reflect.DeepEqual(got, []string{"update"}) {
		t.Errorf("caught up: writes %v", got)
	}
}

func TestHeadlessAndPublishNotReady(t *testing.T) {
	h := newHarness(t)
	h.add(service("db", func(s *v1.Service) {
		s.Spec.ClusterIP = v1.ClusterIPNone
		s.Spec.Ports = nil
		s.Spec.PublishNotReadyAddresses = true
	}))
	p := pod("db-0", "db", false, "10.0.0.1")
	p.Spec.Hostname, p.Spec.Subdomain = "db-0", "db"
	q := pod("db-1", "db", true, "10.0.0.2")
	now := metav1.Now()
	q.DeletionTimestamp = &now
	h.add(p, q)
	h.mustSync("db")
	e := h.endpoints("db")
	if _, ok := e.Labels[v1.IsHeadlessService]; !ok {
		t.Errorf("labels %v", e.Labels)
	}
	if len(e.Subsets) != 1 || len(e.Subsets[0].Addresses) != 2 || e.Subsets[0].Ports != nil || e.Subsets[0].Addresses[0].Hostname != "db-0" {
		t.Errorf("subsets %+v", e.Subsets)
	}
	// Not published: the unready pod is not ready, the terminating one
	// goes.
	h.add(service("db", func(s *v1.Service) { s.Spec.ClusterIP = v1.ClusterIPNone; s.Spec.Ports = nil }))
	h.mustSync("db")
	e = h.endpoints("db")
	if len(e.Subsets) != 1 || len(e.Subsets[0].Addresses) != 0 || len(e.Subsets[0].NotReadyAddresses) != 1 {
		t.Errorf("subsets %+v", e.Subsets)
	}
}

func TestOverCapacity(t *testing.T) {
	h := newHarness(t)
	h.add(service("big"))
	for i := 0; i < 1001; i++ {
		h.add(pod(fmt.Sprintf("p%04d", i), "big", true, fmt.Sprintf("10.1.%d.%d", i/250, i%250)))
	}
	h.mustSync("big")
	e := h.endpoints("big")
	if e.Annotations[v1.EndpointsOverCapacity] != truncated || len(e.Subsets[0].Addresses) != 1000 {
		t.Errorf("annotations %v, %d addresses", e.Annotations, len(e.Subsets[0].Addresses))
	}
	h.remove(pod("p0000", "big", true))
	h.remove(pod("p0001", "big", true))
	h.mustSync("big")
	e = h.endpoints("big")
	if _, ok := e.Annotations[v1.EndpointsOverCapacity]; ok || len(e.Subsets[0].Addresses) != 999 {
		t.Errorf("back under: annotations %v, %d addresses", e.Annotations, len(e.Subsets[0].Addresses))
	}
}

func TestServiceGoneDeletesEndpoints(t *testing.T) {
	h := newHarness(t)
	svc := service("web")
	h.add(svc, pod("a", "web", true, "10.0.0.1"))
	h.mustSync("web")
	h.remove(svc)
	if got := h.mustSync("web"); !reflect.DeepEqual(got, []string{"delete"}) {
		t.Errorf("writes %v", got)
	}
}

func TestIgnoredServices(t *testing.T) {
	h := newHarness(t)
	h.add(service("ext", func(s *v1.Service) { s.Spec.Type = v1.ServiceTypeExternalName }),
		service("manual", func(s *v1.Service) { s.Spec.Selector = nil }), pod("a", "ext", true, "10.0.0.1"))
	for _, name := range []string{"ext", "manual"} {
		if got := h.mustSync(name); len(got) != 0 {
			t.Errorf("%s: writes %v", name, got)
		}
	}
}

func TestLeftoverEndpointsQueued(t *testing.T) {
	h := newHarness(t)
	h.add(&v1.Endpoints{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "orphan"}},
		&v1.Endpoints{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lock", Annotations: map[string]string{resourcelock.LeaderElectionRecordAnnotationKey: "{}"}}})
	h.c.checkLeftoverEndpoints()
	if h.c.queue.Len() != 1 {
		t.Fatalf("queue %d", h.c.queue.Len())
	}
	key, _ := h.c.queue.Get()
	if key != "ns/orphan" {
		t.Errorf("key %s", key)
	}
}

func TestDualStackUsesFirstFamily(t *testing.T) {
	h := newHarness(t)
	h.add(service("web", func(s *v1.Service) { s.Spec.IPFamilies = []v1.IPFamily{v1.IPv6Protocol, v1.IPv4Protocol} }),
		pod("a", "web", true, "10.0.0.1", "fd00::0001"), pod("b", "web", true, "10.0.0.2"))
	h.mustSync("web")
	e := h.endpoints("web")
	if len(e.Subsets) != 1 || len(e.Subsets[0].Addresses) != 1 || e.Subsets[0].Addresses[0].IP != "fd00::1" {
		t.Errorf("subsets %+v", e.Subsets)
	}
}

// A write starts the Service's write spacing; a sync that writes nothing
// does not.
func TestWritesStartTheSpacing(t *testing.T) {
	h := newHarness(t)
	h.c.spacer = endpointutil.NewWriteSpacer(0, time.Hour)
	h.add(service("web"), pod("a", "web", false))
	if got := h.mustSync("web"); !reflect.DeepEqual(got, []string{"create"}) {
		t.Fatalf("writes %v", got)
	}
	if h.c.spacer.Delay(ns+"/web") == 0 {
		t.Error("the create started no spacing")
	}
	h.add(service("db"))
	h.add(&v1.Endpoints{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db", ResourceVersion: "1",
		Labels: map[string]string{LabelManagedBy: ControllerName}}})
	if got := h.mustSync("db"); len(got) != 0 {
		t.Fatalf("writes %v", got)
	}
	if d := h.c.spacer.Delay(ns + "/db"); d != 0 {
		t.Errorf("a sync without writes started a spacing of %v", d)
	}
}
