// Package tainteviction tests the taint-eviction-controller against a real
// kube-apiserver. Nothing runs pods there, so a deleted pod that is bound to
// a node stays, marked with a deletionTimestamp, until the test force-deletes
// it; "evicted" below means "has a deletionTimestamp".
package tainteviction

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/pkg/controller/tainteviction"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const (
	timeout  = 30 * time.Second
	taintKey = "example.com/evict"
)

var evictTaint = v1.Taint{Key: taintKey, Value: "yes", Effect: v1.TaintEffectNoExecute}

// env is one test's controller, namespace and node.
type env struct {
	t      *testing.T
	client kubernetes.Interface
	ns     string
	node   string
}

// setup starts the controller through its real constructor and creates a
// namespace and an untainted node for the test; it cleans up both.
func setup(t *testing.T) *env {
	t.Helper()
	cfg := framework.StartEnv(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	cc := framework.NewControllerContext(t, cfg)
	c, err := tainteviction.New(context.Background(), cc, names.TaintEviction)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if c.Name() != names.TaintEviction {
		t.Errorf("Name() = %q, want %q", c.Name(), names.TaintEviction)
	}
	ctx := context.Background()
	ns, err := client.CoreV1().Namespaces().Create(ctx,
		&v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "te-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node, err := client.CoreV1().Nodes().Create(ctx,
		&v1.Node{ObjectMeta: metav1.ObjectMeta{GenerateName: "te-node-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, client: client, ns: ns.Name, node: node.Name}
	framework.StartController(t, cc, c)
	t.Cleanup(e.cleanup)
	return e
}

// cleanup force-deletes the test's pods and node, so that later tests'
// controllers do not evict them again.
func (e *env) cleanup() {
	ctx := context.Background()
	_ = e.client.CoreV1().Pods(e.ns).DeleteCollection(ctx,
		metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}, metav1.ListOptions{})
	_ = e.client.CoreV1().Nodes().Delete(ctx, e.node, metav1.DeleteOptions{})
}

// createPod creates a pod bound to the test's node.
func (e *env) createPod(name string, tolerations ...v1.Toleration) *v1.Pod {
	e.t.Helper()
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
		Spec: v1.PodSpec{
			NodeName:                     e.node,
			Tolerations:                  tolerations,
			AutomountServiceAccountToken: ptr.To(false),
			Containers:                   []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
	pod, err := e.client.CoreV1().Pods(e.ns).Create(context.Background(), pod, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return pod
}

// setTaints replaces the node's taints.
func (e *env) setTaints(taints ...v1.Taint) {
	e.t.Helper()
	ctx := context.Background()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node, err := e.client.CoreV1().Nodes().Get(ctx, e.node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		node.Spec.Taints = taints
		_, err = e.client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// evicted reports whether the pod has been deleted (it lingers with a
// deletionTimestamp, or is gone).
func (e *env) evicted(name string) (bool, error) {
	pod, err := e.client.CoreV1().Pods(e.ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return pod.DeletionTimestamp != nil, nil
}

func (e *env) waitEvicted(name string) {
	e.t.Helper()
	framework.Eventually(e.t, timeout, func() (bool, error) { return e.evicted(name) })
}

func (e *env) assertNotEvicted(name string) {
	e.t.Helper()
	if gone, err := e.evicted(name); err != nil || gone {
		e.t.Fatalf("pod %s evicted (err %v), want it kept", name, err)
	}
}

// events returns the messages of the TaintManagerEviction Events on the pod.
func (e *env) events(pod string) ([]string, error) {
	list, err := e.client.CoreV1().Events(e.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, ev := range list.Items {
		o := ev.InvolvedObject
		if o.Kind != "Pod" || o.Name != pod || ev.Reason != "TaintManagerEviction" {
			continue
		}
		if ev.Type != v1.EventTypeNormal || ev.Source.Component != names.TaintEviction {
			return nil, fmt.Errorf("event %q has type %q and source %q", ev.Message, ev.Type, ev.Source.Component)
		}
		out = append(out, ev.Message)
	}
	return out, nil
}

func (e *env) waitEvent(pod, format string) {
	e.t.Helper()
	want := fmt.Sprintf(format, e.ns+"/"+pod)
	framework.Eventually(e.t, timeout, func() (bool, error) {
		msgs, err := e.events(pod)
		for _, m := range msgs {
			if m == want {
				return true, nil
			}
		}
		return false, err
	})
}

func tolerate(seconds *int64) v1.Toleration {
	return v1.Toleration{Key: taintKey, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: seconds}
}

func disruptionTarget(pod *v1.Pod) *v1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == v1.DisruptionTarget {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

func TestUntoleratedTaintEvictsPodAfterMarkingIt(t *testing.T) {
	e := setup(t)
	pod := e.createPod("victim", v1.Toleration{Key: "other", Operator: v1.TolerationOpExists})
	w, err := e.client.CoreV1().Pods(e.ns).Watch(context.Background(), metav1.ListOptions{
		FieldSelector: "metadata.name=victim", ResourceVersion: pod.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	// A NoSchedule taint with the same key evicts nothing; the NoExecute one does.
	e.setTaints(v1.Taint{Key: taintKey, Effect: v1.TaintEffectNoSchedule}, evictTaint)

	// Every update before the deletion must be seen in order: the first one
	// carrying a deletionTimestamp must come after one with the condition.
	var marked *v1.Pod // the first update that carries the condition
	deadline := time.After(timeout)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("watch closed")
			}
			if ev.Type != watch.Modified {
				t.Fatalf("unexpected watch event %s: %v", ev.Type, ev.Object)
			}
			p := ev.Object.(*v1.Pod)
			cond := disruptionTarget(p)
			if p.DeletionTimestamp == nil {
				if marked == nil && cond != nil {
					marked = p
				}
				continue
			}
			if marked == nil {
				t.Fatal("pod deleted before its DisruptionTarget condition was set")
			}
			// Deletion bumps the generation; the condition observed the one before.
			if cond.Status != v1.ConditionTrue || cond.Reason != "DeletionByTaintManager" ||
				cond.Message != "Taint manager: deleting due to NoExecute taint" || cond.ObservedGeneration != marked.Generation {
				t.Errorf("DisruptionTarget condition = %+v, want observedGeneration %d", *cond, marked.Generation)
			}
			e.waitEvent("victim", "Marking for deletion Pod %s")
			return
		case <-deadline:
			t.Fatal("pod not evicted")
		}
	}
}

func TestTolerationSecondsDelayEviction(t *testing.T) {
	e := setup(t)
	e.createPod("patient", tolerate(ptr.To[int64](2)))
	start := time.Now()
	e.setTaints(evictTaint)
	e.waitEvicted("patient")
	// The controller cannot have seen the taint before start, so the pod
	// cannot be gone sooner than 2s after it.
	if elapsed := time.Since(start); elapsed < 2*time.Second || elapsed > 15*time.Second {
		t.Errorf("pod evicted %v after the taint, want about 2s", elapsed)
	}
	e.waitEvent("patient", "Marking for deletion Pod %s")
}

func TestToleratingForeverKeepsPod(t *testing.T) {
	e := setup(t)
	e.createPod("forever", tolerate(nil))
	e.createPod("witness", tolerate(ptr.To[int64](1)))
	e.setTaints(evictTaint)

	// The witness goes 1s after the controller saw the taint; by then it had
	// decided about both pods. Half a second more lets any eviction of the
	// first one that was wrongly started reach the API server.
	e.waitEvicted("witness")
	time.Sleep(500 * time.Millisecond)
	e.assertNotEvicted("forever")
	if msgs, err := e.events("forever"); err != nil || len(msgs) != 0 {
		t.Errorf("events on the tolerating pod: %q (err %v)", msgs, err)
	}
}

func TestRemovingTaintCancelsEviction(t *testing.T) {
	e := setup(t)
	const grace = 4 * time.Second
	e.createPod("saved", tolerate(ptr.To[int64](int64(grace/time.Second))))
	e.createPod("witness")
	start := time.Now()
	e.setTaints(evictTaint)

	// The witness is evicted at once, after the controller scheduled both.
	e.waitEvicted("witness")
	e.setTaints()
	e.waitEvent("saved", "Cancelling deletion of Pod %s")

	// Wait out the cancelled deadline (bounded) and check that it stayed
	// cancelled.
	time.Sleep(time.Until(start.Add(grace + time.Second)))
	e.assertNotEvicted("saved")
	msgs, err := e.events("saved")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if strings.HasPrefix(m, "Marking for deletion") {
			t.Errorf("event %q on the pod whose eviction was cancelled", m)
		}
	}
}

func TestDeletingPodCancelsEviction(t *testing.T) {
	e := setup(t)
	e.createPod("leaving", tolerate(ptr.To[int64](60)))
	e.createPod("witness")
	e.setTaints(evictTaint)
	e.waitEvicted("witness")

	if err := e.client.CoreV1().Pods(e.ns).Delete(context.Background(), "leaving",
		metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	e.waitEvent("leaving", "Cancelling deletion of Pod %s")
}
