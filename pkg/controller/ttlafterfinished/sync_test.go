package ttlafterfinished

import (
	"context"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2/ktesting"
	testclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

func newTestController(t *testing.T, cached []*batchv1.Job, stored ...runtime.Object) (*Controller, *fake.Clientset, *testclock.FakeClock) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	client := fake.NewClientset(stored...)
	factory := informers.NewSharedInformerFactory(client, 0)
	clk := testclock.NewFakeClock(t0)
	c, err := newController(ctx, "ttl-after-finished-controller", client, clk, factory.Batch().V1().Jobs(), 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.queue.ShutDown)
	for _, j := range cached {
		if err := factory.Batch().V1().Jobs().Informer().GetIndexer().Add(j); err != nil {
			t.Fatal(err)
		}
	}
	return c, client, clk
}

func deletions(client *fake.Clientset) []clienttesting.DeleteActionImpl {
	var out []clienttesting.DeleteActionImpl
	for _, a := range client.Actions() {
		if d, ok := a.(clienttesting.DeleteActionImpl); ok {
			out = append(out, d)
		}
	}
	return out
}

func TestSyncDeletesExpiredJob(t *testing.T) {
	j := job("done", ttl(10), finished(batchv1.JobComplete, t0.Add(-10*time.Second)))
	c, client, _ := newTestController(t, []*batchv1.Job{j}, j)
	if err := c.sync(t.Context(), "ns/done"); err != nil {
		t.Fatal(err)
	}
	d := deletions(client)
	if len(d) != 1 || d[0].GetName() != "done" {
		t.Fatalf("deletions = %v", d)
	}
	opts := d[0].GetDeleteOptions()
	if opts.PropagationPolicy == nil || *opts.PropagationPolicy != metav1.DeletePropagationForeground {
		t.Errorf("propagation = %v, want Foreground", opts.PropagationPolicy)
	}
	if opts.Preconditions == nil || opts.Preconditions.UID == nil || *opts.Preconditions.UID != j.UID {
		t.Errorf("preconditions = %+v, want UID %s", opts.Preconditions, j.UID)
	}
}

func TestSyncRequeuesAtExpiry(t *testing.T) {
	j := job("done", ttl(10), finished(batchv1.JobComplete, t0.Add(-4*time.Second)))
	c, client, clk := newTestController(t, []*batchv1.Job{j}, j)
	if err := c.sync(t.Context(), "ns/done"); err != nil {
		t.Fatal(err)
	}
	if len(client.Actions()) != 0 {
		t.Fatalf("unexpected requests %v", client.Actions())
	}
	waitForQueueLen := func(n int) bool {
		deadline := time.Now().Add(2 * time.Second)
		for time.Now().Before(deadline) {
			if c.queue.Len() == n {
				return true
			}
			time.Sleep(5 * time.Millisecond)
		}
		return false
	}
	// Wait for the delaying queue to register its timer before stepping.
	deadline := time.Now().Add(2 * time.Second)
	for !clk.HasWaiters() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	clk.Step(5 * time.Second)
	if waitForQueueLen(1) {
		t.Fatal("requeued before the expiry")
	}
	clk.Step(time.Second)
	if !waitForQueueLen(1) {
		t.Fatal("not requeued at the expiry")
	}
}

func TestSyncRechecksFreshJob(t *testing.T) {
	stale := job("done", ttl(10), finished(batchv1.JobComplete, t0.Add(-time.Minute)))
	fresh := stale.DeepCopy()
	fresh.Spec.TTLSecondsAfterFinished = ptr.To[int32](3600)
	c, client, _ := newTestController(t, []*batchv1.Job{stale}, fresh)
	if err := c.sync(t.Context(), "ns/done"); err != nil {
		t.Fatal(err)
	}
	if d := deletions(client); len(d) != 0 {
		t.Fatalf("deleted a Job whose fresh TTL has not expired: %v", d)
	}
}

func TestSyncIgnoresJobsNotNeedingCleanup(t *testing.T) {
	deleting := job("deleting", ttl(0), finished(batchv1.JobComplete, t0.Add(-time.Minute)))
	deleting.DeletionTimestamp = ptr.To(metav1.NewTime(t0))
	running := job("running", ttl(0))
	noTTL := job("no-ttl", finished(batchv1.JobComplete, t0.Add(-time.Minute)))
	c, client, _ := newTestController(t, []*batchv1.Job{deleting, running, noTTL}, deleting, running, noTTL)
	for _, key := range []string{"ns/deleting", "ns/running", "ns/no-ttl", "ns/missing"} {
		if err := c.sync(context.Background(), key); err != nil {
			t.Errorf("%s: %v", key, err)
		}
	}
	if len(client.Actions()) != 0 {
		t.Errorf("unexpected requests %v", client.Actions())
	}
}
