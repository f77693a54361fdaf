package storageversiongc

import (
	"context"
	"errors"
	"testing"

	apiserverinternalv1alpha1 "k8s.io/api/apiserverinternal/v1alpha1"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2/ktesting"
)

func identityLease(name string) *coordinationv1.Lease {
	return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceSystem,
		Labels: map[string]string{IdentityLabel: KubeAPIServer}}}
}

func entry(id, version string) apiserverinternalv1alpha1.ServerStorageVersion {
	return apiserverinternalv1alpha1.ServerStorageVersion{APIServerID: id, EncodingVersion: version,
		DecodableVersions: []string{version}, ServedVersions: []string{version}}
}

func storageVersion(name string, entries ...apiserverinternalv1alpha1.ServerStorageVersion) *apiserverinternalv1alpha1.StorageVersion {
	return &apiserverinternalv1alpha1.StorageVersion{ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: apiserverinternalv1alpha1.StorageVersionStatus{StorageVersions: entries}}
}

func newTestController(t *testing.T, objs ...runtime.Object) (*Controller, *fake.Clientset, context.Context) {
	t.Helper()
	client := fake.NewClientset(objs...)
	f := informers.NewSharedInformerFactory(client, 0)
	_, ctx := ktesting.NewTestContext(t)
	c, err := NewController(ctx, "test", client, f)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if l, ok := o.(*coordinationv1.Lease); ok {
			if err := f.Coordination().V1().Leases().Informer().GetIndexer().Add(l); err != nil {
				t.Fatal(err)
			}
		}
	}
	client.ClearActions()
	return c, client, ctx
}

func getSV(t *testing.T, client *fake.Clientset, name string) *apiserverinternalv1alpha1.StorageVersion {
	t.Helper()
	sv, err := client.InternalV1alpha1().StorageVersions().Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return sv
}

func ids(sv *apiserverinternalv1alpha1.StorageVersion) []string {
	var out []string
	for _, e := range sv.Status.StorageVersions {
		out = append(out, e.APIServerID)
	}
	return out
}

func TestSyncStorageVersion(t *testing.T) {
	unlabelled := identityLease("unlabelled")
	unlabelled.Labels = nil
	c, client, ctx := newTestController(t,
		identityLease("alive"), unlabelled,
		storageVersion("apps.deployments", entry("alive", "apps/v1"), entry("dead", "apps/v1beta1"), entry("unlabelled", "apps/v1")),
		storageVersion("batch.jobs", entry("dead", "batch/v1")),
		storageVersion("core.pods", entry("alive", "v1")))

	if err := c.syncStorageVersion(ctx, "apps.deployments"); err != nil {
		t.Fatal(err)
	}
	sv := getSV(t, client, "apps.deployments")
	if got := ids(sv); len(got) != 1 || got[0] != "alive" {
		t.Errorf("entries %v, want [alive]", got)
	}
	if v := sv.Status.CommonEncodingVersion; v == nil || *v != "apps/v1" {
		t.Errorf("commonEncodingVersion %v, want apps/v1", v)
	}
	if len(sv.Status.Conditions) != 1 || sv.Status.Conditions[0].Type != apiserverinternalv1alpha1.AllEncodingVersionsEqual ||
		sv.Status.Conditions[0].Status != apiserverinternalv1alpha1.ConditionTrue || sv.Status.Conditions[0].Reason != "CommonEncodingVersionSet" {
		t.Errorf("conditions %+v, want AllEncodingVersionsEqual True CommonEncodingVersionSet", sv.Status.Conditions)
	}

	if err := c.syncStorageVersion(ctx, "batch.jobs"); err != nil {
		t.Fatal(err)
	}
	if sv := getSV(t, client, "batch.jobs"); sv != nil {
		t.Errorf("batch.jobs kept with entries %v, want deleted", ids(sv))
	}

	client.ClearActions()
	for _, name := range []string{"core.pods", "gone.things"} {
		if err := c.syncStorageVersion(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range client.Actions() {
		if a.GetVerb() != "get" {
			t.Errorf("unexpected %s %s for valid or missing StorageVersions", a.GetVerb(), a.GetResource().Resource)
		}
	}
}

func TestSyncStorageVersionLeaseReadError(t *testing.T) {
	c, client, ctx := newTestController(t, storageVersion("core.pods", entry("maybe", "v1")))
	client.PrependReactor("get", "leases", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("connection refused")
	})
	if err := c.syncStorageVersion(ctx, "core.pods"); err == nil {
		t.Error("no error when the Lease could not be read")
	}
	if got := ids(getSV(t, client, "core.pods")); len(got) != 1 {
		t.Errorf("entries %v after a Lease read error, want the entry kept", got)
	}
}

func TestSyncLease(t *testing.T) {
	c, client, ctx := newTestController(t,
		identityLease("alive"), identityLease("back"),
		storageVersion("apps.deployments", entry("alive", "apps/v1"), entry("dead", "apps/v1beta1")),
		storageVersion("batch.jobs", entry("dead", "batch/v1")),
		storageVersion("core.pods", entry("alive", "v1"), entry("back", "v1")))

	if err := c.syncLease(ctx, "dead"); err != nil {
		t.Fatal(err)
	}
	if got := ids(getSV(t, client, "apps.deployments")); len(got) != 1 || got[0] != "alive" {
		t.Errorf("apps.deployments entries %v, want [alive]", got)
	}
	if sv := getSV(t, client, "batch.jobs"); sv != nil {
		t.Errorf("batch.jobs kept with entries %v, want deleted", ids(sv))
	}

	// A Lease that exists again (the server restarted) keeps its entries.
	client.ClearActions()
	if err := c.syncLease(ctx, "back"); err != nil {
		t.Fatal(err)
	}
	if got := ids(getSV(t, client, "core.pods")); len(got) != 2 {
		t.Errorf("core.pods entries %v, want both kept", got)
	}
	if n := len(client.Actions()); n != 2 { // the Lease, then the check above
		t.Errorf("%d requests for a Lease that exists, want only its read: %v", n-1, client.Actions())
	}
}

func TestHandlers(t *testing.T) {
	other := identityLease("other-ns")
	other.Namespace = "default"
	c, _, _ := newTestController(t, identityLease("alive"))
	logger, _ := ktesting.NewTestContext(t)

	unlabelled := identityLease("x")
	unlabelled.Labels = map[string]string{IdentityLabel: "kube-scheduler"}
	c.leaseDeleted(logger, unlabelled)
	c.leaseDeleted(logger, other)
	c.leaseDeleted(logger, identityLease("gone"))
	c.leaseDeleted(logger, cacheTombstone(identityLease("gone-too")))
	if got := drain(c.leaseQueue); len(got) != 2 || got[0] != "gone" || got[1] != "gone-too" {
		t.Errorf("lease queue %v, want [gone gone-too]", got)
	}

	c.storageVersionChanged(logger, storageVersion("core.pods", entry("alive", "v1")))
	c.storageVersionChanged(logger, storageVersion("empty.things"))
	c.storageVersionChanged(logger, storageVersion("apps.deployments", entry("alive", "apps/v1"), entry("dead", "apps/v1")))
	if got := drain(c.storageVersionQueue); len(got) != 1 || got[0] != "apps.deployments" {
		t.Errorf("storage version queue %v, want [apps.deployments]", got)
	}
}
