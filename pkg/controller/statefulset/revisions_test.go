package statefulset

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/internal/controller/history"
)

func revisionNumbers(revs []*apps.ControllerRevision) map[string]int64 {
	out := map[string]int64{}
	for _, r := range revs {
		out[r.Name] = r.Revision
	}
	return out
}

func TestRollbackReusesRevision(t *testing.T) {
	f := newFixture(t, defaultGates, newSet(2))
	f.converge()
	f.updateSet(newImage("nginx:2"))
	f.converge()
	revs := f.revisions()
	if len(revs) != 2 {
		t.Fatalf("%d revisions", len(revs))
	}
	first, second := revs[0].Name, revs[1].Name
	// kubectl rollout undo writes the old template back.
	f.updateSet(newImage("nginx:1"))
	f.converge()
	got := revisionNumbers(f.revisions())
	if len(got) != 2 || got[first] != 3 || got[second] != 2 {
		t.Fatalf("revision numbers after the rollback: %v, want %s=3", got, first)
	}
	if revs := f.podRevisions(); !slices.Equal(revs, []string{first, first}) {
		t.Errorf("pods at %v", revs)
	}
	if st := f.set().Status; st.CurrentRevision != first || st.UpdateRevision != first {
		t.Errorf("status %+v", st)
	}
}

func TestHistoryLimit(t *testing.T) {
	f := newFixture(t, defaultGates, newSet(1, func(s *apps.StatefulSet) { s.Spec.RevisionHistoryLimit = ptr.To[int32](1) }))
	f.converge()
	for _, image := range []string{"nginx:2", "nginx:3", "nginx:4"} {
		f.updateSet(newImage(image))
		f.converge()
	}
	revs := f.revisions()
	// The live revision (4) and one of history (3).
	if len(revs) != 2 || revs[0].Revision != 3 || revs[1].Revision != 4 {
		t.Fatalf("revisions %v", revisionNumbers(revs))
	}
}

func TestHistoryKeepsRevisionsInUse(t *testing.T) {
	f := newFixture(t, defaultGates, newSet(3, onDelete, func(s *apps.StatefulSet) { s.Spec.RevisionHistoryLimit = ptr.To[int32](0) }))
	f.converge()
	for _, image := range []string{"nginx:2", "nginx:3"} {
		f.updateSet(newImage(image))
		f.converge()
	}
	// Revision 1 is current and every pod's; 2 is used by nobody.
	if got := revisionNumbers(f.revisions()); len(got) != 2 {
		t.Fatalf("revisions %v, want 1 and 3", got)
	}
}

func TestCollision(t *testing.T) {
	set := newSet(1)
	rev, err := newRevision(set, 1, ptr.To[int32](0))
	if err != nil {
		t.Fatal(err)
	}
	// Another set's revision holds the name with other data.
	taken := rev.DeepCopy()
	taken.Data = runtime.RawExtension{Raw: []byte(`{"other":true}`)}
	taken.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "x", UID: "x-uid", Controller: ptr.To(true)}}
	taken.Labels = map[string]string{"app": "other"}
	f := newFixture(t, defaultGates, set, taken)
	f.converge()
	st := f.set().Status
	if ptr.Deref(st.CollisionCount, 0) != 1 || st.UpdateRevision == rev.Name ||
		st.UpdateRevision != history.Name("web", history.Hash(rev, ptr.To[int32](1))) {
		t.Errorf("status %+v, want collisionCount 1 and the next name", st)
	}
}

func TestOrphanRevisionAdopted(t *testing.T) {
	set := newSet(1)
	rev, err := newRevision(set, 1, ptr.To[int32](0))
	if err != nil {
		t.Fatal(err)
	}
	rev.OwnerReferences = nil
	f := newFixture(t, defaultGates, set, rev)
	f.mustSync()
	w := f.writes()
	if !slices.Contains(w, "patch controllerrevisions "+rev.Name) || slices.ContainsFunc(w, func(s string) bool {
		return strings.HasPrefix(s, "create controllerrevisions")
	}) {
		t.Errorf("writes %q, want the orphan adopted and no new revision", w)
	}
}

// TestRevisionData pins the data layout: the template under
// {"spec":{"template":{"$patch":"replace",...}}}, keys sorted.
func TestRevisionData(t *testing.T) {
	set := newSet(1)
	set.Annotations = map[string]string{"note": "x"}
	rev, err := newRevision(set, 7, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"spec":{"template":{"$patch":"replace","metadata":{"labels":{"app":"web"}},` +
		`"spec":{"containers":[{"image":"nginx:1","imagePullPolicy":"IfNotPresent","name":"app","resources":{},` +
		`"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}],"dnsPolicy":"ClusterFirst",` +
		`"restartPolicy":"Always","schedulerName":"default-scheduler","securityContext":{},"terminationGracePeriodSeconds":30}}}}`
	if got := string(rev.Data.Raw); got != want {
		t.Errorf("data\n%s\nwant\n%s", got, want)
	}
	if rev.Revision != 7 || rev.Annotations["note"] != "x" || rev.Labels["app"] != "web" {
		t.Errorf("revision %+v", rev.ObjectMeta)
	}
	var back map[string]any
	if err := json.Unmarshal(rev.Data.Raw, &back); err != nil {
		t.Fatal(err)
	}
	// Applying it to a set with another template restores the template.
	other := newSet(1, newImage("nginx:9"))
	restored, err := applyRevision(other, rev)
	if err != nil {
		t.Fatal(err)
	}
	if img := restored.Spec.Template.Spec.Containers[0].Image; img != "nginx:1" {
		t.Errorf("restored image %s", img)
	}
}

func TestSemanticRevisionComparison(t *testing.T) {
	set := newSet(1)
	// The revision as an older API server recorded it: without a default
	// added since (the container's terminationMessagePolicy)...
	old := set.DeepCopy()
	old.Spec.Template.Spec.Containers[0].TerminationMessagePolicy = ""
	rev, err := newRevision(old, 1, ptr.To[int32](0))
	if err != nil {
		t.Fatal(err)
	}
	// ... and as older encoders wrote an unset creationTimestamp.
	rev.Data.Raw = []byte(strings.Replace(string(rev.Data.Raw), `"metadata":{`, `"metadata":{"creationTimestamp":null,`, 1))
	set.Status = apps.StatefulSetStatus{CurrentRevision: rev.Name, UpdateRevision: rev.Name, CollisionCount: ptr.To[int32](0)}
	for _, gates := range []Features{defaultGates, {MaxUnavailable: true}} {
		f := newFixture(t, gates, set.DeepCopy(), rev.DeepCopy())
		f.mustSync()
		created := slices.ContainsFunc(f.writes(), func(s string) bool { return strings.HasPrefix(s, "create controllerrevisions") })
		if created == gates.SemanticRevisions {
			t.Errorf("semantic comparison %v: created a revision: %v", gates.SemanticRevisions, created)
		}
	}
}

func TestDefaultTemplate(t *testing.T) {
	tmpl := v1.PodTemplateSpec{Spec: v1.PodSpec{
		DeprecatedServiceAccount: "sa",
		Containers: []v1.Container{{
			Name: "a", Image: "example.com:5000/app",
			Ports:          []v1.ContainerPort{{ContainerPort: 80}},
			ReadinessProbe: &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{}}},
		}},
		Volumes: []v1.Volume{{Name: "v"}, {Name: "s", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{}}}},
	}}
	defaultTemplate(&tmpl)
	c := tmpl.Spec.Containers[0]
	checks := map[string][2]any{
		"serviceAccountName": {tmpl.Spec.ServiceAccountName, "sa"},
		"pull policy":        {c.ImagePullPolicy, v1.PullAlways},
		"port protocol":      {c.Ports[0].Protocol, v1.ProtocolTCP},
		"probe period":       {c.ReadinessProbe.PeriodSeconds, int32(10)},
		"probe path":         {c.ReadinessProbe.HTTPGet.Path, "/"},
		"emptyDir":           {tmpl.Spec.Volumes[0].EmptyDir != nil, true},
		"secret mode":        {*tmpl.Spec.Volumes[1].Secret.DefaultMode, int32(0o644)},
	}
	for what, c := range checks {
		if c[0] != c[1] {
			t.Errorf("%s = %v, want %v", what, c[0], c[1])
		}
	}
	for image, want := range map[string]string{
		"nginx": "latest", "nginx:1.27": "1.27", "nginx@sha256:abc": "", "reg:5000/a/b:v1": "v1",
		"localhost/x": "latest", "": "", "Upper/case": "",
	} {
		if got := imageTag(image); got != want {
			t.Errorf("imageTag(%q) = %q, want %q", image, got, want)
		}
	}
}

// TestRevisionNamesMatchUpstream pins revision names (the hash of the
// data bytes) to those upstream v1.37.1's controller manager gave the same
// StatefulSets on a local cluster (test/parity/scenarios
// statefulset-max-unavailable.yaml): any byte of difference in the data
// would change them.
func TestRevisionNamesMatchUpstream(t *testing.T) {
	for name, want := range map[string]string{
		"ordered":  "ordered-7fbf98688c",
		"parallel": "parallel-547fc88fd9",
	} {
		set := newSet(5, func(s *apps.StatefulSet) {
			s.Name = name
			s.Spec.Selector.MatchLabels = map[string]string{"app": name}
			s.Spec.Template.Labels = map[string]string{"app": name}
			s.Spec.Template.Spec.Containers[0].Image = "nginx:1.27"
		})
		rev, err := newRevision(set, 1, ptr.To[int32](0))
		if err != nil {
			t.Fatal(err)
		}
		if rev.Name != want {
			t.Errorf("revision of %s: %s, want upstream's %s", name, rev.Name, want)
		}
	}
}
