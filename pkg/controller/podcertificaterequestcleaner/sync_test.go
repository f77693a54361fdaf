package podcertificaterequestcleaner

import (
	"context"
	"testing"
	"time"

	certv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
)

var now = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

func pcr(name string, created time.Time) *certv1.PodCertificateRequest {
	return &certv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{
		Namespace: "ns", Name: name, UID: types.UID("uid-" + name), CreationTimestamp: metav1.NewTime(created),
	}}
}

type fixture struct {
	c      *Controller
	client *fake.Clientset
	clock  *testingclock.FakeClock
}

func newFixture(t *testing.T, objs ...runtime.Object) *fixture {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	clk := testingclock.NewFakeClock(now)
	c, err := newController(ctx, "podcertificaterequest-cleaner-controller", client, clk, MaxAge, factory.Certificates().V1().PodCertificateRequests())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.queue.ShutDown)
	for _, o := range objs {
		if err := factory.Certificates().V1().PodCertificateRequests().Informer().GetIndexer().Add(o); err != nil {
			t.Fatal(err)
		}
	}
	client.ClearActions()
	return &fixture{c: c, client: client, clock: clk}
}

func TestSync(t *testing.T) {
	tests := []struct {
		name        string
		created     time.Time
		wantDeleted bool
		wantRequeue time.Duration
	}{
		{name: "just created", created: now, wantRequeue: 15 * time.Minute},
		{name: "14 minutes old", created: now.Add(-14 * time.Minute), wantRequeue: time.Minute},
		{name: "15 minutes old", created: now.Add(-15 * time.Minute), wantDeleted: true},
		{name: "a day old", created: now.Add(-24 * time.Hour), wantDeleted: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			f := newFixture(t, pcr("req", tc.created))
			if err := f.c.sync(ctx, "ns/req"); err != nil {
				t.Fatal(err)
			}
			var deleted bool
			for _, a := range f.client.Actions() {
				d, ok := a.(core.DeleteAction)
				if !ok {
					t.Fatalf("unexpected action %v", a)
				}
				if p := d.GetDeleteOptions().Preconditions; p == nil || p.UID == nil || *p.UID != "uid-req" {
					t.Errorf("delete without the UID precondition: %+v", p)
				}
				deleted = true
			}
			if deleted != tc.wantDeleted {
				t.Errorf("deleted = %v, want %v", deleted, tc.wantDeleted)
			}
			if tc.wantRequeue == 0 {
				return
			}
			f.clock.Step(tc.wantRequeue - time.Second)
			if f.c.queue.Len() != 0 {
				t.Fatal("requeued before the deadline")
			}
			f.clock.Step(time.Second)
			if err := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
				return f.c.queue.Len() == 1, nil
			}); err != nil {
				t.Fatal("not requeued at the deadline")
			}
		})
	}
}

func TestSyncErrors(t *testing.T) {
	gr := schema.GroupResource{Group: "certificates.k8s.io", Resource: "podcertificaterequests"}
	tests := []struct {
		name    string
		err     error
		wantErr bool
	}{
		{name: "already gone", err: apierrors.NewNotFound(gr, "req")},
		{name: "replaced (UID precondition)", err: apierrors.NewConflict(gr, "req", nil)},
		{name: "server error: retried", err: apierrors.NewInternalError(context.DeadlineExceeded), wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			f := newFixture(t, pcr("req", now.Add(-time.Hour)))
			f.client.PrependReactor("delete", "podcertificaterequests", func(core.Action) (bool, runtime.Object, error) { return true, nil, tc.err })
			if err := f.c.sync(ctx, "ns/req"); (err != nil) != tc.wantErr {
				t.Errorf("sync error = %v, want error %v", err, tc.wantErr)
			}
		})
	}
	_, ctx := ktesting.NewTestContext(t)
	if err := newFixture(t).c.sync(ctx, "ns/gone"); err != nil {
		t.Errorf("sync of a request not in the cache: %v", err)
	}
}

// TestRun: through informers on the fake clock, an old request goes at
// once, a new one when the clock reaches 15 minutes after its creation.
func TestRun(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	client := fake.NewClientset(pcr("old", now.Add(-time.Hour)), pcr("new", now.Add(-time.Minute)))
	factory := informers.NewSharedInformerFactory(client, 0)
	clk := testingclock.NewFakeClock(now)
	c, err := newController(ctx, "podcertificaterequest-cleaner-controller", client, clk, MaxAge, factory.Certificates().V1().PodCertificateRequests())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Run(ctx)
	}()
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	gone := func(name string) func(context.Context) (bool, error) {
		return func(ctx context.Context) (bool, error) {
			_, err := client.CertificatesV1().PodCertificateRequests("ns").Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, err
		}
	}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, gone("old")); err != nil {
		t.Fatalf("old request: %v", err)
	}
	clk.SetTime(now.Add(14*time.Minute - time.Second))
	if ok, _ := gone("new")(ctx); ok {
		t.Fatal("new request deleted before 15 minutes")
	}
	clk.SetTime(now.Add(14 * time.Minute))
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, gone("new")); err != nil {
		t.Fatalf("new request: %v", err)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancellation")
	}
}
