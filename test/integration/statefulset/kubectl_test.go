package statefulset

import (
	"strings"
	"testing"

	apps "k8s.io/api/apps/v1"

	"github.com/kcm-dev/kcm/test/integration/framework"
)

// TestKubectlRollout runs the real kubectl's rollout status, history and
// undo against a StatefulSet the controller runs. kubectl finds the
// revisions by the set's selector and controllerRef, shows a revision's
// template by applying its data, skips an undo whose revision data equals
// (byte for byte) the patch it makes of the current template, and rolls
// back by patching the set with that data.
func TestKubectlRollout(t *testing.T) {
	e := setup(t)
	e.kubeletOn.Store(true)
	kubectl := framework.NewKubectl(t, e.cfg)
	run := func(args ...string) string {
		t.Helper()
		return kubectl.MustRun(append(args, "--namespace", e.ns)...)
	}
	image := func(s *apps.StatefulSet) string { return s.Spec.Template.Spec.Containers[0].Image }
	complete := func(gen int64) func(*apps.StatefulSet) bool {
		return func(s *apps.StatefulSet) bool {
			st := s.Status
			return s.Generation == gen && st.ObservedGeneration == gen && st.ReadyReplicas == 3 && st.UpdatedReplicas == 3 &&
				st.CurrentRevision == st.UpdateRevision
		}
	}
	e.createSet("web", 3, parallel)
	first := e.waitSet("web", "ready", complete(1)).Status.UpdateRevision
	e.updateSet("web", func(s *apps.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = "registry.example/web:2" })
	second := e.waitSet("web", "rolled out", complete(2)).Status.UpdateRevision

	// The API server defaults rollingUpdate.partition to 0: kubectl reports
	// a partitioned roll out.
	want := "partitioned roll out complete: 3 new pods have been updated...\n"
	if out := run("rollout", "status", "statefulset/web", "--timeout=60s"); out != want {
		t.Errorf("rollout status: %q, want %q", out, want)
	}
	wantHistory := func(revs ...string) {
		t.Helper()
		want := "statefulset.apps/web \nREVISION  CHANGE-CAUSE\n"
		for _, r := range revs {
			want += r + "         <none>\n"
		}
		if out := run("rollout", "history", "statefulset/web"); out != want+"\n" {
			t.Errorf("rollout history:\n%s\nwant:\n%s", out, want)
		}
	}
	wantHistory("1", "2")
	if out := run("rollout", "history", "statefulset/web", "--revision=1"); !strings.Contains(out, "registry.example/web:1") ||
		strings.Contains(out, "registry.example/web:2") {
		t.Errorf("rollout history --revision=1:\n%s", out)
	}

	// The current revision's data is the patch kubectl makes of the
	// current template.
	if out := run("rollout", "undo", "statefulset/web", "--to-revision=2"); out != "statefulset.apps/web skipped rollback (current template already matches revision 2)\n" {
		t.Errorf("rollout undo --to-revision=2: %q", out)
	}

	if out := run("rollout", "undo", "statefulset/web"); out != "statefulset.apps/web rolled back\n" {
		t.Errorf("rollout undo: %q", out)
	}
	set := e.waitSet("web", "rolled back", complete(3))
	if image(set) != "registry.example/web:1" || set.Status.UpdateRevision != first {
		t.Errorf("after undo: image %s, update revision %s, want %s", image(set), set.Status.UpdateRevision, first)
	}
	for _, p := range e.pods() {
		if p.Spec.Containers[0].Image != "registry.example/web:1" || p.Labels[apps.StatefulSetRevisionLabel] != first {
			t.Errorf("pod %s: image %s, labels %v", p.Name, p.Spec.Containers[0].Image, p.Labels)
		}
	}
	// Revision 1 is revision 3 now, under its old name.
	revs := e.revisions()
	if len(revs) != 2 {
		t.Fatalf("%d revisions after undo", len(revs))
	}
	if revs[0].Name != second || revs[0].Revision != 2 || revs[1].Name != first || revs[1].Revision != 3 {
		t.Errorf("revisions after undo: %s=%d %s=%d", revs[0].Name, revs[0].Revision, revs[1].Name, revs[1].Revision)
	}
	wantHistory("2", "3")
	if out := run("rollout", "undo", "statefulset/web", "--to-revision=3"); !strings.Contains(out, "skipped rollback") {
		t.Errorf("rollout undo --to-revision=3: %q", out)
	}
	if _, err := kubectl.Run("rollout", "undo", "statefulset/web", "--to-revision=1", "--namespace", e.ns); err == nil ||
		!strings.Contains(err.Error(), "unable to find specified revision 1 in history") {
		t.Errorf("rollout undo --to-revision=1: %v", err)
	}
}
