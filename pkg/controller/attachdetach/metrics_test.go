package attachdetach

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-base/metrics/testutil"

	"github.com/kcm-dev/kcm/internal/controller/storageutil"
	kcmtestutil "github.com/kcm-dev/kcm/internal/testutil"
)

func TestVolumesCollector(t *testing.T) {
	pvc, pv := boundClaim()
	fcClaim := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "fc", UID: "fc-uid"},
		Spec:       v1.PersistentVolumeClaimSpec{VolumeName: "pv-fc"},
		Status:     v1.PersistentVolumeClaimStatus{Phase: v1.ClaimBound},
	}
	fcPV := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-fc"},
		Spec: v1.PersistentVolumeSpec{
			ClaimRef:               &v1.ObjectReference{Namespace: "ns", Name: "fc", UID: "fc-uid"},
			PersistentVolumeSource: v1.PersistentVolumeSource{FC: &v1.FCVolumeSource{WWIDs: []string{"w"}}},
		},
	}
	unbound := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pending", UID: "pending-uid"},
		Status:     v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
	}
	claimVolume := func(name, claim string) v1.Volume {
		return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{
			PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}
	}
	web := podOn("web", "node-a")
	web.Spec.Volumes = append(web.Spec.Volumes,
		claimVolume("fc", "fc"),
		claimVolume("pending", "pending"), // unresolvable: not counted
		v1.Volume{Name: "inline", VolumeSource: v1.VolumeSource{CSI: &v1.CSIVolumeSource{Driver: "inline.csi.example.com"}}},
		v1.Volume{Name: "iscsi", VolumeSource: v1.VolumeSource{ISCSI: &v1.ISCSIVolumeSource{TargetPortal: "t", IQN: "i"}}},
		v1.Volume{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}, // not attachable
	)
	// A finished pod still counts as in use (upstream's collector does not
	// look at the phase) but wants nothing attached.
	done := podOn("done", "node-a")
	done.Status.Phase = v1.PodSucceeded
	// An unscheduled pod counts nowhere.
	pending := podOn("pending", "")
	f := newFixture(t, Options{}, managedNode("node-a", true), pvc, pv, fcClaim, fcPV, unbound, web, done, pending)

	inUse := `# HELP storage_count_attachable_volumes_in_use [ALPHA] Measure number of volumes in use
# TYPE storage_count_attachable_volumes_in_use gauge
storage_count_attachable_volumes_in_use{node="node-a",volume_plugin="kubernetes.io/csi:hostpath.csi.example.com"} 2
storage_count_attachable_volumes_in_use{node="node-a",volume_plugin="kubernetes.io/csi:inline.csi.example.com"} 1
storage_count_attachable_volumes_in_use{node="node-a",volume_plugin="kubernetes.io/fc"} 1
storage_count_attachable_volumes_in_use{node="node-a",volume_plugin="kubernetes.io/iscsi"} 1
`
	if got := scrape(t, f.c); got != inUse {
		t.Fatalf("before any sync:\n%s\nwant:\n%s", got, inUse)
	}

	// The attach is started: wanted, not yet in the actual state.
	f.sync("node-a")
	f.cache(f.attachment("node-a"))
	desired := `# HELP attachdetach_controller_total_volumes [ALPHA] Number of volumes in A/D Controller
# TYPE attachdetach_controller_total_volumes gauge
attachdetach_controller_total_volumes{plugin_name="kubernetes.io/csi:hostpath.csi.example.com",state="desired_state_of_world"} 1
`
	if got := scrape(t, f.c); got != desired+inUse {
		t.Fatalf("attaching:\n%s\nwant:\n%s", got, desired+inUse)
	}

	attaches, detaches := operations(t, opNameAttach), operations(t, opNameDetach)
	f.markAttached("node-a")
	f.sync("node-a")
	if n := operations(t, opNameAttach) - attaches; n != 1 {
		t.Fatalf("volume_attach observed %d times, want 1", n)
	}
	both := `# HELP attachdetach_controller_total_volumes [ALPHA] Number of volumes in A/D Controller
# TYPE attachdetach_controller_total_volumes gauge
attachdetach_controller_total_volumes{plugin_name="kubernetes.io/csi:hostpath.csi.example.com",state="actual_state_of_world"} 1
attachdetach_controller_total_volumes{plugin_name="kubernetes.io/csi:hostpath.csi.example.com",state="desired_state_of_world"} 1
`
	if got := scrape(t, f.c); got != both+inUse {
		t.Fatalf("attached:\n%s\nwant:\n%s", got, both+inUse)
	}

	// The pods go and the node no longer counts the volume as mounted:
	// nothing wanted, the detach starts, then the volume is forgotten.
	f.uncache(web)
	f.uncache(done)
	node := f.refreshNode("node-a")
	node.ResourceVersion = "9"
	f.cache(node)
	f.sync("node-a")
	f.wantVerbs("patch nodes/status", "get nodes", "delete volumeattachments")
	actual := `# HELP attachdetach_controller_total_volumes [ALPHA] Number of volumes in A/D Controller
# TYPE attachdetach_controller_total_volumes gauge
attachdetach_controller_total_volumes{plugin_name="kubernetes.io/csi:hostpath.csi.example.com",state="actual_state_of_world"} 1
`
	if got := scrape(t, f.c); got != actual {
		t.Fatalf("detaching:\n%s\nwant:\n%s", got, actual)
	}
	if n := operations(t, opNameDetach) - detaches; n != 0 {
		t.Fatalf("volume_detach observed %d times before the detach ended", n)
	}
	f.uncache(&storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: attachmentName(handle, driver, "node-a")}})
	f.sync("node-a")
	if n := operations(t, opNameDetach) - detaches; n != 1 {
		t.Fatalf("volume_detach observed %d times, want 1", n)
	}
	if got := scrape(t, f.c); got != "" {
		t.Fatalf("detached:\n%s\nwant nothing", got)
	}
}

// A volume recovered from a node's status has no spec until a pod wants it
// again; upstream's collector skips such entries, and so does kcm's.
func TestVolumesCollectorSkipsRecovered(t *testing.T) {
	node := managedNode("node-a", true)
	node.Status.VolumesAttached = []v1.AttachedVolume{{Name: uniqueVolumeName(driver, handle)}}
	node.Status.VolumesInUse = []v1.UniqueVolumeName{uniqueVolumeName(driver, handle)}
	f := newFixture(t, Options{}, node)
	if err := f.c.populate(klogDiscard()); err != nil {
		t.Fatal(err)
	}
	f.sync("node-a")
	if got := scrape(t, f.c); got != "" {
		t.Fatalf("scraped:\n%s\nwant nothing", got)
	}
}

// scrape returns what a registry holding only a collector of c exposes.
func scrape(t *testing.T, c *Controller) string {
	t.Helper()
	collector := &volumesCollector{}
	collector.c.Store(c)
	return kcmtestutil.CollectorText(t, collector)
}

func forcedDetachCount(t *testing.T, reason string) float64 {
	t.Helper()
	v, err := testutil.GetCounterMetricValue(forcedDetaches.WithLabelValues(reason))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// operations counts the successful observations of op for the test's driver
// in storage_operation_duration_seconds.
func operations(t *testing.T, op string) uint64 {
	t.Helper()
	n, err := testutil.GetHistogramMetricCount(storageutil.OperationSeconds.WithLabelValues(csiPluginName+":"+driver, op, storageutil.StatusSuccess, "false"))
	if err != nil {
		t.Fatal(err)
	}
	return n
}
