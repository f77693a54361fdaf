package signer

import (
	"context"
	"maps"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	core "k8s.io/client-go/testing"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"k8s.io/cluster-bootstrap/token/jws"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
)

const kubeconfig = `apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: dGVzdA==
    server: https://10.0.0.1:6443
  name: ""
contexts: null
current-context: ""
kind: Config
preferences: {}
users: null
`

var now = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

func clusterInfo(data map[string]string) *v1.ConfigMap {
	return &v1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-public", Name: "cluster-info", ResourceVersion: "1"},
		Data:       data,
	}
}

// token is a bootstrap token Secret as kubeadm creates it; expiration ""
// means none.
func token(id, secret, expiration string) *v1.Secret {
	s := &v1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: bootstrapapi.BootstrapTokenSecretPrefix + id},
		Type:       bootstrapapi.SecretTypeBootstrapToken,
		Data: map[string][]byte{
			bootstrapapi.BootstrapTokenIDKey:               []byte(id),
			bootstrapapi.BootstrapTokenSecretKey:           []byte(secret),
			bootstrapapi.BootstrapTokenUsageSigningKey:     []byte("true"),
			bootstrapapi.BootstrapTokenUsageAuthentication: []byte("true"),
			bootstrapapi.BootstrapTokenExtraGroupsKey:      []byte("system:bootstrappers:kubeadm:default-node-token"),
		},
	}
	if expiration != "" {
		s.Data[bootstrapapi.BootstrapTokenExpirationKey] = []byte(expiration)
	}
	return s
}

func sign(t *testing.T, id, secret string) string {
	t.Helper()
	sig, err := jws.ComputeDetachedSignature(kubeconfig, id, secret)
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

type fixture struct {
	c      *Controller
	client *fake.Clientset
	clock  *testingclock.FakeClock
}

// newFixture builds a controller whose caches hold objs (not started:
// tests fill the indexers).
func newFixture(t *testing.T, objs ...runtime.Object) *fixture {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	clk := testingclock.NewFakeClock(now)
	c, err := newController(ctx, "bootstrap-signer-controller", client, clk, DefaultOptions(),
		factory.Core().V1().Secrets(), factory.Core().V1().ConfigMaps())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.queue.ShutDown)
	for _, o := range objs {
		var err error
		switch o := o.(type) {
		case *v1.Secret:
			err = factory.Core().V1().Secrets().Informer().GetIndexer().Add(o)
		case *v1.ConfigMap:
			err = factory.Core().V1().ConfigMaps().Informer().GetIndexer().Add(o)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	client.ClearActions()
	return &fixture{c: c, client: client, clock: clk}
}

// written returns the data of the ConfigMap the sync updated, or nil if it
// wrote nothing; it fails on any other write.
func (f *fixture) written(t *testing.T) map[string]string {
	t.Helper()
	var data map[string]string
	for _, a := range f.client.Actions() {
		if a.GetVerb() == "list" || a.GetVerb() == "watch" {
			continue
		}
		u, ok := a.(core.UpdateAction)
		if !ok || a.GetResource().Resource != "configmaps" || data != nil {
			t.Fatalf("unexpected action %v", a)
		}
		data = u.GetObject().(*v1.ConfigMap).Data
	}
	return data
}

func TestSync(t *testing.T) {
	future := now.Add(time.Hour).Format(time.RFC3339)
	past := now.Add(-time.Hour).Format(time.RFC3339)
	notSigning := token("ghijkl", "ghijklghijklghij", "")
	notSigning.Data[bootstrapapi.BootstrapTokenUsageSigningKey] = []byte("false")
	otherType := token("mnopqr", "mnopqrmnopqrmnop", "")
	otherType.Type = v1.SecretTypeOpaque

	tests := []struct {
		name    string
		objs    []runtime.Object
		want    map[string]string // nil: no write
		wantErr bool
	}{
		{name: "no ConfigMap", objs: []runtime.Object{token("abcdef", "0123456789abcdef", "")}},
		{name: "no kubeconfig key", objs: []runtime.Object{clusterInfo(map[string]string{"other": "x"}), token("abcdef", "0123456789abcdef", "")}},
		{
			name: "signed with a usable token",
			objs: []runtime.Object{clusterInfo(map[string]string{"kubeconfig": kubeconfig}), token("abcdef", "0123456789abcdef", future)},
			want: map[string]string{"kubeconfig": kubeconfig, "jws-kubeconfig-abcdef": sign(t, "abcdef", "0123456789abcdef")},
		},
		{
			name: "already signed: no write",
			objs: []runtime.Object{
				clusterInfo(map[string]string{"kubeconfig": kubeconfig, "jws-kubeconfig-abcdef": sign(t, "abcdef", "0123456789abcdef")}),
				token("abcdef", "0123456789abcdef", ""),
			},
		},
		{
			name: "wrong signature replaced, other keys kept",
			objs: []runtime.Object{
				clusterInfo(map[string]string{"kubeconfig": kubeconfig, "extra": "kept", "jws-kubeconfig-abcdef": "forged"}),
				token("abcdef", "0123456789abcdef", ""),
			},
			want: map[string]string{"kubeconfig": kubeconfig, "extra": "kept", "jws-kubeconfig-abcdef": sign(t, "abcdef", "0123456789abcdef")},
		},
		{
			name: "signatures of expired, deleted, non-signing and foreign tokens removed",
			objs: []runtime.Object{
				clusterInfo(map[string]string{
					"kubeconfig":            kubeconfig,
					"jws-kubeconfig-abcdef": sign(t, "abcdef", "0123456789abcdef"),
					"jws-kubeconfig-zzzzzz": "deleted token",
					"jws-kubeconfig-expire": "expired token",
					"jws-kubeconfig-ghijkl": "not for signing",
					"jws-kubeconfig-mnopqr": "not a bootstrap token Secret",
				}),
				token("abcdef", "0123456789abcdef", ""),
				token("expire", "expireexpireexpi", past),
				notSigning,
				otherType,
			},
			want: map[string]string{"kubeconfig": kubeconfig, "jws-kubeconfig-abcdef": sign(t, "abcdef", "0123456789abcdef")},
		},
		{
			name: "malformed expiration: not signed",
			objs: []runtime.Object{clusterInfo(map[string]string{"kubeconfig": kubeconfig}), token("abcdef", "0123456789abcdef", "next week")},
		},
		{
			name: "two tokens",
			objs: []runtime.Object{
				clusterInfo(map[string]string{"kubeconfig": kubeconfig}),
				token("abcdef", "0123456789abcdef", ""),
				token("uvwxyz", "uvwxyzuvwxyzuvwx", future),
			},
			want: map[string]string{
				"kubeconfig":            kubeconfig,
				"jws-kubeconfig-abcdef": sign(t, "abcdef", "0123456789abcdef"),
				"jws-kubeconfig-uvwxyz": sign(t, "uvwxyz", "uvwxyzuvwxyzuvwx"),
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			f := newFixture(t, tc.objs...)
			err := f.c.sync(ctx, f.c.key)
			if (err != nil) != tc.wantErr {
				t.Fatalf("sync error = %v, want error %v", err, tc.wantErr)
			}
			if got := f.written(t); !maps.Equal(got, tc.want) {
				t.Errorf("written data = %v\nwant %v", got, tc.want)
			}
		})
	}
}

// TestSignatureVerifies checks the signature with the verification kubeadm
// join uses.
func TestSignatureVerifies(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, clusterInfo(map[string]string{"kubeconfig": kubeconfig}), token("abcdef", "0123456789abcdef", ""))
	if err := f.c.sync(ctx, f.c.key); err != nil {
		t.Fatal(err)
	}
	sig := f.written(t)["jws-kubeconfig-abcdef"]
	if !jws.DetachedTokenIsValid(sig, kubeconfig, "abcdef", "0123456789abcdef") {
		t.Errorf("signature %q does not verify", sig)
	}
	if jws.DetachedTokenIsValid(sig, kubeconfig+" ", "abcdef", "0123456789abcdef") {
		t.Errorf("signature verifies for other content")
	}
}

// TestRequeuedAtExpiry: a sync queues the ConfigMap again for the first
// expiry of a signing token.
func TestRequeuedAtExpiry(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, clusterInfo(map[string]string{"kubeconfig": kubeconfig}),
		token("abcdef", "0123456789abcdef", now.Add(time.Hour).Format(time.RFC3339)),
		token("uvwxyz", "uvwxyzuvwxyzuvwx", now.Add(10*time.Minute).Format(time.RFC3339)),
		token("noexpi", "noexpinoexpinoex", ""))
	if err := f.c.sync(ctx, f.c.key); err != nil {
		t.Fatal(err)
	}
	if n := f.c.queue.Len(); n != 0 {
		t.Fatalf("queue has %d keys right after the sync", n)
	}
	f.clock.Step(10*time.Minute - time.Second)
	if n := f.c.queue.Len(); n != 0 {
		t.Fatalf("queued %d keys before the first expiry", n)
	}
	f.clock.Step(time.Second)
	deadline := time.Now().Add(10 * time.Second)
	for f.c.queue.Len() != 1 {
		if time.Now().After(deadline) {
			t.Fatal("not requeued at the first expiry")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestUpdateErrors(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		wantErr bool
	}{
		{name: "conflict: the next event syncs", err: apiConflict()},
		{name: "gone", err: apiNotFound()},
		{name: "server error: retried", err: context.DeadlineExceeded, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			f := newFixture(t, clusterInfo(map[string]string{"kubeconfig": kubeconfig}), token("abcdef", "0123456789abcdef", ""))
			f.client.PrependReactor("update", "configmaps", func(core.Action) (bool, runtime.Object, error) { return true, nil, tc.err })
			if err := f.c.sync(ctx, f.c.key); (err != nil) != tc.wantErr {
				t.Errorf("sync error = %v, want error %v", err, tc.wantErr)
			}
		})
	}
}
