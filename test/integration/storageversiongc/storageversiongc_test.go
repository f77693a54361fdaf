// Package storageversiongc tests the
// storageversion-garbage-collector-controller against a real
// kube-apiserver, built through kcm's registry as the binary builds it.
package storageversiongc

import (
	"context"
	"slices"
	"testing"
	"time"

	apiserverinternalv1alpha1 "k8s.io/api/apiserverinternal/v1alpha1"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/storageversion"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/featuregate"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/cmd/kube-controller-manager/app"
	"github.com/kcm-dev/kcm/pkg/controller/storageversiongc"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/pkg/features"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const timeout = 30 * time.Second

// build runs kcm's registry entry of the controller through
// controllermanager.Build with --controllers=* and the gates as given.
func build(t *testing.T, cfg *rest.Config, gates map[string]bool) (*controllermanager.ControllerContext, []controllermanager.Controller) {
	t.Helper()
	fg := featuregate.NewVersionedFeatureGate(version.MajorMinor(1, 37))
	if err := features.AddUpstreamGates(fg); err != nil {
		t.Fatal(err)
	}
	if err := fg.SetFromMap(gates); err != nil {
		t.Fatal(err)
	}
	cc := framework.NewControllerContext(t, cfg)
	cc.FeatureGate = fg
	reg := controllermanager.Registry{names.StorageVersionGarbageCollector: app.NewRegistry()[names.StorageVersionGarbageCollector]}
	ctrls, err := controllermanager.Build(context.Background(), cc, cc, reg, []string{"*"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cc, ctrls
}

func TestGates(t *testing.T) {
	cfg := framework.StartEnv(t)
	// StorageVersionAPI is off by default. (APIServerIdentity off with it
	// on is not a valid gate set: StorageVersionAPI depends on it.)
	if _, ctrls := build(t, cfg, map[string]bool{}); len(ctrls) != 0 {
		t.Errorf("StorageVersionAPI off: built %d controllers, want none", len(ctrls))
	}
	_, ctrls := build(t, cfg, map[string]bool{"StorageVersionAPI": true})
	if len(ctrls) != 1 || ctrls[0].Name() != names.StorageVersionGarbageCollector {
		t.Fatalf("StorageVersionAPI on: built %v, want the %s", ctrls, names.StorageVersionGarbageCollector)
	}
}

func entry(id, v string) apiserverinternalv1alpha1.ServerStorageVersion {
	return apiserverinternalv1alpha1.ServerStorageVersion{APIServerID: id, EncodingVersion: v, DecodableVersions: []string{v}, ServedVersions: []string{v}}
}

func ids(sv *apiserverinternalv1alpha1.StorageVersion) []string {
	var out []string
	for _, e := range sv.Status.StorageVersions {
		out = append(out, e.APIServerID)
	}
	return out
}

// createStorageVersion creates a StorageVersion with the entries as a
// kube-apiserver writes them (status and its common encoding version).
func createStorageVersion(t *testing.T, client kubernetes.Interface, name string, entries ...apiserverinternalv1alpha1.ServerStorageVersion) {
	t.Helper()
	ctx := context.Background()
	svs := client.InternalV1alpha1().StorageVersions()
	sv := framework.Create(t, svs, &apiserverinternalv1alpha1.StorageVersion{ObjectMeta: metav1.ObjectMeta{Name: name}})
	sv.Status.StorageVersions = entries
	storageversion.SetCommonEncodingVersion(sv)
	if _, err := svs.UpdateStatus(ctx, sv, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// createIdentityLease creates a kube-apiserver identity Lease that the
// kube-apiserver's own expired-Lease collection leaves alone for an hour.
func createIdentityLease(t *testing.T, client kubernetes.Interface, name string) {
	t.Helper()
	framework.Create(t, client.CoordinationV1().Leases(metav1.NamespaceSystem), &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{storageversiongc.IdentityLabel: storageversiongc.KubeAPIServer}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(name), LeaseDurationSeconds: ptr.To[int32](3600),
			RenewTime: &metav1.MicroTime{Time: time.Now()}},
	})
}

// realServerID is the identity of the test's kube-apiserver, from its Lease.
func realServerID(t *testing.T, client kubernetes.Interface) string {
	t.Helper()
	var id string
	framework.Until(t, timeout, "the kube-apiserver's identity Lease", func() (bool, any) {
		leases, err := client.CoordinationV1().Leases(metav1.NamespaceSystem).List(context.Background(), metav1.ListOptions{
			LabelSelector: storageversiongc.IdentityLabel + "=" + storageversiongc.KubeAPIServer})
		if err != nil {
			return false, err
		}
		for _, l := range leases.Items {
			if l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity == l.Name {
				continue // one of this test's
			}
			id = l.Name
			return true, nil
		}
		return false, len(leases.Items)
	})
	return id
}

func TestStaleEntriesCollected(t *testing.T) {
	cfg := framework.StartEnv(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	live := realServerID(t, client)
	createIdentityLease(t, client, "apiserver-leaving")

	cc, ctrls := build(t, cfg, map[string]bool{"StorageVersionAPI": true})
	if len(ctrls) != 1 {
		t.Fatalf("built %d controllers, want 1", len(ctrls))
	}
	svs := client.InternalV1alpha1().StorageVersions()

	// Written before the controller starts: seen at its initial list.
	createStorageVersion(t, client, "gc.example.com.widgets",
		entry(live, "gc.example.com/v1"), entry("apiserver-never-existed", "gc.example.com/v1beta1"))
	framework.StartController(t, cc, ctrls[0])

	sv := framework.WaitFor(t, timeout, svs, "gc.example.com.widgets", "entry of a server without a Lease dropped",
		func(sv *apiserverinternalv1alpha1.StorageVersion) bool { return slices.Equal(ids(sv), []string{live}) })
	if v := sv.Status.CommonEncodingVersion; v == nil || *v != "gc.example.com/v1" {
		t.Errorf("commonEncodingVersion %v, want gc.example.com/v1 once the servers agree", v)
	}
	if c := sv.Status.Conditions; len(c) != 1 || c[0].Type != apiserverinternalv1alpha1.AllEncodingVersionsEqual ||
		c[0].Status != apiserverinternalv1alpha1.ConditionTrue || c[0].Reason != "CommonEncodingVersionSet" {
		t.Errorf("conditions %+v, want AllEncodingVersionsEqual True (CommonEncodingVersionSet)", c)
	}

	// An entry whose server holds a Lease is kept, until the Lease goes.
	createStorageVersion(t, client, "gc.example.com.gadgets", entry("apiserver-leaving", "gc.example.com/v1"))
	createStorageVersion(t, client, "gc.example.com.gizmos", entry(live, "gc.example.com/v1"), entry("apiserver-leaving", "gc.example.com/v2"))
	framework.Consistently(t, 3*time.Second, "entries of a server with a Lease kept", func() bool {
		a, errA := svs.Get(ctx, "gc.example.com.gadgets", metav1.GetOptions{})
		b, errB := svs.Get(ctx, "gc.example.com.gizmos", metav1.GetOptions{})
		return errA == nil && errB == nil && len(a.Status.StorageVersions) == 1 && len(b.Status.StorageVersions) == 2
	})
	if err := client.CoordinationV1().Leases(metav1.NamespaceSystem).Delete(ctx, "apiserver-leaving", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, timeout, func() (bool, error) {
		_, err := svs.Get(ctx, "gc.example.com.gadgets", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	framework.WaitFor(t, timeout, svs, "gc.example.com.gizmos", "entry of the deleted Lease's server dropped",
		func(sv *apiserverinternalv1alpha1.StorageVersion) bool { return slices.Equal(ids(sv), []string{live}) })

	// The kube-apiserver's own StorageVersions are left alone.
	framework.WaitFor(t, timeout, svs, "apps.deployments", "the kube-apiserver's own entry kept",
		func(sv *apiserverinternalv1alpha1.StorageVersion) bool { return slices.Contains(ids(sv), live) })
}
