package tokencleaner

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	core "k8s.io/client-go/testing"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
)

var now = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

// token is a bootstrap token Secret as kubeadm creates it; expiration ""
// means none.
func token(id, expiration string) *v1.Secret {
	s := &v1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: bootstrapapi.BootstrapTokenSecretPrefix + id, UID: types.UID("uid-" + id)},
		Type:       bootstrapapi.SecretTypeBootstrapToken,
		Data: map[string][]byte{
			bootstrapapi.BootstrapTokenIDKey:               []byte(id),
			bootstrapapi.BootstrapTokenSecretKey:           []byte("0123456789abcdef"),
			bootstrapapi.BootstrapTokenUsageSigningKey:     []byte("true"),
			bootstrapapi.BootstrapTokenUsageAuthentication: []byte("true"),
		},
	}
	if expiration != "" {
		s.Data[bootstrapapi.BootstrapTokenExpirationKey] = []byte(expiration)
	}
	return s
}

type fixture struct {
	c       *Controller
	client  *fake.Clientset
	clock   *testingclock.FakeClock
	factory informers.SharedInformerFactory
}

func newFixture(t *testing.T, objs ...runtime.Object) *fixture {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	clk := testingclock.NewFakeClock(now)
	c, err := newController(ctx, "token-cleaner-controller", client, clk, "kube-system", factory.Core().V1().Secrets())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.queue.ShutDown)
	for _, o := range objs {
		if err := factory.Core().V1().Secrets().Informer().GetIndexer().Add(o); err != nil {
			t.Fatal(err)
		}
	}
	client.ClearActions()
	return &fixture{c: c, client: client, clock: clk, factory: factory}
}

// deleted returns the Secret the sync deleted ("" if none), checking the
// UID precondition; it fails on any other action.
func (f *fixture) deleted(t *testing.T) string {
	t.Helper()
	name := ""
	for _, a := range f.client.Actions() {
		d, ok := a.(core.DeleteAction)
		if !ok || name != "" {
			t.Fatalf("unexpected action %v", a)
		}
		name = d.GetName()
		if p := d.GetDeleteOptions().Preconditions; p == nil || p.UID == nil || string(*p.UID) != "uid-"+name[len("bootstrap-token-"):] {
			t.Errorf("delete of %s without its UID precondition: %+v", name, p)
		}
	}
	return name
}

func TestSync(t *testing.T) {
	opaque := token("opaque", now.Add(-time.Hour).Format(time.RFC3339))
	opaque.Type = v1.SecretTypeOpaque
	tests := []struct {
		name        string
		secret      *v1.Secret
		wantDeleted bool
		wantRequeue time.Duration
	}{
		{name: "expired an hour ago", secret: token("abcdef", now.Add(-time.Hour).Format(time.RFC3339)), wantDeleted: true},
		{name: "expires now", secret: token("abcdef", now.Format(time.RFC3339)), wantDeleted: true},
		{name: "expires in an hour: requeued", secret: token("abcdef", now.Add(time.Hour).Format(time.RFC3339)), wantRequeue: time.Hour},
		{name: "no expiration", secret: token("abcdef", "")},
		{name: "malformed expiration: treated as expired", secret: token("abcdef", "in a week"), wantDeleted: true},
		{name: "not a bootstrap token", secret: opaque},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			f := newFixture(t, tc.secret)
			key := tc.secret.Namespace + "/" + tc.secret.Name
			if err := f.c.sync(ctx, key); err != nil {
				t.Fatalf("sync: %v", err)
			}
			if got := f.deleted(t); (got != "") != tc.wantDeleted {
				t.Errorf("deleted %q, want deletion %v", got, tc.wantDeleted)
			}
			if tc.wantRequeue == 0 {
				return
			}
			f.clock.Step(tc.wantRequeue - time.Second)
			if f.c.queue.Len() != 0 {
				t.Fatal("requeued before the expiry")
			}
			f.clock.Step(time.Second)
			if err := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
				return f.c.queue.Len() == 1, nil
			}); err != nil {
				t.Fatal("not requeued at the expiry")
			}
		})
	}
}

func TestSyncGoneSecret(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	if err := f.c.sync(ctx, "kube-system/bootstrap-token-abcdef"); err != nil {
		t.Fatal(err)
	}
	if got := f.deleted(t); got != "" {
		t.Errorf("deleted %q", got)
	}
}

func TestDeleteErrors(t *testing.T) {
	gr := schema.GroupResource{Resource: "secrets"}
	tests := []struct {
		name    string
		err     error
		wantErr bool
	}{
		{name: "already gone", err: apierrors.NewNotFound(gr, "bootstrap-token-abcdef")},
		{name: "replaced (UID precondition)", err: apierrors.NewConflict(gr, "bootstrap-token-abcdef", nil)},
		{name: "server error: retried", err: apierrors.NewInternalError(context.DeadlineExceeded), wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			f := newFixture(t, token("abcdef", now.Add(-time.Hour).Format(time.RFC3339)))
			f.client.PrependReactor("delete", "secrets", func(core.Action) (bool, runtime.Object, error) { return true, nil, tc.err })
			if err := f.c.sync(ctx, "kube-system/bootstrap-token-abcdef"); (err != nil) != tc.wantErr {
				t.Errorf("sync error = %v, want error %v", err, tc.wantErr)
			}
		})
	}
}

// TestRun drives the controller through informers on the fake clock: an
// expired token goes at once, one expiring later goes when the clock
// reaches its expiry (not before), one without expiration and other
// Secrets stay.
func TestRun(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	later := now.Add(time.Hour)
	opaque := token("opaque", now.Add(-time.Hour).Format(time.RFC3339))
	opaque.Type = v1.SecretTypeOpaque
	elsewhere := token("elsewh", now.Add(-time.Hour).Format(time.RFC3339))
	elsewhere.Namespace = "default"
	client := fake.NewClientset(token("expird", now.Add(-time.Hour).Format(time.RFC3339)),
		token("later1", later.Format(time.RFC3339)), token("foreva", ""), opaque, elsewhere)
	factory := informers.NewSharedInformerFactory(client, 0)
	clk := testingclock.NewFakeClock(now)
	c, err := newController(ctx, "token-cleaner-controller", client, clk, "kube-system", factory.Core().V1().Secrets())
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

	exists := func(ns, name string) bool {
		_, err := client.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return err == nil
	}
	poll := func(what string, cond func() bool) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) { return cond(), nil }); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	poll("expired token deleted", func() bool { return !exists("kube-system", "bootstrap-token-expird") })
	// Whenever later1's sync runs, before or after the clock moves, it
	// cannot delete the token before the clock reaches its expiry.
	clk.SetTime(later.Add(-time.Second))
	if !exists("kube-system", "bootstrap-token-later1") {
		t.Fatal("token deleted before its expiry")
	}
	clk.SetTime(later)
	poll("token deleted at its expiry", func() bool { return !exists("kube-system", "bootstrap-token-later1") })
	for _, s := range []struct{ ns, name string }{{"kube-system", "bootstrap-token-foreva"}, {"kube-system", "bootstrap-token-opaque"}, {"default", "bootstrap-token-elsewh"}} {
		if !exists(s.ns, s.name) {
			t.Errorf("%s/%s was deleted", s.ns, s.name)
		}
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancellation")
	}
}
