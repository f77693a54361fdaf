package daemonset

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/internal/controller/hashing"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

func TestCreatesOnAllNodes(t *testing.T) {
	e := setup(t)
	for _, n := range []string{"a", "b", "c"} {
		e.createNode(n, nil)
	}
	ds := e.createDS("agent")
	got := e.waitDS("agent", "rolled out", rolledOut)
	pods := e.waitPodsOn("a", "b", "c")
	hash := hashing.PodTemplateHash(&ds.Spec.Template, nil)
	wantRef := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent", UID: ds.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
	for node, p := range pods {
		if p.GenerateName != "agent-" || !reflect.DeepEqual(p.OwnerReferences, []metav1.OwnerReference{wantRef}) {
			t.Errorf("pod %s: generateName %q, ownerReferences %+v", p.Name, p.GenerateName, p.OwnerReferences)
		}
		want := map[string]string{"app": "agent", "controller-revision-hash": hash, "pod-template-generation": "1"}
		if !reflect.DeepEqual(p.Labels, want) {
			t.Errorf("pod %s labels %v, want %v", p.Name, p.Labels, want)
		}
		if pinnedNode(&p) != node || p.Spec.NodeName != node {
			t.Errorf("pod %s on %q pinned to %q, want %s", p.Name, p.Spec.NodeName, pinnedNode(&p), node)
		}
		var keys []string
		for _, tol := range p.Spec.Tolerations {
			keys = append(keys, tol.Key+":"+string(tol.Effect))
		}
		for _, want := range []string{"node.kubernetes.io/not-ready:NoExecute", "node.kubernetes.io/unreachable:NoExecute",
			"node.kubernetes.io/disk-pressure:NoSchedule", "node.kubernetes.io/memory-pressure:NoSchedule",
			"node.kubernetes.io/pid-pressure:NoSchedule", "node.kubernetes.io/unschedulable:NoSchedule"} {
			if !slices.Contains(keys, want) {
				t.Errorf("pod %s lacks toleration %s (has %v)", p.Name, want, keys)
			}
		}
	}
	want := apps.DaemonSetStatus{ObservedGeneration: 1, DesiredNumberScheduled: 3, CurrentNumberScheduled: 3,
		NumberReady: 3, NumberAvailable: 3, UpdatedNumberScheduled: 3}
	if !reflect.DeepEqual(got.Status, want) {
		t.Errorf("status %+v, want %+v", got.Status, want)
	}
	revs := e.revisions()
	if len(revs) != 1 || revs[0].Name != "agent-"+hash || revs[0].Revision != 1 || revs[0].Labels["controller-revision-hash"] != hash ||
		revs[0].Labels["app"] != "agent" || !metav1.IsControlledBy(&revs[0], ds) {
		t.Errorf("revisions %+v", revs)
	}
	for _, ev := range e.waitEvents("agent", "SuccessfulCreate", 3) {
		if ev.Source.Component != "daemonset-controller" || !strings.HasPrefix(ev.Message, "Created pod: agent-") {
			t.Errorf("event %+v", ev)
		}
	}
}

func TestSelectedNodesFollowLabelsAndNodes(t *testing.T) {
	e := setup(t)
	edge := map[string]string{"role": "edge"}
	e.createNode("a", nil)
	e.createNode("b", edge)
	e.createNode("c", edge)
	e.createDS("edge", func(ds *apps.DaemonSet) { ds.Spec.Template.Spec.NodeSelector["role"] = "edge" })
	e.waitPodsOn("b", "c")
	e.waitDS("edge", "rolled out on 2", func(ds *apps.DaemonSet) bool { return rolledOut(ds) && ds.Status.DesiredNumberScheduled == 2 })

	// a becomes an edge node, b stops being one.
	for name, role := range map[string]string{"a": "edge", "b": "core"} {
		n, err := e.client.CoreV1().Nodes().Get(e.ctx, e.ns+"-"+name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n.Labels["role"] = role
		if _, err := e.client.CoreV1().Nodes().Update(e.ctx, n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	e.waitPodsOn("a", "c")
	e.waitDS("edge", "rolled out on a and c", func(ds *apps.DaemonSet) bool { return rolledOut(ds) && ds.Status.DesiredNumberScheduled == 2 })

	// A new node gets its pod; a deleted one is counted out at once.
	e.createNode("d", edge)
	e.waitPodsOn("a", "c", "d")
	if err := e.client.CoreV1().Nodes().Delete(e.ctx, e.ns+"-c", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitDS("edge", "desired 2 after the node's deletion", func(ds *apps.DaemonSet) bool {
		return rolledOut(ds) && ds.Status.DesiredNumberScheduled == 2
	})
}

func TestRollingUpdate(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		maxUnavailable, maxSurge intstr.IntOrString
	}{
		{"maxUnavailable", intstr.FromInt32(1), intstr.FromInt32(0)},
		{"maxSurge", intstr.FromInt32(0), intstr.FromString("50%")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := setup(t)
			for _, n := range []string{"a", "b", "c"} {
				e.createNode(n, nil)
			}
			e.createDS("agent", func(ds *apps.DaemonSet) {
				ds.Spec.UpdateStrategy.RollingUpdate = &apps.RollingUpdateDaemonSet{MaxUnavailable: &tc.maxUnavailable, MaxSurge: &tc.maxSurge}
			})
			before := e.waitPodsOn("a", "b", "c")
			e.waitDS("agent", "rolled out", rolledOut)

			ds := e.updateDS("agent", setImage("registry.example/agent:2"))
			hash := hashing.PodTemplateHash(&ds.Spec.Template, nil)
			maxPods := 0
			got := e.waitDS("agent", "rolled out again", func(ds *apps.DaemonSet) bool {
				n := 0
				for _, ps := range e.pods() {
					n += len(ps)
				}
				maxPods = max(maxPods, n)
				return rolledOut(ds) && ds.Status.UpdatedNumberScheduled == 3
			})
			after := e.waitPodsOn("a", "b", "c")
			for node, p := range after {
				if p.Labels["controller-revision-hash"] != hash || p.Labels["pod-template-generation"] != "2" || p.Name == before[node].Name {
					t.Errorf("pod on %s after the update: %s %v", node, p.Name, p.Labels)
				}
			}
			if tc.maxSurge.IntValue() == 0 && tc.maxSurge.Type == intstr.Int && maxPods > 3 {
				t.Errorf("up to %d pods without surge", maxPods)
			}
			if got.Status.ObservedGeneration != 2 {
				t.Errorf("status %+v", got.Status)
			}
			revs := e.revisions()
			slices.SortFunc(revs, func(a, b apps.ControllerRevision) int { return int(a.Revision - b.Revision) })
			if len(revs) != 2 || revs[1].Name != "agent-"+hash || revs[1].Revision != 2 {
				t.Errorf("revisions %v", revs)
			}
		})
	}
}

func TestOnDelete(t *testing.T) {
	e := setup(t)
	for _, n := range []string{"a", "b"} {
		e.createNode(n, nil)
	}
	e.createDS("agent", func(ds *apps.DaemonSet) {
		ds.Spec.UpdateStrategy = apps.DaemonSetUpdateStrategy{Type: apps.OnDeleteDaemonSetStrategyType}
	})
	before := e.waitPodsOn("a", "b")
	e.waitDS("agent", "rolled out", rolledOut)
	e.updateDS("agent", setImage("registry.example/agent:2"))
	e.waitDS("agent", "generation 2 observed, no pod updated", func(ds *apps.DaemonSet) bool {
		return ds.Status.ObservedGeneration == 2 && ds.Status.UpdatedNumberScheduled == 0
	})
	framework.Consistently(t, 2*time.Second, "old pods kept", func() bool {
		now := e.pods()
		return len(now) == 2 && now[e.ns+"-a"][0].Name == before[e.ns+"-a"].Name && now[e.ns+"-b"][0].Name == before[e.ns+"-b"].Name
	})
	if err := e.client.CoreV1().Pods(e.ns).Delete(e.ctx, before[e.ns+"-a"].Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitDS("agent", "one pod updated", func(ds *apps.DaemonSet) bool {
		return ds.Status.UpdatedNumberScheduled == 1 && ds.Status.NumberAvailable == 2
	})
	now := e.waitPodsOn("a", "b")
	if now[e.ns+"-a"].Labels["pod-template-generation"] != "2" || now[e.ns+"-b"].Name != before[e.ns+"-b"].Name {
		t.Errorf("pods after deleting a's: %v", now)
	}
}

func TestAdoptionAfterRestart(t *testing.T) {
	e := setup(t)
	for _, n := range []string{"a", "b"} {
		e.createNode(n, nil)
	}
	ds := e.createDS("agent")
	before := e.waitPodsOn("a", "b")
	e.waitDS("agent", "rolled out", rolledOut)
	revsBefore := e.revisions()

	// The controller stops; the pod on a loses its controllerRef; another
	// controller takes over.
	e.stopController()
	orphaned := before[e.ns+"-a"]
	patch := []byte(`{"metadata":{"ownerReferences":null}}`)
	if _, err := e.client.CoreV1().Pods(e.ns).Patch(e.ctx, orphaned.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.startController())
	framework.Eventually(t, timeout, func() (bool, error) {
		p, err := e.client.CoreV1().Pods(e.ns).Get(e.ctx, orphaned.Name, metav1.GetOptions{})
		return err == nil && metav1.IsControlledBy(p, ds), err
	})
	framework.Consistently(t, 2*time.Second, "same pods and revisions", func() bool {
		now := e.pods()
		return len(now) == 2 && len(now[e.ns+"-a"]) == 1 && now[e.ns+"-a"][0].Name == orphaned.Name &&
			len(now[e.ns+"-b"]) == 1 && now[e.ns+"-b"][0].Name == before[e.ns+"-b"].Name &&
			reflect.DeepEqual(revisionNames(e.revisions()), revisionNames(revsBefore))
	})
}

func revisionNames(revs []apps.ControllerRevision) []string {
	var out []string
	for _, r := range revs {
		out = append(out, r.Name)
	}
	slices.Sort(out)
	return out
}

func TestFailedPodsRecreated(t *testing.T) {
	e := setup(t)
	e.createNode("a", nil)
	e.createDS("agent", setImage(brokenImage))
	events := e.waitEvents("agent", "FailedDaemonPod", 2)
	if !strings.Contains(events[0].Message, "Found failed daemon pod "+e.ns+"/agent-") || events[0].Type != v1.EventTypeWarning {
		t.Errorf("event %+v", events[0])
	}
	// Fixed: the new generation runs.
	e.updateDS("agent", setImage("registry.example/agent:1"))
	e.waitDS("agent", "rolled out", func(ds *apps.DaemonSet) bool { return rolledOut(ds) && ds.Status.ObservedGeneration == 2 })
}
