package persistentvolume

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/kcm-dev/kcm/internal/controller/storageutil"
	kcmtestutil "github.com/kcm-dev/kcm/internal/testutil"
	"k8s.io/utils/ptr"
)

func TestPVCountCollector(t *testing.T) {
	hostPath := v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/tmp/x"}}
	nfs := v1.PersistentVolumeSource{NFS: &v1.NFSVolumeSource{Server: "s", Path: "/x"}}
	fc := v1.PersistentVolumeSource{FC: &v1.FCVolumeSource{WWIDs: []string{"w"}}}
	inNamespace := func(n string) pvcOpt { return func(c *v1.PersistentVolumeClaim) { c.Namespace = n } }
	phase := func(p v1.PersistentVolumeClaimPhase) pvcOpt {
		return func(c *v1.PersistentVolumeClaim) { c.Status.Phase = p }
	}
	f := newFixture(t, Config{},
		newPV("hp", "1Gi", withSource(hostPath), withPhase(v1.VolumeBound), withClass("gold")),
		newPV("nfs", "1Gi", withSource(nfs)),
		// CSI volumes: the binder has no CSI plugin, so N/A.
		newPV("csi-block", "1Gi", withBlock(), withClass("gold")),
		newPV("csi-fs", "1Gi", withPhase(v1.VolumeBound), withClass("silver"), func(pv *v1.PersistentVolume) {
			pv.Spec.VolumeMode = ptr.To(v1.PersistentVolumeFilesystem)
		}),
		newPV("fc", "1Gi", withSource(fc), withPhase(v1.VolumeReleased)),
		newPVC("c1", "1Gi", claimClass(strPtr("gold")), phase(v1.ClaimBound)),
		newPVC("c2", "1Gi", claimClass(strPtr("gold")), phase(v1.ClaimBound)),
		newPVC("c3", "1Gi", claimClass(strPtr("gold")), claimVAC("fast")),
		// The beta annotation still names a claim's class.
		newPVC("c4", "1Gi", claimClass(nil), claimAnnotation(v1.BetaStorageClassAnnotation, "old")),
		newPVC("c5", "1Gi", inNamespace("other"), phase(v1.ClaimLost)),
	)
	want := `# HELP pv_collector_bound_pv_count [ALPHA] Gauge measuring number of persistent volume currently bound
# TYPE pv_collector_bound_pv_count gauge
pv_collector_bound_pv_count{storage_class="gold"} 1
pv_collector_bound_pv_count{storage_class="silver"} 1
# HELP pv_collector_bound_pvc_count [ALPHA] Gauge measuring number of persistent volume claim currently bound
# TYPE pv_collector_bound_pvc_count gauge
pv_collector_bound_pvc_count{namespace="ns",storage_class="gold",volume_attributes_class=""} 2
# HELP pv_collector_total_pv_count [ALPHA] Gauge measuring total number of persistent volumes
# TYPE pv_collector_total_pv_count gauge
pv_collector_total_pv_count{plugin_name="N/A",volume_mode="Block"} 1
pv_collector_total_pv_count{plugin_name="N/A",volume_mode="Filesystem"} 2
pv_collector_total_pv_count{plugin_name="kubernetes.io/host-path",volume_mode="Filesystem"} 1
pv_collector_total_pv_count{plugin_name="kubernetes.io/nfs",volume_mode="Filesystem"} 1
# HELP pv_collector_unbound_pv_count [ALPHA] Gauge measuring number of persistent volume currently unbound
# TYPE pv_collector_unbound_pv_count gauge
pv_collector_unbound_pv_count{storage_class=""} 2
pv_collector_unbound_pv_count{storage_class="gold"} 1
# HELP pv_collector_unbound_pvc_count [ALPHA] Gauge measuring number of persistent volume claim currently unbound
# TYPE pv_collector_unbound_pvc_count gauge
pv_collector_unbound_pvc_count{namespace="ns",storage_class="gold",volume_attributes_class="fast"} 1
pv_collector_unbound_pvc_count{namespace="ns",storage_class="old",volume_attributes_class=""} 1
pv_collector_unbound_pvc_count{namespace="other",storage_class="",volume_attributes_class=""} 1
`
	if got := scrape(t, f.c); got != want {
		t.Errorf("scraped:\n%s\nwant:\n%s", got, want)
	}

	// The collector reads the controller's view at scrape time.
	if err := f.c.volumes.store.Delete(newPV("csi-block", "1Gi")); err != nil {
		t.Fatal(err)
	}
	want = `# HELP pv_collector_total_pv_count [ALPHA] Gauge measuring total number of persistent volumes
# TYPE pv_collector_total_pv_count gauge
pv_collector_total_pv_count{plugin_name="N/A",volume_mode="Filesystem"} 2
pv_collector_total_pv_count{plugin_name="kubernetes.io/host-path",volume_mode="Filesystem"} 1
pv_collector_total_pv_count{plugin_name="kubernetes.io/nfs",volume_mode="Filesystem"} 1
# HELP`
	if got := scrape(t, f.c); !strings.Contains(got, want) {
		t.Errorf("scraped:\n%s\nwant it to contain:\n%s", got, want)
	}
}

// scrape returns what a registry holding only a collector of c exposes.
func scrape(t *testing.T, c *Controller) string {
	t.Helper()
	collector := &pvCountCollector{}
	collector.c.Store(c)
	return kcmtestutil.CollectorText(t, collector)
}

func TestVolumePluginName(t *testing.T) {
	for _, tc := range []struct {
		source v1.PersistentVolumeSource
		want   string
	}{
		{v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/p"}}, "kubernetes.io/host-path"},
		{v1.PersistentVolumeSource{NFS: &v1.NFSVolumeSource{Server: "s"}}, "kubernetes.io/nfs"},
		{v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: "d"}}, "N/A"},
		{v1.PersistentVolumeSource{ISCSI: &v1.ISCSIPersistentVolumeSource{}}, "N/A"},
		{v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/p"}}, "N/A"},
	} {
		if got := volumePluginName(newPV("v", "1Gi", withSource(tc.source))); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.source, got, tc.want)
		}
	}
}

// registered makes sure the metrics are registered (a controller's
// construction does it); unregistered, they are no-ops.
func registered(t *testing.T) { newFixture(t, Config{}) }

func observations(t *testing.T, o metrics.ObserverMetric) uint64 {
	t.Helper()
	n, err := testutil.GetHistogramMetricCount(o)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// errorCounts returns both volume operation error counters of a label pair.
func errorCounts(t *testing.T, plugin, op string) [2]float64 {
	t.Helper()
	return [2]float64{
		kcmtestutil.CounterValue(t, volumeOperationErrors.WithLabelValues(plugin, op)),
		kcmtestutil.CounterValue(t, volumeOperationErrorsDeprecated.WithLabelValues(plugin, op)),
	}
}

func failUpdates(f *fixture, resource string) {
	f.client.PrependReactor("update", resource, func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errTest
	})
}

func TestRetroactiveStorageClassMetrics(t *testing.T) {
	registered(t)
	def := newClass("def", "example.com/p", storagev1.VolumeBindingImmediate, "storageclass.kubernetes.io/is-default-class", "true")
	for _, fail := range []bool{false, true} {
		f := newFixture(t, Config{}, newPVC("c1", "1Gi", claimClass(nil)), def)
		if fail {
			failUpdates(f, "persistentvolumeclaims")
		}
		total, errs := kcmtestutil.CounterValue(t, retroactiveStorageClass), kcmtestutil.CounterValue(t, retroactiveStorageClassErrors)
		if err := f.syncClaim("c1"); (err != nil) != fail {
			t.Fatalf("fail=%v: %v", fail, err)
		}
		wantErrs := errs
		if fail {
			wantErrs++
		}
		if got := kcmtestutil.CounterValue(t, retroactiveStorageClass); got != total+1 {
			t.Errorf("fail=%v: retroactive_storageclass_total %v, want %v", fail, got, total+1)
		}
		if got := kcmtestutil.CounterValue(t, retroactiveStorageClassErrors); got != wantErrs {
			t.Errorf("fail=%v: retroactive_storageclass_errors_total %v, want %v", fail, got, wantErrs)
		}
	}
	// A claim that has a class is not counted.
	f := newFixture(t, Config{}, newPVC("c1", "1Gi"), def)
	total := kcmtestutil.CounterValue(t, retroactiveStorageClass)
	if err := f.syncClaim("c1"); err != nil {
		t.Fatal(err)
	}
	if got := kcmtestutil.CounterValue(t, retroactiveStorageClass); got != total {
		t.Errorf("counted a claim with a class: %v, want %v", got, total)
	}
}

func TestExternalProvisioningMetrics(t *testing.T) {
	registered(t)
	gold := strPtr("gold")
	t.Run("failure of a migrated provisioner counts under its CSI driver", func(t *testing.T) {
		f := newFixture(t, Config{EnableDynamicProvisioning: true}, newPVC("c1", "1Gi", claimClass(gold)),
			newClass("gold", "kubernetes.io/aws-ebs", storagev1.VolumeBindingImmediate))
		failUpdates(f, "persistentvolumeclaims")
		before := errorCounts(t, "ebs.csi.aws.com", opNameProvision)
		if err := f.syncClaim("c1"); err != nil {
			t.Fatal(err)
		}
		f.waitEvent("Warning ProvisioningFailed Error saving claim")
		f.c.ops.wait()
		if got, want := errorCounts(t, "ebs.csi.aws.com", opNameProvision), [2]float64{before[0] + 1, before[1] + 1}; got != want {
			t.Errorf("errors %v, want %v", got, want)
		}
	})
	t.Run("provisioning ends with the binding", func(t *testing.T) {
		f := newFixture(t, Config{EnableDynamicProvisioning: true}, newPVC("c1", "1Gi", claimClass(gold)),
			newClass("gold", "example.com/csi", storagev1.VolumeBindingImmediate))
		hist := volumeOperationSeconds.WithLabelValues("example.com/csi", opNameProvision)
		before, errsBefore := observations(t, hist), errorCounts(t, "example.com/csi", opNameProvision)
		if err := f.syncClaim("c1"); err != nil {
			t.Fatal(err)
		}
		f.waitEvent("Normal ExternalProvisioning")
		f.c.ops.wait()
		if got := observations(t, hist); got != before {
			t.Fatalf("observed before the binding: %d, want %d", got, before)
		}
		// The external provisioner creates a volume bound to the claim.
		pv, err := f.client.CoreV1().PersistentVolumes().Create(f.ctx, newPV("pvc-1", "1Gi", withClass("gold"), withClaimRef("c1", "uid-c1")), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.c.storeVolume(pv); err != nil {
			t.Fatal(err)
		}
		if err := f.syncClaim("c1"); err != nil {
			t.Fatal(err)
		}
		if f.pvc("c1").Spec.VolumeName != "pvc-1" {
			t.Fatal("not bound")
		}
		if got := observations(t, hist); got != before+1 {
			t.Errorf("volume_operation_total_seconds observations %d, want %d", got, before+1)
		}
		if got := errorCounts(t, "example.com/csi", opNameProvision); got != errsBefore {
			t.Errorf("errors %v, want %v", got, errsBefore)
		}
		if len(f.c.opTimes.started) != 0 {
			t.Errorf("start not forgotten: %v", f.c.opTimes.started)
		}
	})
	t.Run("a deleted claim's start is forgotten", func(t *testing.T) {
		f := newFixture(t, Config{EnableDynamicProvisioning: true}, newPVC("c1", "1Gi", claimClass(gold)),
			newClass("gold", "example.com/csi", storagev1.VolumeBindingImmediate))
		if err := f.syncClaim("c1"); err != nil {
			t.Fatal(err)
		}
		f.c.ops.wait()
		if len(f.c.opTimes.started) != 1 {
			t.Fatalf("starts %v", f.c.opTimes.started)
		}
		f.deleteClaim("c1")
		// deleteClaim emptied the view; put the claim back for syncClaimKey to find it gone from the informer.
		if err := f.c.claims.Add(newPVC("c1", "1Gi")); err != nil {
			t.Fatal(err)
		}
		if err := f.c.syncClaimKey(f.ctx, ns+"/c1"); err != nil {
			t.Fatal(err)
		}
		if len(f.c.opTimes.started) != 0 {
			t.Errorf("start not forgotten: %v", f.c.opTimes.started)
		}
	})
}

func TestDeletionMetrics(t *testing.T) {
	registered(t)
	released := func(opts ...pvOpt) *v1.PersistentVolume {
		return newPV("v", "1Gi", append([]pvOpt{withPhase(v1.VolumeBound), withClaimRef("gone", "uid-gone"), withPolicy(v1.PersistentVolumeReclaimDelete)}, opts...)...)
	}
	failed := storageutil.OperationSeconds.WithLabelValues(hostPathPluginName, opNameVolumeDelete, statusFailUnknown, "false")
	before, errsBefore := observations(t, failed), errorCounts(t, hostPathPluginName, opNameDelete)
	f := newFixture(t, Config{}, released(withSource(v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/var/data"}})))
	if err := f.syncVolume("v"); err != nil {
		t.Fatal(err)
	}
	f.waitEvent("Warning VolumeFailedDelete host_path deleter only supports")
	f.c.ops.wait()
	if got := observations(t, failed); got != before+1 {
		t.Errorf("storage_operation_duration_seconds failures %d, want %d", got, before+1)
	}
	if got, want := errorCounts(t, hostPathPluginName, opNameDelete), [2]float64{errsBefore[0] + 1, errsBefore[1] + 1}; got != want {
		t.Errorf("errors %v, want %v", got, want)
	}

	// Nobody can delete an NFS volume: upstream's operation returns no
	// error once the volume is marked Failed, so nothing is counted.
	errsBefore = errorCounts(t, pluginNotAvailable, opNameDelete)
	f = newFixture(t, Config{}, released(withSource(v1.PersistentVolumeSource{NFS: &v1.NFSVolumeSource{Server: "s", Path: "/x"}})))
	if err := f.syncVolume("v"); err != nil {
		t.Fatal(err)
	}
	f.waitEvent("Warning VolumeFailedDelete")
	f.c.ops.wait()
	if got := errorCounts(t, pluginNotAvailable, opNameDelete); got != errsBefore {
		t.Errorf("errors %v, want %v", got, errsBefore)
	}
	if got := f.c.opTimes.started["v"].plugin; got != pluginNotAvailable {
		t.Errorf("plugin_name %q, want N/A", got)
	}

	// An external deleter's plugin_name is its class's provisioner.
	f = newFixture(t, Config{}, released(withClass("gold"), withAnnotation(storagehelpers.AnnDynamicallyProvisioned, "example.com/whatever")),
		newClass("gold", "example.com/csi", storagev1.VolumeBindingImmediate))
	if err := f.syncVolume("v"); err != nil {
		t.Fatal(err)
	}
	f.c.ops.wait()
	if got := f.c.opTimes.started["v"]; got.plugin != "example.com/csi" || got.op != opNameDelete {
		t.Errorf("start %+v", got)
	}
}

func TestHostPathMetrics(t *testing.T) {
	registered(t)
	dir := t.TempDir()
	if !hostPathDeletable.MatchString(dir) {
		t.Skipf("temporary directory %s is not under /tmp", dir)
	}
	provisioned := storageutil.OperationSeconds.WithLabelValues(hostPathPluginName, opNameVolumeProvision, statusSuccess, "false")
	deleted := storageutil.OperationSeconds.WithLabelValues(hostPathPluginName, opNameVolumeDelete, statusSuccess, "false")
	endToEndProvision := volumeOperationSeconds.WithLabelValues(hostPathPluginName, opNameProvision)
	endToEndDelete := volumeOperationSeconds.WithLabelValues(hostPathPluginName, opNameDelete)
	counts := func() [4]uint64 {
		return [4]uint64{observations(t, provisioned), observations(t, deleted), observations(t, endToEndProvision), observations(t, endToEndDelete)}
	}
	start := counts()
	f := newFixture(t, Config{EnableDynamicProvisioning: true, HostPath: HostPathConfig{ProvisioningEnabled: true, Dir: dir}},
		newPVC("c1", "2Gi", claimClass(strPtr("hp"))), newClass("hp", hostPathPluginName, storagev1.VolumeBindingImmediate))
	if err := f.syncClaim("c1"); err != nil {
		t.Fatal(err)
	}
	f.waitEvent("Normal ProvisioningSucceeded")
	f.c.ops.wait()
	if got, want := counts(), [4]uint64{start[0] + 1, start[1], start[2], start[3]}; got != want {
		t.Errorf("after provisioning %v, want %v", got, want)
	}
	// The claim binds to its volume: the provisioning's end.
	if err := f.syncClaim("c1"); err != nil {
		t.Fatal(err)
	}
	if got, want := counts(), [4]uint64{start[0] + 1, start[1], start[2] + 1, start[3]}; got != want {
		t.Errorf("after binding %v, want %v", got, want)
	}
	// The claim goes, the volume is deleted; its disappearance ends the deletion.
	f.deleteClaim("c1")
	if err := f.syncVolume("pvc-uid-c1"); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(f.ctx, 5*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := f.client.CoreV1().PersistentVolumes().Get(ctx, "pvc-uid-c1", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatal("volume not deleted")
	}
	f.c.ops.wait()
	if got, want := counts(), [4]uint64{start[0] + 1, start[1] + 1, start[2] + 1, start[3]}; got != want {
		t.Errorf("after deletion %v, want %v", got, want)
	}
	if err := f.c.syncVolumeKey(f.ctx, "pvc-uid-c1"); err != nil {
		t.Fatal(err)
	}
	if got, want := counts(), [4]uint64{start[0] + 1, start[1] + 1, start[2] + 1, start[3] + 1}; got != want {
		t.Errorf("after the volume is gone %v, want %v", got, want)
	}
}
