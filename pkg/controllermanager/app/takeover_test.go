package app

import (
	"context"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

// heldLease is a Lease other holds, renewed now, for duration seconds.
func heldLease(duration int32, transitions int32) *coordinationv1.Lease {
	now := metav1.NowMicro()
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: testLease},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("other"), LeaseDurationSeconds: ptr.To(duration),
			RenewTime: &now, AcquireTime: &now, LeaseTransitions: ptr.To(transitions)},
	}
}

func leaseOf(t *testing.T, client kubernetes.Interface) *coordinationv1.Lease {
	t.Helper()
	lease, err := client.CoordinationV1().Leases(testNamespace).Get(context.Background(), testLease, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return lease
}

// A leader that died leaves its Lease unrenewed: the standby takes it over
// once it has read the same record for the Lease's duration, at a read made
// just then, not up to a retry period and its jitter later.
func TestStandbyTakesOverALeaseNobodyRenews(t *testing.T) {
	client := fake.NewClientset(heldLease(1, 4))
	e := testElection(t, client, nil, nil)
	// client-go wants the renew deadline above 1.2 retry periods.
	e.config.RetryPeriod.Duration, e.config.RenewDeadline.Duration = time.Second, 1500*time.Millisecond
	begin := time.Now()
	started, _ := campaign(t, e)
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("not leading 10s after the Lease's holder stopped renewing it")
	}
	// The first read counts from begin: the Lease's second. Reads a retry
	// period apart would notice the expiry only at 2 s at the earliest.
	if took := time.Since(begin); took < time.Second || took > 1800*time.Millisecond {
		t.Errorf("led %v after the first read of a 1s Lease, want between 1s and 1.8s", took)
	}
	lease := leaseOf(t, client)
	if h := holderOf(t, client); h != testID {
		t.Errorf("holder %q, want %q", h, testID)
	}
	if n := ptr.Deref(lease.Spec.LeaseTransitions, 0); n != 5 {
		t.Errorf("leaseTransitions %d, want 5", n)
	}
	if d := ptr.Deref(lease.Spec.LeaseDurationSeconds, 0); d != 2 {
		t.Errorf("leaseDurationSeconds %d, want this process's 2", d)
	}
}

// A leader that renews keeps its Lease however long the standby waits. (The
// record the lock reads holds renewTime to the second, as client-go's does,
// so renewals within a second look alike: the Lease lasts 2 s here.)
func TestStandbyLeavesARenewedLease(t *testing.T) {
	client := fake.NewClientset(heldLease(2, 0))
	ctx, cancel := context.WithCancel(context.Background())
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		for ctx.Err() == nil {
			lease := leaseOf(t, client)
			now := metav1.NowMicro()
			lease.Spec.RenewTime = &now
			if _, err := client.CoordinationV1().Leases(testNamespace).Update(ctx, lease, metav1.UpdateOptions{}); err != nil && ctx.Err() == nil {
				t.Errorf("renewing as the leader: %v", err)
				return
			}
			select {
			case <-ctx.Done():
			case <-time.After(300 * time.Millisecond):
			}
		}
	}()
	started, stop := campaign(t, testElection(t, client, nil, nil))
	select {
	case <-started:
		t.Error("a standby took over a Lease its holder renews")
	case <-time.After(5 * time.Second):
	}
	cancel()
	<-renewed
	if err := stop(); err != nil {
		t.Fatalf("election ended with %v", err)
	}
	if h := holderOf(t, client); h != "other" {
		t.Errorf("holder %q, want other", h)
	}
}
