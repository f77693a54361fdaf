package deployment

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/internal/controller/hashing"
	"github.com/kcm-dev/kcm/internal/testutil/golden"
)

// nginx gives a Deployment the "nginx" template of the hashing golden
// tests (read from their input, which hack/tools/k8s/deployhash reads
// too), whose pod-template-hash upstream computes as 76f8596b8b.
func nginx(t *testing.T) func(d *apps.Deployment) {
	tmpl := golden.Read[map[string]*v1.PodTemplateSpec](t, "../../../internal/controller/hashing/testdata/golden-templates.json")["nginx"]
	return func(d *apps.Deployment) {
		d.Name = "nginx"
		d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "nginx"}}
		d.Spec.Template = *tmpl.DeepCopy()
	}
}

func checkWrites(t *testing.T, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("writes:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func checkEvents(t *testing.T, f *fixture, want ...string) {
	t.Helper()
	if got := f.events(); !slices.Equal(got, want) {
		t.Errorf("events:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func checkCondition(t *testing.T, d *apps.Deployment, ct apps.DeploymentConditionType, status v1.ConditionStatus, reason, message string) {
	t.Helper()
	c := getCondition(d.Status, ct)
	if c == nil || c.Status != status || c.Reason != reason || (message != "" && c.Message != message) {
		t.Errorf("%s condition %+v, want %s %s %q", ct, c, status, reason, message)
	}
}

func TestSyncCreatesNewReplicaSet(t *testing.T) {
	d := deployment(3, nginx(t), surge("25%"), unavailable("25%"), deadline(600),
		annotated("kubernetes.io/change-cause", "kubectl create"), annotated(v1.LastAppliedConfigAnnotation, "{}"))
	f := newFixture(t, d)
	actions, err := f.syncKey("ns/nginx")
	if err != nil {
		t.Fatal(err)
	}
	checkWrites(t, describe(actions), "create replicasets nginx-76f8596b8b", "update deployments/status nginx")
	checkEvents(t, f, "Normal ScalingReplicaSet Scaled up replica set nginx-76f8596b8b from 0 to 3")

	rs := written[*apps.ReplicaSet](t, actions, "replicasets", "", "nginx-76f8596b8b")
	wantLabels := map[string]string{"app": "nginx", "pod-template-hash": "76f8596b8b"}
	if !maps.Equal(rs.Labels, wantLabels) || !maps.Equal(rs.Spec.Template.Labels, wantLabels) || !maps.Equal(rs.Spec.Selector.MatchLabels, wantLabels) {
		t.Errorf("labels %v, template %v, selector %v; want %v", rs.Labels, rs.Spec.Template.Labels, rs.Spec.Selector.MatchLabels, wantLabels)
	}
	wantAnnotations := map[string]string{
		"kubernetes.io/change-cause": "kubectl create",
		RevisionAnnotation:           "1",
		DesiredReplicasAnnotation:    "3",
		MaxReplicasAnnotation:        "4",
	}
	if !maps.Equal(rs.Annotations, wantAnnotations) {
		t.Errorf("annotations %v, want %v", rs.Annotations, wantAnnotations)
	}
	if *rs.Spec.Replicas != 3 || rs.Namespace != "ns" {
		t.Errorf("replicas %d namespace %s", *rs.Spec.Replicas, rs.Namespace)
	}
	ref := metav1.GetControllerOf(rs)
	if ref == nil || ref.Kind != "Deployment" || ref.APIVersion != "apps/v1" || ref.UID != d.UID || !ptr.Deref(ref.BlockOwnerDeletion, false) {
		t.Errorf("controllerRef %+v", ref)
	}
	if d.Spec.Template.Labels["pod-template-hash"] != "" {
		t.Error("the Deployment's template was modified")
	}

	got := written[*apps.Deployment](t, actions, "deployments", "status", "nginx")
	if got.Annotations[RevisionAnnotation] != "1" {
		t.Errorf("deployment revision %q", got.Annotations[RevisionAnnotation])
	}
	checkCondition(t, got, apps.DeploymentProgressing, v1.ConditionTrue, ReasonNewReplicaSetCreated, `Created new replica set "nginx-76f8596b8b"`)
	checkCondition(t, got, apps.DeploymentAvailable, v1.ConditionFalse, ReasonMinimumReplicasUnavailable, "Deployment does not have minimum availability.")
	if got.Status.ObservedGeneration != 1 || got.Status.Conditions[0].Type != apps.DeploymentProgressing {
		t.Errorf("status %+v", got.Status)
	}
}

func TestSyncHashCollision(t *testing.T) {
	d := deployment(3, nginx(t))
	// Someone else's ReplicaSet holds the name.
	squatter := replicaSet(deployment(1), "nginx-76f8596b8b", "other:1", 1, old, orphaned)
	squatter.Labels = map[string]string{"other": "x"}
	f := newFixture(t, d, squatter)
	actions, err := f.syncKey("ns/nginx")
	if !apierrors.IsAlreadyExists(err) {
		t.Fatalf("err = %v, want AlreadyExists", err)
	}
	checkWrites(t, describe(actions), "create replicasets nginx-76f8596b8b", "update deployments/status nginx")
	got := written[*apps.Deployment](t, actions, "deployments", "status", "nginx")
	if ptr.Deref(got.Status.CollisionCount, 0) != 1 {
		t.Errorf("collisionCount %v, want 1", got.Status.CollisionCount)
	}
	checkEvents(t, f)
}

func TestSyncRollingUpdateStep(t *testing.T) {
	d := deployment(10, surge("3"), unavailable("2"), image("img:2"), annotated(RevisionAnnotation, "1"))
	oldRS := replicaSet(d, "web-old", "img:1", 10, old, rev(1), sized(10, 13), running(10))
	f := newFixture(t, d, oldRS)
	actions, err := f.sync()
	if err != nil {
		t.Fatal(err)
	}
	newName := replicaSetName("web", podTemplateHash(d))
	checkWrites(t, describe(actions),
		"create replicasets "+newName, "update replicasets web-old", "update deployments/status web")
	checkEvents(t, f,
		"Normal ScalingReplicaSet Scaled up replica set "+newName+" from 0 to 3",
		"Normal ScalingReplicaSet Scaled down replica set web-old from 10 to 8")
	newRS := written[*apps.ReplicaSet](t, actions, "replicasets", "", newName)
	if newRS.Annotations[RevisionAnnotation] != "2" || *newRS.Spec.Replicas != 3 {
		t.Errorf("new replica set: revision %s, replicas %d", newRS.Annotations[RevisionAnnotation], *newRS.Spec.Replicas)
	}
	got := written[*apps.Deployment](t, actions, "deployments", "status", "web")
	if got.Annotations[RevisionAnnotation] != "2" {
		t.Errorf("deployment revision %s", got.Annotations[RevisionAnnotation])
	}
	// Status from the ReplicaSets as cached: the old one still runs 10.
	if got.Status.Replicas != 10 || got.Status.UpdatedReplicas != 0 || got.Status.AvailableReplicas != 10 || got.Status.UnavailableReplicas != 3 {
		t.Errorf("status %+v", got.Status)
	}
	if got.Status.TerminatingReplicas == nil || *got.Status.TerminatingReplicas != 0 {
		t.Errorf("terminatingReplicas %v", got.Status.TerminatingReplicas)
	}
	// No progress deadline: no Progressing condition.
	if getCondition(got.Status, apps.DeploymentProgressing) != nil {
		t.Error("Progressing condition without a progress deadline")
	}
}

func podTemplateHash(d *apps.Deployment) string {
	return hashing.PodTemplateHash(&d.Spec.Template, d.Status.CollisionCount)
}

func TestSyncRollingUpdateFinishes(t *testing.T) {
	d := deployment(3, surge("1"), unavailable("0"), image("img:2"), historyLimit(1), deadline(600),
		annotated(RevisionAnnotation, "3"), withStatus(apps.DeploymentStatus{ObservedGeneration: 1, Replicas: 4, UpdatedReplicas: 3,
			ReadyReplicas: 4, AvailableReplicas: 4, TerminatingReplicas: ptr.To[int32](0), Conditions: []apps.DeploymentCondition{
				newCondition(apps.DeploymentProgressing, v1.ConditionTrue, ReasonReplicaSetUpdated, "x", t0.Add(-time.Minute)),
				newCondition(apps.DeploymentAvailable, v1.ConditionTrue, ReasonMinimumReplicasAvailable, "Deployment has minimum availability.", t0.Add(-time.Minute)),
			}}))
	name := replicaSetName("web", podTemplateHash(d))
	newRS := replicaSet(d, name, "img:2", 3, newer, rev(3), sized(3, 4), running(3))
	oldRS := replicaSet(d, "web-old", "img:1", 1, old, rev(2), sized(3, 4), running(1))
	older1 := replicaSet(d, "web-older", "img:0", 0, older, rev(1), sized(3, 4), running(0))
	f := newFixture(t, d, newRS, oldRS, older1)

	// Step 1: the last old replica goes.
	actions, err := f.sync()
	if err != nil {
		t.Fatal(err)
	}
	checkWrites(t, describe(actions), "update replicasets web-old")
	checkEvents(t, f, "Normal ScalingReplicaSet Scaled down replica set web-old from 1 to 0")

	// Step 2: the old ReplicaSet reports no pods any more; the rollout is
	// complete, and the history beyond one old ReplicaSet is deleted.
	oldRS = replicaSet(d, "web-old", "img:1", 0, old, rev(2), sized(3, 4), running(0))
	f = newFixture(t, d, newRS, oldRS, older1)
	actions, err = f.sync()
	if err != nil {
		t.Fatal(err)
	}
	checkWrites(t, describe(actions), "update deployments/status web")
	got := written[*apps.Deployment](t, actions, "deployments", "status", "web")
	checkCondition(t, got, apps.DeploymentProgressing, v1.ConditionTrue, ReasonNewRSAvailable, `ReplicaSet "`+name+`" has successfully progressed.`)

	// Step 3: with that status stored, the cleanup happens and nothing else
	// is written.
	f = newFixture(t, got, newRS, oldRS, older1)
	actions, err = f.sync()
	if err != nil {
		t.Fatal(err)
	}
	checkWrites(t, describe(actions), "delete replicasets web-older")

	// Step 4: steady state: no writes at all.
	f = newFixture(t, got, newRS, oldRS)
	actions, err = f.sync()
	if err != nil {
		t.Fatal(err)
	}
	checkWrites(t, describe(actions))
	checkEvents(t, f)
}

func TestSyncRecreate(t *testing.T) {
	d := deployment(3, recreate, image("img:2"), annotated(RevisionAnnotation, "1"))
	pod := func(phase v1.PodPhase) *v1.Pod {
		return &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Labels: map[string]string{"app": "web"},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-old", UID: "web-old-uid", Controller: ptr.To(true)}}},
			Status: v1.PodStatus{Phase: phase},
		}
	}
	newName := replicaSetName("web", podTemplateHash(d))
	tests := []struct {
		name   string
		oldRS  *apps.ReplicaSet
		pods   []runtime.Object
		writes []string
	}{
		{name: "scale old down first", oldRS: replicaSet(d, "web-old", "img:1", 3, old, rev(1), sized(3, 3), running(3)),
			writes: []string{"update replicasets web-old", "update deployments/status web"}},
		{name: "old pods still reported", oldRS: replicaSet(d, "web-old", "img:1", 0, old, rev(1), sized(3, 3), func(rs *apps.ReplicaSet) { rs.Status.Replicas = 1 }),
			writes: []string{"update deployments/status web"}},
		{name: "an old pod still running", oldRS: replicaSet(d, "web-old", "img:1", 0, old, rev(1), sized(3, 3)),
			pods: []runtime.Object{pod(v1.PodRunning)}, writes: []string{"update deployments/status web"}},
		{name: "old pods gone: new one created", oldRS: replicaSet(d, "web-old", "img:1", 0, old, rev(1), sized(3, 3)),
			pods: []runtime.Object{pod(v1.PodSucceeded)}, writes: []string{"create replicasets " + newName, "update deployments/status web"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, append([]runtime.Object{d, tc.oldRS}, tc.pods...)...)
			actions, err := f.sync()
			if err != nil {
				t.Fatal(err)
			}
			checkWrites(t, describe(actions), tc.writes...)
		})
	}
}

func TestSyncPauseAndResume(t *testing.T) {
	d := deployment(3, deadline(600), paused, image("img:2"), annotated(RevisionAnnotation, "1"))
	oldRS := replicaSet(d, "web-old", "img:1", 3, old, rev(1), sized(3, 3), running(3))
	f := newFixture(t, d, oldRS)
	actions, err := f.sync()
	if err != nil {
		t.Fatal(err)
	}
	// Paused: no rollout, only the condition.
	checkWrites(t, describe(actions), "update deployments/status web")
	got := written[*apps.Deployment](t, actions, "deployments", "status", "web")
	checkCondition(t, got, apps.DeploymentProgressing, v1.ConditionUnknown, ReasonDeploymentPaused, "Deployment is paused")
	checkCondition(t, got, apps.DeploymentAvailable, v1.ConditionTrue, ReasonMinimumReplicasAvailable, "")

	resumed := got.DeepCopy()
	resumed.Spec.Paused = false
	f = newFixture(t, resumed, oldRS)
	actions, err = f.sync()
	if err != nil {
		t.Fatal(err)
	}
	newName := replicaSetName("web", podTemplateHash(d))
	checkWrites(t, describe(actions), "create replicasets "+newName, "update replicasets web-old", "update deployments/status web")
	got = written[*apps.Deployment](t, actions, "deployments", "status", "web")
	// The resume is recorded; the new ReplicaSet does not overwrite the
	// condition (it exists already, with another status).
	checkCondition(t, got, apps.DeploymentProgressing, v1.ConditionTrue, ReasonNewReplicaSetCreated, "")
}

func TestSyncScalingEvent(t *testing.T) {
	d := deployment(5, surge("1"), annotated(RevisionAnnotation, "1"))
	name := replicaSetName("web", podTemplateHash(d))
	rs := replicaSet(d, name, "img:1", 3, old, rev(1), sized(3, 4), running(3))
	f := newFixture(t, d, rs)
	actions, err := f.sync()
	if err != nil {
		t.Fatal(err)
	}
	checkWrites(t, describe(actions), "update replicasets "+name, "update deployments/status web")
	checkEvents(t, f, "Normal ScalingReplicaSet Scaled up replica set "+name+" from 3 to 5")
	scaled := written[*apps.ReplicaSet](t, actions, "replicasets", "", name)
	if scaled.Annotations[DesiredReplicasAnnotation] != "5" || scaled.Annotations[MaxReplicasAnnotation] != "6" {
		t.Errorf("annotations %v", scaled.Annotations)
	}
}

func TestSyncAdoptsOrphan(t *testing.T) {
	d := deployment(2, annotated(RevisionAnnotation, "1"))
	name := replicaSetName("web", podTemplateHash(d))
	orphan := replicaSet(d, name, "img:1", 2, old, rev(1), sized(2, 2), running(2), orphaned)
	other := replicaSet(d, "web-theirs", "img:9", 1, old, func(rs *apps.ReplicaSet) {
		rs.OwnerReferences[0].UID = "someone-else"
	})
	f := newFixture(t, d, orphan, other)
	actions, err := f.sync()
	if err != nil {
		t.Fatal(err)
	}
	got := describe(actions)
	if len(got) == 0 || got[0] != "patch replicasets "+name {
		t.Fatalf("writes %v, want the adoption patch first", got)
	}
	var sawGet bool
	for _, a := range f.client.Actions() {
		if a.GetVerb() == "get" && a.GetResource().Resource == "deployments" {
			sawGet = true
		}
	}
	if !sawGet {
		t.Error("adopted without an uncached GET of the deployment")
	}
	for _, w := range got {
		if strings.Contains(w, "web-theirs") {
			t.Errorf("touched another controller's ReplicaSet: %s", w)
		}
	}
}

func TestSyncUpdatesExistingNewReplicaSet(t *testing.T) {
	d := deployment(2, deadline(600), annotated("kubernetes.io/change-cause", "v2"), func(d *apps.Deployment) { d.Spec.MinReadySeconds = 5 })
	name := replicaSetName("web", podTemplateHash(d))
	newRS := replicaSet(d, name, "img:1", 2, old, rev(1), sized(2, 2), running(2))
	prev := replicaSet(d, "web-prev", "img:0", 0, older, rev(4))
	f := newFixture(t, d, newRS, prev)
	actions, err := f.sync()
	if err != nil {
		t.Fatal(err)
	}
	checkWrites(t, describe(actions), "update replicasets "+name, "update deployments/status web")
	rs := written[*apps.ReplicaSet](t, actions, "replicasets", "", name)
	if rs.Annotations[RevisionAnnotation] != "5" || rs.Annotations[RevisionHistoryAnnotation] != "1" ||
		rs.Annotations["kubernetes.io/change-cause"] != "v2" || rs.Spec.MinReadySeconds != 5 {
		t.Errorf("replica set %v minReadySeconds %d", rs.Annotations, rs.Spec.MinReadySeconds)
	}
	got := written[*apps.Deployment](t, actions, "deployments", "status", "web")
	if got.Annotations[RevisionAnnotation] != "5" {
		t.Errorf("deployment revision %q", got.Annotations[RevisionAnnotation])
	}
	checkCondition(t, got, apps.DeploymentProgressing, v1.ConditionTrue, ReasonNewRSAvailable, "")
}

func TestSyncSelectingAll(t *testing.T) {
	d := deployment(1, func(d *apps.Deployment) { d.Spec.Selector = &metav1.LabelSelector{}; d.Generation = 3 })
	f := newFixture(t, d)
	actions, err := f.sync()
	if err != nil {
		t.Fatal(err)
	}
	checkWrites(t, describe(actions), "update deployments/status web")
	checkEvents(t, f, "Warning SelectingAll This deployment is selecting all pods. A non-empty selector is required.")
}

func TestSyncDeletedDeployment(t *testing.T) {
	f := newFixture(t)
	actions, err := f.syncKey("ns/gone")
	if err != nil || len(actions) != 0 {
		t.Errorf("actions %v, err %v", describe(actions), err)
	}
}

func TestSyncBeingDeletedOnlyReportsStatus(t *testing.T) {
	d := deployment(3, image("img:2"), func(d *apps.Deployment) { d.DeletionTimestamp = &metav1.Time{Time: t0} })
	oldRS := replicaSet(d, "web-old", "img:1", 3, old, rev(1), sized(3, 3), running(3))
	f := newFixture(t, d, oldRS)
	actions, err := f.sync()
	if err != nil {
		t.Fatal(err)
	}
	checkWrites(t, describe(actions), "update deployments/status web")
}

func TestRollbackAnnotation(t *testing.T) {
	d := deployment(2, annotated(RevisionAnnotation, "2"), annotated(apps.DeprecatedRollbackTo, "0"), image("img:2"))
	name := replicaSetName("web", podTemplateHash(d))
	cur := replicaSet(d, name, "img:2", 2, newer, rev(2), sized(2, 2), running(2))
	prev := replicaSet(d, "web-prev", "img:1", 0, old, rev(1), rsAnnotated("kubernetes.io/change-cause", "v1"))
	f := newFixture(t, d, cur, prev)
	actions, err := f.sync()
	if err != nil {
		t.Fatal(err)
	}
	checkWrites(t, describe(actions), "update deployments web")
	checkEvents(t, f, `Normal DeploymentRollback Rolled back deployment "web" to revision 1`)
	got := written[*apps.Deployment](t, actions, "deployments", "", "web")
	if got.Spec.Template.Spec.Containers[0].Image != "img:1" || got.Spec.Template.Labels["pod-template-hash"] != "" {
		t.Errorf("template %+v", got.Spec.Template)
	}
	if _, ok := got.Annotations[apps.DeprecatedRollbackTo]; ok || got.Annotations["kubernetes.io/change-cause"] != "v1" || got.Annotations[RevisionAnnotation] != "2" {
		t.Errorf("annotations %v", got.Annotations)
	}
}

// A sync that starts from the controller's own last write, because the
// cache lags behind it, ends as upstream's does after the conflict it
// would run into: the new ReplicaSet is created and the revision
// recorded, but not the NewReplicaSetCreated condition.
func TestSyncFromOwnWriteSkipsCreatedCondition(t *testing.T) {
	complete := newCondition(apps.DeploymentProgressing, v1.ConditionTrue, ReasonNewRSAvailable, `ReplicaSet "web-old" has successfully progressed.`, t0)
	cached := deployment(2, recreate, deadline(600), image("img:2"), annotated(RevisionAnnotation, "1"),
		withStatus(apps.DeploymentStatus{Conditions: []apps.DeploymentCondition{complete}}))
	cached.ResourceVersion = "5"
	oldRS := replicaSet(cached, "web-old", "img:1", 0, old, rev(1), sized(2, 2))
	name := replicaSetName("web", podTemplateHash(cached))

	for _, behind := range []bool{false, true} {
		f := newFixture(t, cached, oldRS)
		if behind {
			own := cached.DeepCopy()
			own.ResourceVersion = "7"
			f.c.written.Record("ns/web", own)
		}
		actions, err := f.sync()
		if err != nil {
			t.Fatal(err)
		}
		checkWrites(t, describe(actions), "create replicasets "+name, "update deployments/status web")
		got := written[*apps.Deployment](t, actions, "deployments", "status", "web")
		if got.ResourceVersion != map[bool]string{false: "5", true: "7"}[behind] {
			t.Errorf("behind %v: wrote at resourceVersion %s", behind, got.ResourceVersion)
		}
		if got.Annotations[RevisionAnnotation] != "2" {
			t.Errorf("behind %v: revision %s", behind, got.Annotations[RevisionAnnotation])
		}
		if behind {
			checkCondition(t, got, apps.DeploymentProgressing, v1.ConditionTrue, ReasonNewRSAvailable, complete.Message)
		} else {
			checkCondition(t, got, apps.DeploymentProgressing, v1.ConditionTrue, ReasonNewReplicaSetCreated, `Created new replica set "`+name+`"`)
		}
	}
}
