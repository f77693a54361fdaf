package servicecidr

import (
	"errors"
	"slices"
	"testing"
	"time"

	networking "k8s.io/api/networking/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
)

func TestSyncNewServiceCIDR(t *testing.T) {
	f := newFixture(t, serviceCIDR("extra", "10.10.0.0/24"))
	writes, err := f.sync("extra")
	if err != nil || !slices.Equal(writes, []string{"patch", "patch/status"}) {
		t.Fatalf("writes %v, err %v; want the finalizer patch and the status apply", writes, err)
	}
	got := f.get("extra")
	if !slices.Equal(got.Finalizers, []string{Finalizer}) {
		t.Errorf("finalizers %v", got.Finalizers)
	}
	cond := apimeta.FindStatusCondition(got.Status.Conditions, networking.ServiceCIDRConditionReady)
	if cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != "" || cond.Message != "Kubernetes Service CIDR is ready" ||
		!cond.LastTransitionTime.Time.Equal(now) {
		t.Errorf("Ready condition %+v", cond)
	}
}

func TestSyncUpToDateWritesNothing(t *testing.T) {
	cidr := serviceCIDR("extra", "10.10.0.0/24")
	cidr.Finalizers = []string{"example.com/other", Finalizer}
	cidr.Status.Conditions = []metav1.Condition{{Type: networking.ServiceCIDRConditionReady, Status: metav1.ConditionTrue,
		Message: "Kubernetes Service CIDR is ready"}}
	f := newFixture(t, cidr)
	if writes, err := f.sync("extra"); err != nil || len(writes) != 0 {
		t.Fatalf("writes %v, err %v; want none", writes, err)
	}
}

// The kube-apiserver's own message on the default ServiceCIDR is replaced
// by the controller's, as upstream does.
func TestSyncDefaultServiceCIDRMessage(t *testing.T) {
	cidr := serviceCIDR("kubernetes", "10.0.0.0/24")
	cidr.Status.Conditions = []metav1.Condition{{Type: networking.ServiceCIDRConditionReady, Status: metav1.ConditionTrue,
		Message: "Kubernetes default Service CIDR is ready"}}
	f := newFixture(t, cidr)
	writes, err := f.sync("kubernetes")
	if err != nil || !slices.Equal(writes, []string{"patch", "patch/status"}) {
		t.Fatalf("writes %v, err %v", writes, err)
	}
}

func TestSyncDeleting(t *testing.T) {
	const blocked = "There are still IPAddresses referencing the ServiceCIDR, please remove them or create a new ServiceCIDR"
	tests := []struct {
		name       string
		objs       []runtime.Object
		deletedAgo time.Duration
		wantWrites []string
		wantReady  string // message of a Ready=False Terminating condition, "" for none
		wantAfter  bool   // requeued after the grace period
	}{
		{name: "an address holds it", deletedAgo: time.Minute,
			objs:       []runtime.Object{ipAddress("10.10.0.5", IPAllocatorManager)},
			wantWrites: []string{"patch/status"}, wantReady: blocked},
		{name: "no address, grace period over", deletedAgo: time.Minute,
			wantWrites: []string{"patch"}},
		{name: "no address, within the grace period", deletedAgo: 3 * time.Second, wantAfter: true},
		{name: "another manager's address", deletedAgo: time.Minute,
			objs:       []runtime.Object{ipAddress("10.10.0.5", "someone")},
			wantWrites: []string{"patch"}},
		{name: "the network address is no allocation", deletedAgo: time.Minute,
			objs:       []runtime.Object{ipAddress("10.10.0.0", IPAllocatorManager)},
			wantWrites: []string{"patch"}},
		{name: "the IPv4 broadcast address is no allocation", deletedAgo: time.Minute,
			objs:       []runtime.Object{ipAddress("10.10.0.255", IPAllocatorManager)},
			wantWrites: []string{"patch"}},
		{name: "another ServiceCIDR holds the address", deletedAgo: time.Minute,
			objs:       []runtime.Object{ipAddress("10.10.0.5", IPAllocatorManager), serviceCIDR("other", "10.10.0.0/25")},
			wantWrites: []string{"patch"}},
		{name: "an identical ServiceCIDR overlaps it", deletedAgo: time.Minute,
			objs:       []runtime.Object{ipAddress("10.10.0.5", IPAllocatorManager), serviceCIDR("twin", "10.10.0.0/24")},
			wantWrites: []string{"patch"}},
		{name: "a larger ServiceCIDR contains it", deletedAgo: time.Minute,
			objs:       []runtime.Object{ipAddress("10.10.0.200", IPAllocatorManager), serviceCIDR("parent", "10.0.0.0/8")},
			wantWrites: []string{"patch"}},
		{name: "an address of the other family holds nothing", deletedAgo: time.Minute,
			objs:       []runtime.Object{ipAddress("fd00::5", IPAllocatorManager)},
			wantWrites: []string{"patch"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs := append([]runtime.Object{deleting(serviceCIDR("extra", "10.10.0.0/24"), now.Add(-tc.deletedAgo))}, tc.objs...)
			f := newFixture(t, objs...)
			writes, err := f.sync("extra")
			if err != nil || !slices.Equal(writes, tc.wantWrites) {
				t.Fatalf("writes %v, err %v; want %v", writes, err, tc.wantWrites)
			}
			got := f.get("extra")
			cond := apimeta.FindStatusCondition(got.Status.Conditions, networking.ServiceCIDRConditionReady)
			switch {
			case tc.wantReady == "" && cond != nil:
				t.Errorf("condition %+v, want none", cond)
			case tc.wantReady != "" && (cond == nil || cond.Status != metav1.ConditionFalse ||
				cond.Reason != networking.ServiceCIDRReasonTerminating || cond.Message != tc.wantReady):
				t.Errorf("condition %+v", cond)
			}
			removed := slices.Equal(tc.wantWrites, []string{"patch"})
			if has := slices.Contains(got.Finalizers, Finalizer); has == removed {
				t.Errorf("finalizers %v", got.Finalizers)
			}
			if tc.wantAfter {
				// The key comes back when the ten seconds are over.
				f.clock.Step(7 * time.Second)
				deadline := time.Now().Add(5 * time.Second)
				for f.c.queue.Len() == 0 && time.Now().Before(deadline) {
					time.Sleep(10 * time.Millisecond)
				}
				if q := f.queued(); !slices.Equal(q, []string{"extra"}) {
					t.Errorf("queued %v after the grace period", q)
				}
			}
		})
	}
}

// A blocked deletion stays blocked without a second status write.
func TestSyncDeletingBlockedOnce(t *testing.T) {
	cidr := deleting(serviceCIDR("extra", "10.10.0.0/24"), now.Add(-time.Minute))
	cidr.Status.Conditions = []metav1.Condition{{Type: networking.ServiceCIDRConditionReady, Status: metav1.ConditionFalse,
		Reason: networking.ServiceCIDRReasonTerminating, Message: terminatingMessage}}
	f := newFixture(t, cidr, ipAddress("10.10.0.5", IPAllocatorManager))
	if writes, err := f.sync("extra"); err != nil || len(writes) != 0 {
		t.Fatalf("writes %v, err %v; want none", writes, err)
	}
}

func TestSyncStatusErrorEvent(t *testing.T) {
	f := newFixture(t, serviceCIDR("extra", "10.10.0.0/24"))
	f.client.PrependReactor("patch", "servicecidrs", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "status" {
			return true, nil, errors.New("boom")
		}
		return false, nil, nil
	})
	if _, err := f.sync("extra"); err == nil {
		t.Fatal("sync succeeded, want the status error")
	}
	select {
	case e := <-f.recorder.Events:
		if e != "Warning KubernetesServiceCIDRError The ServiceCIDR Status can not be set to Ready=True" {
			t.Errorf("event %q", e)
		}
	default:
		t.Error("no Event")
	}
}

func TestSyncGone(t *testing.T) {
	f := newFixture(t)
	if writes, err := f.sync("gone"); err != nil || len(writes) != 0 {
		t.Fatalf("writes %v, err %v", writes, err)
	}
}
