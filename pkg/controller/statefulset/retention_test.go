package statefulset

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

// owners renders a claim's owner references as kind/name.
func owners(c v1.PersistentVolumeClaim) string {
	var out []string
	for _, ref := range c.OwnerReferences {
		s := ref.Kind + "/" + ref.Name
		if ptr.Deref(ref.Controller, false) && ptr.Deref(ref.BlockOwnerDeletion, false) {
			s += "(controller)"
		}
		out = append(out, s)
	}
	return strings.Join(out, ",")
}

func (f *fixture) claimOwners() map[string]string {
	out := map[string]string{}
	for _, c := range f.claims() {
		out[c.Name] = owners(c)
	}
	return out
}

func TestRetentionPolicy(t *testing.T) {
	const set, pod2 = "StatefulSet/web(controller)", "Pod/web-2(controller)"
	tests := []struct {
		whenDeleted, whenScaled apps.PersistentVolumeClaimRetentionPolicyType
		// want: owners of data-web-0 (in range) and data-web-2 (scaled down).
		inRange, scaledDown string
	}{
		{retain, retain, "", ""},
		{remove, retain, set, set},
		{retain, remove, "", pod2},
		{remove, remove, set, pod2},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("whenDeleted=%s,whenScaled=%s", tc.whenDeleted, tc.whenScaled), func(t *testing.T) {
			f := newFixture(t, defaultGates, newSet(3, withClaim("data"), withRetention(tc.whenDeleted, tc.whenScaled)))
			f.converge()
			got := f.claimOwners()
			if len(got) != 3 || got["data-web-0"] != tc.inRange || got["data-web-2"] != tc.inRange {
				t.Fatalf("in range: %v, want %q", got, tc.inRange)
			}
			f.updateSet(func(s *apps.StatefulSet) { s.Spec.Replicas = ptr.To[int32](2) })
			f.mustSync()
			got = f.claimOwners()
			if got["data-web-2"] != tc.scaledDown || got["data-web-0"] != tc.inRange {
				t.Errorf("scaled down: %v, want data-web-2 owned by %q", got, tc.scaledDown)
			}
			// The claim's owners are fixed before the pod goes.
			w := f.writes()
			ci, pi := slices.Index(w, "update persistentvolumeclaims data-web-2"), slices.Index(w, "delete pods web-2")
			if pi < 0 || tc.scaledDown != tc.inRange && (ci < 0 || ci > pi) {
				t.Errorf("writes %q", w)
			}
		})
	}
}

func TestRetentionPolicyChangedLater(t *testing.T) {
	f := newFixture(t, defaultGates, newSet(2, withClaim("data")))
	f.converge()
	f.updateSet(func(s *apps.StatefulSet) {
		s.Spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted = remove
	})
	f.converge()
	got := f.claimOwners()
	if got["data-web-0"] != "StatefulSet/web(controller)" || got["data-web-1"] != "StatefulSet/web(controller)" {
		t.Errorf("claims after the policy change: %v", got)
	}
}

func TestClaimsKeepOtherOwners(t *testing.T) {
	other := v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "data-web-0",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "keep", UID: "cm-uid"}}}}
	f := newFixture(t, defaultGates, newSet(1, withClaim("data"), withRetention(remove, retain)), &other)
	f.converge()
	if got := f.claimOwners()["data-web-0"]; got != "ConfigMap/keep,StatefulSet/web(controller)" {
		t.Errorf("owners %q", got)
	}
	// Another controller: our references go, the policy is ignored, with
	// a Warning.
	claim := f.claims()[0]
	claim.OwnerReferences = append(claim.OwnerReferences, metav1.OwnerReference{APIVersion: "v1", Kind: "Thing", Name: "boss", UID: "boss-uid", Controller: ptr.To(true)})
	if _, err := f.client.CoreV1().PersistentVolumeClaims("ns").Update(f.ctx, &claim, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.takeEvents()
	f.converge()
	if got := f.claimOwners()["data-web-0"]; got != "ConfigMap/keep,Thing/boss" {
		t.Errorf("owners with another controller %q", got)
	}
	if events := strings.Join(f.takeEvents(), "\n"); !strings.Contains(events, "Warning ConflictingController PersistentVolumeClaim data-web-0 has a conflicting OwnerReference") {
		t.Errorf("events:\n%s", events)
	}
}

func TestStaleClaimBlocksCreation(t *testing.T) {
	// A claim still owned by an earlier web-1 (scaled down, its claim not
	// yet collected): the new web-1 waits.
	stale := v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "data-web-1",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "web-1", UID: "old-web-1", Controller: ptr.To(true)}}}}
	f := newFixture(t, defaultGates, newSet(2, withClaim("data"), withRetention(retain, remove), parallel), &stale)
	f.mustSync()
	if got := f.podNames(); got != "web-0" {
		t.Fatalf("pods %s: web-1 must wait for its stale claim", got)
	}
	if err := f.client.CoreV1().PersistentVolumeClaims("ns").Delete(f.ctx, "data-web-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.mustSync()
	if got := f.podNames(); got != "web-0,web-1" {
		t.Fatalf("pods %s", got)
	}
}

func TestClaimCreationFails(t *testing.T) {
	f := newFixture(t, defaultGates, newSet(1, withClaim("data")))
	f.client.PrependReactor("create", "persistentvolumeclaims", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, fmt.Errorf("quota exceeded")
	})
	if err := f.sync(); err == nil {
		t.Fatal("no error")
	}
	if f.podNames() != "" {
		t.Fatal("pod created without its claim")
	}
	events := strings.Join(f.takeEvents(), "\n")
	for _, want := range []string{
		"Warning FailedCreate Create Claim data-web-0 for Pod web-0 in StatefulSet web failed error: quota exceeded",
		"Warning FailedCreate Create Pod web-0 in StatefulSet web failed error: failed to create PVC data-web-0: quota exceeded",
	} {
		if !strings.Contains(events, want) {
			t.Errorf("no %q in\n%s", want, events)
		}
	}
}
