// Package podgc tests the pod-garbage-collector-controller against a real
// kube-apiserver. The collection period and the quarantine are shortened
// through podgc.NewWithOptions; nothing else differs from New.
package podgc

import (
	"context"
	"sort"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/pkg/controller/podgc"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const timeout = 30 * time.Second

// start runs the controller with opts and returns an admin client.
func start(t *testing.T, opts podgc.Options) kubernetes.Interface {
	t.Helper()
	cfg := framework.StartEnv(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	cc := framework.NewControllerContext(t, cfg)
	c, err := podgc.NewWithOptions(context.Background(), cc, names.PodGarbageCollector, opts)
	if err != nil {
		t.Fatalf("NewWithOptions: %v", err)
	}
	if c.Name() != names.PodGarbageCollector {
		t.Errorf("Name() = %q", c.Name())
	}
	framework.StartController(t, cc, c)
	return client
}

func createNamespace(t *testing.T, client kubernetes.Interface) string {
	t.Helper()
	ns, err := client.CoreV1().Namespaces().Create(context.Background(),
		&v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "podgc-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

func createNode(t *testing.T, client kubernetes.Interface, name string) {
	t.Helper()
	_, err := client.CoreV1().Nodes().Create(context.Background(), &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// createPod creates a pod bound to node and sets its phase.
func createPod(t *testing.T, client kubernetes.Interface, ns, name, node string, phase v1.PodPhase) *v1.Pod {
	t.Helper()
	ctx := context.Background()
	pod, err := client.CoreV1().Pods(ns).Create(ctx, &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PodSpec{
			NodeName:                     node,
			AutomountServiceAccountToken: ptr.To(false),
			Containers:                   []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Status.Phase = phase
	pod, err = client.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pod
}

func podNames(t *testing.T, client kubernetes.Interface, ns string) []string {
	t.Helper()
	list, err := client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range list.Items {
		out = append(out, p.Name)
	}
	sort.Strings(out)
	return out
}

func TestTerminatedPodsOverThresholdCollectedOldestFirst(t *testing.T) {
	client := kubernetes.NewForConfigOrDie(framework.StartEnv(t))
	ns := createNamespace(t, client)
	createNode(t, client, "podgc-node")
	// Created in this order, a second apart (creation timestamps have a
	// resolution of one second), so that age and name order disagree.
	for i, name := range []string{"d", "c", "b", "a"} {
		if i > 0 {
			time.Sleep(1100 * time.Millisecond)
		}
		createPod(t, client, ns, name, "podgc-node", v1.PodSucceeded)
	}
	createPod(t, client, ns, "running", "podgc-node", v1.PodRunning)

	start(t, podgc.Options{TerminatedPodThreshold: 2, Period: 200 * time.Millisecond})
	want := []string{"a", "b", "running"}
	framework.Eventually(t, timeout, func() (bool, error) {
		got := podNames(t, client, ns)
		return len(got) == len(want) && got[0] == want[0] && got[1] == want[1] && got[2] == want[2], nil
	})
	// Clean up, so that later tests see no terminated pods.
	for _, name := range []string{"a", "b", "running"} {
		_ = client.CoreV1().Pods(ns).Delete(context.Background(), name, *metav1.NewDeleteOptions(0))
	}
}

func TestOrphanedPodCollectedAfterQuarantine(t *testing.T) {
	const quarantine = 3 * time.Second
	client := kubernetes.NewForConfigOrDie(framework.StartEnv(t))
	ctx := context.Background()
	ns := createNamespace(t, client)
	createNode(t, client, "podgc-node")
	kept := createPod(t, client, ns, "kept", "podgc-node", v1.PodRunning)
	orphan := createPod(t, client, ns, "orphan", "ghost-node", v1.PodRunning)

	w, err := client.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: orphan.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	started := time.Now()
	start(t, podgc.Options{TerminatedPodThreshold: 0, Period: 200 * time.Millisecond, Quarantine: quarantine})

	var failed *v1.Pod
	deadline := time.After(timeout)
	for gone := false; !gone; {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("watch closed")
			}
			p, _ := ev.Object.(*v1.Pod)
			if p == nil || p.Name != "orphan" {
				continue
			}
			if ev.Type == watch.Modified && p.Status.Phase == v1.PodFailed && failed == nil {
				failed = p
			}
			gone = ev.Type == watch.Deleted
		case <-deadline:
			t.Fatal("orphaned pod not deleted")
		}
	}
	if elapsed := time.Since(started); elapsed < quarantine {
		t.Errorf("orphaned pod deleted after %v, before the %v quarantine", elapsed, quarantine)
	}
	if failed == nil {
		t.Fatal("orphaned pod was not marked Failed before its deletion")
	}
	var cond *v1.PodCondition
	for i := range failed.Status.Conditions {
		if failed.Status.Conditions[i].Type == v1.DisruptionTarget {
			cond = &failed.Status.Conditions[i]
		}
	}
	if cond == nil || cond.Status != v1.ConditionTrue || cond.Reason != "DeletionByPodGC" || cond.Message != "PodGC: node no longer exists" {
		t.Errorf("DisruptionTarget condition = %+v", cond)
	}
	if _, err := client.CoreV1().Pods(ns).Get(ctx, kept.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("pod on an existing node: %v", err)
	}
}
