package expand

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
)

const ns = "ns"

func claim(request, capacity string) *v1.PersistentVolumeClaim {
	return &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: ns, UID: "claim-uid", ResourceVersion: "7"},
		Spec: v1.PersistentVolumeClaimSpec{VolumeName: "pv",
			Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(request)}}},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimBound, Capacity: v1.ResourceList{v1.ResourceStorage: resource.MustParse(capacity)}},
	}
}

func volume(src v1.PersistentVolumeSource) *v1.PersistentVolume {
	return &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv"},
		Spec: v1.PersistentVolumeSpec{PersistentVolumeSource: src, ClaimRef: &v1.ObjectReference{Namespace: ns, Name: "c", UID: "claim-uid"}}}
}

var csi = v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: "hostpath.csi.k8s.io", VolumeHandle: "h"}}

type fixture struct {
	c        *Controller
	client   *fake.Clientset
	recorder *record.FakeRecorder
}

func newFixture(t *testing.T, pvc *v1.PersistentVolumeClaim, pv *v1.PersistentVolume) *fixture {
	t.Helper()
	client := fake.NewClientset(pvc, pv)
	f := informers.NewSharedInformerFactory(client, 0)
	_, ctx := ktesting.NewTestContext(t)
	c, err := NewController(ctx, "test", client, f.Core().V1().PersistentVolumeClaims(), f.Core().V1().PersistentVolumes())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.stopRecorder)
	rec := record.NewFakeRecorder(10)
	c.recorder = rec
	if err := f.Core().V1().PersistentVolumeClaims().Informer().GetIndexer().Add(pvc); err != nil {
		t.Fatal(err)
	}
	if err := f.Core().V1().PersistentVolumes().Informer().GetIndexer().Add(pv); err != nil {
		t.Fatal(err)
	}
	client.ClearActions()
	return &fixture{c: c, client: client, recorder: rec}
}

func (f *fixture) events() []string {
	var out []string
	for {
		select {
		case e := <-f.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func TestSync(t *testing.T) {
	tests := []struct {
		name        string
		pvc         *v1.PersistentVolumeClaim
		pv          *v1.PersistentVolume
		wantEvents  []string
		wantResizer string
		wantErr     bool
	}{
		{name: "no expansion pending", pvc: claim("1Gi", "1Gi"), pv: volume(csi)},
		{name: "CSI volume waits for the external resizer", pvc: claim("2Gi", "1Gi"), pv: volume(csi),
			wantEvents: []string{"Normal ExternalExpanding waiting for an external controller to expand this PVC"}},
		{name: "migrated in-tree volume handed to its CSI driver", pvc: claim("2Gi", "1Gi"),
			pv:          volume(v1.PersistentVolumeSource{AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: "vol"}}),
			wantEvents:  []string{"Normal ExternalExpanding CSI migration enabled for kubernetes.io/aws-ebs; waiting for external resizer to expand the pvc"},
			wantResizer: "ebs.csi.aws.com"},
		{name: "pre-resize annotation keeps the claim pending", pvc: claim("1Gi", "1Gi"),
			pv: func() *v1.PersistentVolume {
				pv := volume(csi)
				pv.Annotations = map[string]string{annPreResizeCapacity: "1Gi"}
				return pv
			}(),
			wantEvents: []string{"Normal ExternalExpanding waiting for an external controller to expand this PVC"}},
		{name: "volume bound to another claim", pvc: claim("2Gi", "1Gi"),
			pv: func() *v1.PersistentVolume {
				pv := volume(csi)
				pv.Spec.ClaimRef.UID = "other"
				return pv
			}(),
			wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.pvc, tt.pv)
			_, ctx := ktesting.NewTestContext(t)
			err := f.c.sync(ctx, ns+"/c")
			if (err != nil) != tt.wantErr {
				t.Fatalf("sync: %v, want error %v", err, tt.wantErr)
			}
			events := f.events()
			if len(events) != len(tt.wantEvents) {
				t.Fatalf("events %q, want %q", events, tt.wantEvents)
			}
			for i := range events {
				if events[i] != tt.wantEvents[i] {
					t.Errorf("event %q, want %q", events[i], tt.wantEvents[i])
				}
			}
			got, err := f.client.CoreV1().PersistentVolumeClaims(ns).Get(context.Background(), "c", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if r := got.Annotations[annResizer]; r != tt.wantResizer {
				t.Errorf("resizer %q, want %q", r, tt.wantResizer)
			}
			for _, a := range f.client.Actions() {
				if a.GetVerb() == "patch" && a.GetSubresource() != "status" {
					t.Errorf("patch of %q, want the status subresource", a.GetSubresource())
				}
			}
		})
	}
}

func TestResizerAlreadySetNotPatched(t *testing.T) {
	pvc := claim("2Gi", "1Gi")
	pvc.Annotations = map[string]string{annResizer: "pd.csi.storage.gke.io"}
	f := newFixture(t, pvc, volume(v1.PersistentVolumeSource{GCEPersistentDisk: &v1.GCEPersistentDiskVolumeSource{PDName: "d"}}))
	_, ctx := ktesting.NewTestContext(t)
	if err := f.c.sync(ctx, ns+"/c"); err != nil {
		t.Fatal(err)
	}
	for _, a := range f.client.Actions() {
		if a.GetVerb() == "patch" {
			t.Errorf("patched a claim whose resizer is set")
		}
	}
}

func TestUpdatesQueued(t *testing.T) {
	f := newFixture(t, claim("1Gi", "1Gi"), volume(csi))
	f.c.claimUpdated(claim("1Gi", "1Gi"), claim("1Gi", "1Gi"))
	if f.c.queue.Len() != 0 {
		t.Error("unchanged claim queued")
	}
	pending := claim("1Gi", "1Gi")
	pending.Status.Phase = v1.ClaimPending
	f.c.enqueue(pending)
	if f.c.queue.Len() != 0 {
		t.Error("pending claim queued")
	}
	f.c.claimUpdated(claim("1Gi", "1Gi"), claim("2Gi", "1Gi"))
	if f.c.queue.Len() != 1 {
		t.Error("grown request not queued")
	}
}
