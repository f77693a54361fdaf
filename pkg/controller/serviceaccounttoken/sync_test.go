package serviceaccounttoken

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2/ktesting"
)

const testCA = "-----BEGIN CERTIFICATE-----\nca\n-----END CERTIFICATE-----\n"

var testKey = func() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
}()

func serviceAccount(name string, uid types.UID, secrets ...string) *v1.ServiceAccount {
	sa := &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: uid}}
	for _, s := range secrets {
		sa.Secrets = append(sa.Secrets, v1.ObjectReference{Name: s})
	}
	return sa
}

func tokenSecret(name, saName string, saUID types.UID, data map[string][]byte) *v1.Secret {
	s := &v1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name + "-uid"), ResourceVersion: "1",
			Annotations: map[string]string{v1.ServiceAccountNameKey: saName}},
		Type: v1.SecretTypeServiceAccountToken,
		Data: data,
	}
	if saUID != "" {
		s.Annotations[v1.ServiceAccountUIDKey] = string(saUID)
	}
	return s
}

// newTestController returns a controller whose caches and fake clientset
// both hold objs.
func newTestController(t *testing.T, objs ...runtime.Object) (*Controller, *fake.Clientset) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	signer, err := NewSigner(testKey)
	if err != nil {
		t.Fatal(err)
	}
	sas, secrets := factory.Core().V1().ServiceAccounts(), factory.Core().V1().Secrets()
	c, err := newController(ctx, "serviceaccount-token-controller", client, signer, []byte(testCA), sas, secrets)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.saQueue.ShutDown(); c.secretQueue.ShutDown() })
	for _, o := range objs {
		switch o := o.(type) {
		case *v1.ServiceAccount:
			_ = sas.Informer().GetIndexer().Add(o)
		case *v1.Secret:
			_ = secrets.Informer().GetIndexer().Add(o)
		}
	}
	client.ClearActions()
	return c, client
}

func TestNeedsUpdate(t *testing.T) {
	full := map[string][]byte{"token": []byte("t"), "ca.crt": []byte(testCA), "namespace": []byte("ns")}
	with := func(k, v string) map[string][]byte {
		d := map[string][]byte{}
		for kk, vv := range full {
			d[kk] = vv
		}
		if v == "" {
			delete(d, k)
		} else {
			d[k] = []byte(v)
		}
		return d
	}
	tests := []struct {
		name   string
		data   map[string][]byte
		rootCA string
		want   missing
	}{
		{name: "complete", data: full, rootCA: testCA},
		{name: "empty", rootCA: testCA, want: missing{ca: true, namespace: true, token: true}},
		{name: "other CA is replaced", data: with("ca.crt", "old"), rootCA: testCA, want: missing{ca: true}},
		{name: "no root CA configured: CA left alone", data: with("ca.crt", ""), want: missing{}},
		{name: "any existing token is kept", data: with("token", "not-a-jwt"), rootCA: testCA},
		{name: "any existing namespace is kept", data: with("namespace", "elsewhere"), rootCA: testCA},
		{name: "missing namespace", data: with("namespace", ""), rootCA: testCA, want: missing{namespace: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &Controller{rootCA: []byte(tc.rootCA)}
			if got := c.needsUpdate(&v1.Secret{Data: tc.data}); got != tc.want {
				t.Errorf("needsUpdate = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestSyncSecretPopulates(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	sa := serviceAccount("builder", "sa-uid")
	secret := tokenSecret("builder-token", "builder", "", nil)
	c, client := newTestController(t, sa, secret)
	if err := c.syncSecret(ctx, secretKey(secret)); err != nil {
		t.Fatal(err)
	}
	got, err := client.CoreV1().Secrets("ns").Get(ctx, "builder-token", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Data["ca.crt"]) != testCA || string(got.Data["namespace"]) != "ns" {
		t.Errorf("data = %q", got.Data)
	}
	if got.Annotations[v1.ServiceAccountUIDKey] != "sa-uid" || got.Annotations[v1.ServiceAccountNameKey] != "builder" {
		t.Errorf("annotations = %v", got.Annotations)
	}
	_, claims := verify(t, string(got.Data["token"]), &testKey.PublicKey)
	if claims["kubernetes.io/serviceaccount/secret.name"] != "builder-token" || claims["kubernetes.io/serviceaccount/service-account.uid"] != "sa-uid" {
		t.Errorf("claims = %v", claims)
	}

	// Populated: a second sync writes nothing.
	c2, client2 := newTestController(t, sa, got)
	if err := c2.syncSecret(ctx, secretKey(got)); err != nil {
		t.Fatal(err)
	}
	if a := client2.Actions(); len(a) != 0 {
		t.Errorf("complete secret: actions %v, want none", a)
	}
}

func TestSyncSecretStaleCacheSkips(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	secret := tokenSecret("builder-token", "builder", "", nil)
	c, client := newTestController(t, serviceAccount("builder", "sa-uid"), secret)
	stale := secret.DeepCopy()
	stale.ResourceVersion = "0"
	if err := c.populate(ctx, serviceAccount("builder", "sa-uid"), stale); err != nil {
		t.Fatal(err)
	}
	for _, a := range client.Actions() {
		if a.GetVerb() == "update" {
			t.Errorf("stale cache: unexpected update")
		}
	}
}

func TestSyncSecretDeletesOrphans(t *testing.T) {
	tests := []struct {
		name   string
		sa     *v1.ServiceAccount
		secret *v1.Secret
		delete bool
	}{
		{name: "ServiceAccount missing", secret: tokenSecret("t", "builder", "", nil), delete: true},
		{name: "ServiceAccount UID mismatch", sa: serviceAccount("builder", "new-uid"), secret: tokenSecret("t", "builder", "old-uid", nil), delete: true},
		{name: "ServiceAccount UID matches", sa: serviceAccount("builder", "uid"), secret: tokenSecret("t", "builder", "uid", map[string][]byte{"token": []byte("x"), "ca.crt": []byte(testCA), "namespace": []byte("ns")})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			objs := []runtime.Object{tc.secret}
			if tc.sa != nil {
				objs = append(objs, tc.sa)
			}
			c, client := newTestController(t, objs...)
			if err := c.syncSecret(ctx, secretKey(tc.secret)); err != nil {
				t.Fatal(err)
			}
			_, err := client.CoreV1().Secrets("ns").Get(ctx, tc.secret.Name, metav1.GetOptions{})
			if deleted := apierrors.IsNotFound(err); deleted != tc.delete {
				t.Errorf("deleted = %v, want %v (err %v)", deleted, tc.delete, err)
			}
		})
	}
}

func TestSyncDeletedSecretRemovesReference(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	sa := serviceAccount("builder", "sa-uid", "gone", "kept")
	c, client := newTestController(t, sa)
	if err := c.syncSecret(ctx, secretKey(tokenSecret("gone", "builder", "sa-uid", nil))); err != nil {
		t.Fatal(err)
	}
	got, err := client.CoreV1().ServiceAccounts("ns").Get(ctx, "builder", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Secrets) != 1 || got.Secrets[0].Name != "kept" {
		t.Errorf("secrets = %v, want only kept", got.Secrets)
	}
}

func TestSyncDeletedServiceAccountDeletesTokens(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	mine := tokenSecret("mine", "builder", "sa-uid", nil)
	unbound := tokenSecret("unbound", "builder", "", nil)
	other := tokenSecret("other", "builder", "other-uid", nil)
	c, client := newTestController(t, mine, unbound, other)
	if err := c.syncServiceAccount(ctx, serviceAccountKey(serviceAccount("builder", "sa-uid"))); err != nil {
		t.Fatal(err)
	}
	for name, wantDeleted := range map[string]bool{"mine": true, "unbound": true, "other": false} {
		_, err := client.CoreV1().Secrets("ns").Get(context.Background(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) != wantDeleted {
			t.Errorf("%s: deleted = %v, want %v", name, !wantDeleted, wantDeleted)
		}
	}

	// A ServiceAccount still in the cache keeps its tokens.
	sa := serviceAccount("builder", "sa-uid")
	c, client = newTestController(t, sa, mine)
	if err := c.syncServiceAccount(ctx, serviceAccountKey(sa)); err != nil {
		t.Fatal(err)
	}
	if a := client.Actions(); len(a) != 0 {
		t.Errorf("actions %v, want none", a)
	}
}

func TestKeysRoundTrip(t *testing.T) {
	s := tokenSecret("t", "we/ird:name", "u/id", nil)
	k, err := parseSecretKey(secretKey(s))
	if err != nil {
		t.Fatal(err)
	}
	if k.SAName != "we/ird:name" || k.SAUID != "u/id" || k.UID != "t-uid" {
		t.Errorf("key = %+v", k)
	}
	if _, err := parseSecretKey(secretKey(tokenSecret("t", "", "", nil))); err == nil {
		t.Error("want an error for a secret without a ServiceAccount name")
	}
	if _, err := parseServiceAccountKey(serviceAccountKey(serviceAccount("a", ""))); err == nil {
		t.Error("want an error for a ServiceAccount without a UID")
	}
}
