package daemonset

import (
	"strings"
	"testing"

	apps "k8s.io/api/apps/v1"

	"github.com/kcm-dev/kcm/test/integration/framework"
)

// TestKubectlRollout runs the real kubectl's rollout status, history and
// undo against a DaemonSet the controller runs. kubectl finds the
// revisions by the DaemonSet's selector and controllerRef, shows a
// revision's template by applying its data, skips an undo whose revision
// data equals (byte for byte) the patch it makes of the current template,
// and rolls back by patching the DaemonSet with that data.
func TestKubectlRollout(t *testing.T) {
	e := setup(t)
	kubectl := framework.NewKubectl(t, e.cfg)
	run := func(args ...string) string {
		t.Helper()
		return kubectl.MustRun(append(args, "--namespace", e.ns)...)
	}
	e.createNode("a", nil)
	e.createNode("b", nil)
	e.createDS("agent")
	e.waitDS("agent", "rolled out", rolledOut)
	e.updateDS("agent", setImage("registry.example/agent:2"))
	e.waitDS("agent", "rolled out at generation 2", func(ds *apps.DaemonSet) bool { return ds.Generation == 2 && rolledOut(ds) })

	if out := run("rollout", "status", "daemonset/agent", "--timeout=60s"); !strings.Contains(out, `daemon set "agent" successfully rolled out`) {
		t.Errorf("rollout status: %q", out)
	}
	wantHistory := func(revs ...string) {
		t.Helper()
		want := "daemonset.apps/agent \nREVISION  CHANGE-CAUSE\n"
		for _, r := range revs {
			want += r + "         <none>\n"
		}
		if out := run("rollout", "history", "daemonset/agent"); out != want+"\n" {
			t.Errorf("rollout history:\n%s\nwant:\n%s", out, want)
		}
	}
	wantHistory("1", "2")
	if out := run("rollout", "history", "daemonset/agent", "--revision=1"); !strings.Contains(out, "registry.example/agent:1") ||
		strings.Contains(out, "registry.example/agent:2") {
		t.Errorf("rollout history --revision=1:\n%s", out)
	}

	// The current revision's data is the patch kubectl makes of the
	// current template.
	if out := run("rollout", "undo", "daemonset/agent", "--to-revision=2"); out != "daemonset.apps/agent skipped rollback (current template already matches revision 2)\n" {
		t.Errorf("rollout undo --to-revision=2: %q", out)
	}

	if out := run("rollout", "undo", "daemonset/agent"); out != "daemonset.apps/agent rolled back\n" {
		t.Errorf("rollout undo: %q", out)
	}
	ds := e.waitDS("agent", "rolled back", func(ds *apps.DaemonSet) bool {
		return ds.Generation == 3 && ds.Spec.Template.Spec.Containers[0].Image == "registry.example/agent:1" && rolledOut(ds)
	})
	for node, ps := range e.pods() {
		for _, p := range ps {
			if p.Spec.Containers[0].Image != "registry.example/agent:1" || p.Labels["pod-template-generation"] != "3" {
				t.Errorf("pod %s on %s: image %s, labels %v", p.Name, node, p.Spec.Containers[0].Image, p.Labels)
			}
		}
	}
	// Revision 1 is revision 3 now, under its old name.
	revs := map[int64]string{}
	for _, r := range e.revisions() {
		revs[r.Revision] = r.Name
	}
	if len(revs) != 2 || revs[3] == "" || revs[2] == "" || revs[3] != "agent-"+e.pods()[e.ns+"-a"][0].Labels[apps.DefaultDaemonSetUniqueLabelKey] {
		t.Errorf("revisions after undo: %v", revs)
	}
	wantHistory("2", "3")
	if out := run("rollout", "undo", "daemonset/agent", "--to-revision=3"); !strings.Contains(out, "skipped rollback") {
		t.Errorf("rollout undo --to-revision=3: %q", out)
	}
	if _, err := kubectl.Run("rollout", "undo", "daemonset/agent", "--to-revision=1", "--namespace", e.ns); err == nil ||
		!strings.Contains(err.Error(), "unable to find specified revision 1 in history") {
		t.Errorf("rollout undo --to-revision=1: %v", err)
	}
	if ds.Status.ObservedGeneration != 3 {
		t.Errorf("status %+v", ds.Status)
	}
}
