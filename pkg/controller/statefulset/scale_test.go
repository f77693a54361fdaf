package statefulset

import (
	"slices"
	"strings"
	"testing"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestOrderedReadyCreatesOneAtATime(t *testing.T) {
	f := newFixture(t, defaultGates, newSet(3))
	f.mustSync()
	if got := f.podNames(); got != "web-0" {
		t.Fatalf("after the first sync: pods %s, want web-0", got)
	}
	// web-0 is Pending: nothing more.
	f.mustSync()
	if got := f.podNames(); got != "web-0" {
		t.Fatalf("with web-0 pending: pods %s", got)
	}
	// Running but not ready: still nothing.
	f.setPod("web-0", v1.PodRunning, false)
	f.mustSync()
	if got := f.podNames(); got != "web-0" {
		t.Fatalf("with web-0 not ready: pods %s", got)
	}
	f.setPod("web-0", v1.PodRunning, true)
	f.mustSync()
	if got := f.podNames(); got != "web-0,web-1" {
		t.Fatalf("with web-0 ready: pods %s", got)
	}
	f.converge()
	if got := f.podNames(); got != "web-0,web-1,web-2" {
		t.Fatalf("converged: pods %s", got)
	}
	st := f.set().Status
	rev := f.revisions()
	if len(rev) != 1 {
		t.Fatalf("%d revisions, want 1", len(rev))
	}
	want := apps.StatefulSetStatus{ObservedGeneration: 1, Replicas: 3, ReadyReplicas: 3, AvailableReplicas: 3,
		CurrentReplicas: 3, UpdatedReplicas: 3, CurrentRevision: rev[0].Name, UpdateRevision: rev[0].Name, CollisionCount: ptr.To[int32](0)}
	if !statusEqual(st, want) {
		t.Errorf("status = %+v\nwant     %+v", st, want)
	}
	events := strings.Join(f.takeEvents(), "\n")
	for _, e := range []string{
		"Normal SuccessfulCreate Create Pod web-0 in StatefulSet web successful",
		"Normal SuccessfulCreate Create Pod web-2 in StatefulSet web successful",
	} {
		if !strings.Contains(events, e) {
			t.Errorf("no Event %q in\n%s", e, events)
		}
	}
}

func statusEqual(a, b apps.StatefulSetStatus) bool {
	return a.ObservedGeneration == b.ObservedGeneration && a.Replicas == b.Replicas && a.ReadyReplicas == b.ReadyReplicas &&
		a.AvailableReplicas == b.AvailableReplicas && a.CurrentReplicas == b.CurrentReplicas && a.UpdatedReplicas == b.UpdatedReplicas &&
		a.CurrentRevision == b.CurrentRevision && a.UpdateRevision == b.UpdateRevision && ptr.Deref(a.CollisionCount, -1) == ptr.Deref(b.CollisionCount, -1)
}

func TestPodIdentity(t *testing.T) {
	f := newFixture(t, defaultGates, newSet(1, withStart(5), withClaim("data")))
	f.mustSync()
	pod := f.pod("web-5")
	rev := f.revisions()[0]
	checks := map[string][2]string{
		"generateName":  {pod.GenerateName, "web-"},
		"hostname":      {pod.Spec.Hostname, "web-5"},
		"subdomain":     {pod.Spec.Subdomain, "web-svc"},
		"pod-name":      {pod.Labels[apps.StatefulSetPodNameLabel], "web-5"},
		"pod-index":     {pod.Labels[apps.PodIndexLabel], "5"},
		"revision":      {pod.Labels[apps.StatefulSetRevisionLabel], rev.Name},
		"app":           {pod.Labels["app"], "web"},
		"volume":        {pod.Spec.Volumes[0].Name, "data"},
		"claim":         {pod.Spec.Volumes[0].PersistentVolumeClaim.ClaimName, "data-web-5"},
		"owner":         {pod.OwnerReferences[0].Name + "/" + string(pod.OwnerReferences[0].UID), "web/set-uid"},
		"owner kind":    {pod.OwnerReferences[0].Kind, "StatefulSet"},
		"revision name": {rev.Name, "web-" + rev.Labels["controller.kubernetes.io/hash"]},
	}
	for what, c := range checks {
		if c[0] != c[1] {
			t.Errorf("%s = %q, want %q", what, c[0], c[1])
		}
	}
	claims := f.claims()
	if len(claims) != 1 || claims[0].Name != "data-web-5" || claims[0].Labels["app"] != "web" || claims[0].Labels["tier"] != "data" {
		t.Errorf("claims = %+v", claims)
	}
	if len(claims[0].OwnerReferences) != 0 {
		t.Errorf("Retain policy claim has owners %v", claims[0].OwnerReferences)
	}
	// The claim is created before the pod.
	if w := f.writes(); len(w) < 3 || w[1] != "create persistentvolumeclaims data-web-5" || w[2] != "create pods web-5" {
		t.Errorf("writes = %q", w)
	}
}

func TestParallelCreatesAll(t *testing.T) {
	f := newFixture(t, defaultGates, newSet(5, parallel))
	f.mustSync()
	if got := f.podNames(); got != "web-0,web-1,web-2,web-3,web-4" {
		t.Fatalf("pods %s", got)
	}
	// Scale down with pods not ready: all go at once.
	f.updateSet(func(s *apps.StatefulSet) { s.Spec.Replicas = ptr.To[int32](2) })
	f.mustSync()
	if got := f.podNames(); got != "web-0,web-1" {
		t.Fatalf("after scale-down: pods %s", got)
	}
}

func TestOrderedReadyScaleDown(t *testing.T) {
	f := newFixture(t, defaultGates, newSet(4))
	f.converge()
	f.updateSet(func(s *apps.StatefulSet) { s.Spec.Replicas = ptr.To[int32](1) })
	f.mustSync()
	if got := f.podNames(); got != "web-0,web-1,web-2" {
		t.Fatalf("one deletion per sync, highest first: pods %s", got)
	}
	// An unhealthy replica halts the scale-down.
	f.setPod("web-0", v1.PodRunning, false)
	f.mustSync()
	if got := f.podNames(); got != "web-0,web-1,web-2" {
		t.Fatalf("with web-0 unready: pods %s", got)
	}
	f.setPod("web-0", v1.PodRunning, true)
	// An unhealthy condemned pod that is not the first unavailable one
	// halts it too; the first unavailable one is deleted.
	f.setPod("web-1", v1.PodRunning, false)
	f.setPod("web-2", v1.PodRunning, false)
	f.mustSync()
	if got := f.podNames(); got != "web-0,web-1,web-2" {
		t.Fatalf("with web-1 and web-2 unready: pods %s", got)
	}
	f.setPod("web-1", v1.PodRunning, true)
	f.mustSync()
	if got := f.podNames(); got != "web-0,web-1" {
		t.Fatalf("web-2 the first unavailable: pods %s", got)
	}
	f.mustSync()
	if got := f.podNames(); got != "web-0" {
		t.Fatalf("pods %s", got)
	}
	// The status of the sync that deleted counts the pod it deleted (the
	// cache still holds it); the next one does not.
	f.mustSync()
	if st := f.set().Status; st.Replicas != 1 || st.ReadyReplicas != 1 {
		t.Errorf("status %+v", st)
	}
}

func TestFailedPodRecreated(t *testing.T) {
	for _, ph := range []v1.PodPhase{v1.PodFailed, v1.PodSucceeded} {
		t.Run(string(ph), func(t *testing.T) {
			f := newFixture(t, defaultGates, newSet(2))
			f.converge()
			old := f.pod("web-0").UID
			f.setPod("web-0", ph, false)
			f.mustSync()
			if w := f.writes(); !slices.Contains(w, "delete pods web-0") || slices.Contains(w, "create pods web-0") {
				t.Fatalf("writes = %q, want the failed pod deleted only", w)
			}
			f.mustSync()
			if f.pod("web-0").UID == old {
				t.Fatal("web-0 not recreated")
			}
			events := strings.Join(f.takeEvents(), "\n")
			if !strings.Contains(events, "Normal SuccessfulDelete Delete Pod web-0 in StatefulSet web successful") {
				t.Errorf("events:\n%s", events)
			}
		})
	}
}

func TestPodsOfOthersAndStrangersIgnored(t *testing.T) {
	stranger := &v1.Pod{}
	stranger.Namespace, stranger.Name = "ns", "web-abc"
	stranger.Labels = map[string]string{"app": "web"}
	f := newFixture(t, defaultGates, newSet(1), stranger)
	f.mustSync()
	if w := f.writes(); slices.Contains(w, "patch pods web-abc") {
		t.Errorf("adopted a pod without an ordinal: %q", w)
	}
	// An orphan member is adopted.
	orphan := &v1.Pod{}
	orphan.Namespace, orphan.Name = "ns", "web-1"
	orphan.Labels = map[string]string{"app": "web"}
	orphan.Status.Phase = v1.PodRunning
	if _, err := f.client.CoreV1().Pods("ns").Create(f.ctx, orphan, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.mustSync()
	if w := f.writes(); !slices.Contains(w, "patch pods web-1") {
		t.Errorf("orphan web-1 not adopted: %q", w)
	}
}
