package pvcprotection

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2/ktesting"
	testclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/internal/controller/storageutil"
)

const ns = "ns"

var now = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

type claimOpt func(*v1.PersistentVolumeClaim)

func claim(name string, opts ...claimOpt) *v1.PersistentVolumeClaim {
	c := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("uid-" + name),
		Finalizers: []string{storageutil.PVCProtectionFinalizer}}}
	for _, o := range opts {
		o(c)
	}
	return c
}

func deleting(c *v1.PersistentVolumeClaim)    { c.DeletionTimestamp = &metav1.Time{Time: now} }
func noFinalizer(c *v1.PersistentVolumeClaim) { c.Finalizers = nil }
func bound(c *v1.PersistentVolumeClaim)       { c.Status.Phase = v1.ClaimBound }
func unusedCond(s v1.ConditionStatus) claimOpt {
	return func(c *v1.PersistentVolumeClaim) {
		c.Status.Conditions = append(c.Status.Conditions, v1.PersistentVolumeClaimCondition{Type: v1.PersistentVolumeClaimUnused, Status: s})
	}
}

type podOpt func(*v1.Pod)

func pod(name string, opts ...podOpt) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("uid-" + name)},
		Spec: v1.PodSpec{NodeName: "node"}}
	for _, o := range opts {
		o(p)
	}
	return p
}

func usesClaim(name string) podOpt {
	return func(p *v1.Pod) {
		p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: "v-" + name,
			VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: name}}})
	}
}

func ephemeralVol(vol string) podOpt {
	return func(p *v1.Pod) {
		p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: vol,
			VolumeSource: v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{}}})
	}
}

func unscheduled(p *v1.Pod) { p.Spec.NodeName = "" }
func succeeded(p *v1.Pod)   { p.Status.Phase = v1.PodSucceeded }
func shutDown(p *v1.Pod) {
	p.DeletionTimestamp = &metav1.Time{Time: now}
	p.DeletionGracePeriodSeconds = ptr.To[int64](0)
}

func ownedBy(p *v1.Pod) claimOpt {
	return func(c *v1.PersistentVolumeClaim) {
		c.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: p.UID, Controller: ptr.To(true)}}
	}
}

type fixture struct {
	c      *Controller
	client *fake.Clientset
}

// newFixture caches claims and cached pods in the informers; the fake
// client holds the claims, the cached pods and livePods.
func newFixture(t *testing.T, unused bool, claims []*v1.PersistentVolumeClaim, cached, live []*v1.Pod) *fixture {
	t.Helper()
	var objs []runtime.Object
	for _, c := range claims {
		objs = append(objs, c)
	}
	for _, p := range append(append([]*v1.Pod{}, cached...), live...) {
		objs = append(objs, p)
	}
	client := fake.NewClientset(objs...)
	f := informers.NewSharedInformerFactory(client, 0)
	_, ctx := ktesting.NewTestContext(t)
	c, err := NewController(ctx, Config{Name: "test", Client: client,
		PVCInformer: f.Core().V1().PersistentVolumeClaims(), PodInformer: f.Core().V1().Pods(),
		Clock: testclock.NewFakeClock(now), UnusedCondition: unused})
	if err != nil {
		t.Fatal(err)
	}
	for _, cl := range claims {
		if err := f.Core().V1().PersistentVolumeClaims().Informer().GetIndexer().Add(cl); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range cached {
		if err := c.podIndexer.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	client.ClearActions()
	return &fixture{c: c, client: client}
}

// writes returns the verbs and subresources of the client's writes, and
// the number of pod lists.
func (f *fixture) writes() (writes []string, lists int) {
	for _, a := range f.client.Actions() {
		switch a.GetVerb() {
		case "list":
			lists++
		case "get", "watch":
		default:
			w := a.GetVerb()
			if a.GetSubresource() != "" {
				w += "/" + a.GetSubresource()
			}
			writes = append(writes, w)
		}
	}
	return writes, lists
}

func (f *fixture) claim(t *testing.T, name string) *v1.PersistentVolumeClaim {
	t.Helper()
	c, err := f.client.CoreV1().PersistentVolumeClaims(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func hasFinalizer(c *v1.PersistentVolumeClaim) bool {
	for _, f := range c.Finalizers {
		if f == storageutil.PVCProtectionFinalizer {
			return true
		}
	}
	return false
}

func TestFinalizer(t *testing.T) {
	ephPod := pod("p", ephemeralVol("scratch"))
	tests := []struct {
		name          string
		claim         *v1.PersistentVolumeClaim
		cached, live  []*v1.Pod
		wantFinalizer bool
		wantLists     int
	}{
		{name: "added to a live claim", claim: claim("c", noFinalizer), wantFinalizer: true},
		{name: "live claim with finalizer untouched", claim: claim("c"), wantFinalizer: true},
		{name: "removed, no pods", claim: claim("c", deleting), wantLists: 1},
		{name: "kept for a cached scheduled pod", claim: claim("c", deleting), cached: []*v1.Pod{pod("p", usesClaim("c"))}, wantFinalizer: true},
		{name: "kept for a pod only the live list has", claim: claim("c", deleting), live: []*v1.Pod{pod("p", usesClaim("c"))}, wantFinalizer: true, wantLists: 1},
		{name: "removed despite an unscheduled pod", claim: claim("c", deleting), cached: []*v1.Pod{pod("p", unscheduled, usesClaim("c"))}, wantLists: 1},
		{name: "kept for a terminated scheduled pod", claim: claim("c", deleting), cached: []*v1.Pod{pod("p", succeeded, usesClaim("c"))}, wantFinalizer: true},
		{name: "removed, pod uses another claim", claim: claim("c", deleting), cached: []*v1.Pod{pod("p", usesClaim("other"))}, wantLists: 1},
		{name: "kept for the pod owning its ephemeral claim", claim: claim("p-scratch", deleting, ownedBy(ephPod)), cached: []*v1.Pod{ephPod}, wantFinalizer: true},
		{name: "removed when the ephemeral claim's pod was shut down", claim: claim("p-scratch", deleting, ownedBy(ephPod)),
			cached: []*v1.Pod{pod("p", ephemeralVol("scratch"), shutDown)}, wantLists: 1},
		{name: "removed when the pod does not own the colliding claim", claim: claim("p-scratch", deleting), cached: []*v1.Pod{ephPod}, wantLists: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, false, []*v1.PersistentVolumeClaim{tt.claim}, tt.cached, tt.live)
			_, ctx := ktesting.NewTestContext(t)
			if err := f.c.sync(ctx, ns+"/"+tt.claim.Name, newLivePods()); err != nil {
				t.Fatal(err)
			}
			if got := hasFinalizer(f.claim(t, tt.claim.Name)); got != tt.wantFinalizer {
				t.Errorf("finalizer present %v, want %v", got, tt.wantFinalizer)
			}
			if _, lists := f.writes(); lists != tt.wantLists {
				t.Errorf("%d live lists, want %d", lists, tt.wantLists)
			}
		})
	}
}

func TestUnusedCondition(t *testing.T) {
	tests := []struct {
		name       string
		claim      *v1.PersistentVolumeClaim
		cached     []*v1.Pod
		wantStatus v1.ConditionStatus
		wantReason string
		wantWrites int
	}{
		{name: "bound, no pods", claim: claim("c", bound), wantStatus: v1.ConditionTrue, wantReason: reasonUnused, wantWrites: 1},
		{name: "bound, unscheduled pod", claim: claim("c", bound), cached: []*v1.Pod{pod("p", unscheduled, usesClaim("c"))},
			wantStatus: v1.ConditionFalse, wantReason: reasonUsed, wantWrites: 1},
		{name: "bound, terminated pod", claim: claim("c", bound), cached: []*v1.Pod{pod("p", succeeded, usesClaim("c"))},
			wantStatus: v1.ConditionTrue, wantReason: reasonUnused, wantWrites: 1},
		{name: "already True", claim: claim("c", bound, unusedCond(v1.ConditionTrue)), wantStatus: v1.ConditionTrue},
		{name: "already False", claim: claim("c", bound, unusedCond(v1.ConditionFalse)), cached: []*v1.Pod{pod("p", usesClaim("c"))}, wantStatus: v1.ConditionFalse},
		{name: "False turns True", claim: claim("c", bound, unusedCond(v1.ConditionFalse)), wantStatus: v1.ConditionTrue, wantReason: reasonUnused, wantWrites: 1},
		{name: "pending claim left alone", claim: claim("c")},
		{name: "deleted claim left alone", claim: claim("c", bound, deleting), cached: []*v1.Pod{pod("p", usesClaim("c"))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, true, []*v1.PersistentVolumeClaim{tt.claim}, tt.cached, nil)
			_, ctx := ktesting.NewTestContext(t)
			if err := f.c.sync(ctx, ns+"/c", newLivePods()); err != nil {
				t.Fatal(err)
			}
			writes, _ := f.writes()
			if len(writes) != tt.wantWrites {
				t.Errorf("writes %v, want %d", writes, tt.wantWrites)
			}
			cond := findCondition(f.claim(t, "c").Status.Conditions, v1.PersistentVolumeClaimUnused)
			if tt.wantStatus == "" {
				if cond != nil {
					t.Errorf("unexpected condition %+v", cond)
				}
				return
			}
			if cond == nil || cond.Status != tt.wantStatus {
				t.Fatalf("condition %+v, want status %s", cond, tt.wantStatus)
			}
			if tt.wantWrites > 0 && (cond.Reason != tt.wantReason || !cond.LastTransitionTime.Time.Equal(now)) {
				t.Errorf("condition %+v, want reason %s at %v", cond, tt.wantReason, now)
			}
		})
	}
}

// TestBatchSharesLiveList: claims of one namespace processed in one batch,
// batchWorkers at a time, share one live pod list.
func TestBatchSharesLiveList(t *testing.T) {
	var claims []*v1.PersistentVolumeClaim
	for i := range 20 {
		claims = append(claims, claim(fmt.Sprintf("c%d", i), deleting))
	}
	f := newFixture(t, false, claims, nil, nil)
	_, ctx := ktesting.NewTestContext(t)
	for _, c := range claims {
		f.c.queue.Add(ns + "/" + c.Name)
	}
	if !f.c.processBatch(ctx) {
		t.Fatal("queue shut down")
	}
	writes, lists := f.writes()
	if lists != 1 || len(writes) != len(claims) {
		t.Errorf("%d lists and writes %v, want 1 list and %d updates", lists, writes, len(claims))
	}
	if n := f.c.queue.Len(); n != 0 {
		t.Errorf("%d keys left in the queue", n)
	}
}

// TestConflictRetried: a failed update puts the key back with backoff.
func TestConflictRetried(t *testing.T) {
	f := newFixture(t, false, []*v1.PersistentVolumeClaim{claim("a", noFinalizer)}, nil, nil)
	f.client.PrependReactor("update", "persistentvolumeclaims", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, context.DeadlineExceeded
	})
	_, ctx := ktesting.NewTestContext(t)
	f.c.queue.Add(ns + "/a")
	f.c.processBatch(ctx)
	if n := f.c.queue.NumRequeues(ns + "/a"); n != 1 {
		t.Errorf("%d requeues, want 1", n)
	}
}
