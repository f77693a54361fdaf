package framework

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// Namespace is a test's namespace on the envtest apiserver, with helpers
// that stand in for the scheduler and the kubelet (envtest has neither).
// Every helper fails the test on an API error.
type Namespace struct {
	T      *testing.T
	Ctx    context.Context
	Client kubernetes.Interface
	Name   string
}

// LivePods returns the pods matching selector that are not being deleted.
func (n Namespace) LivePods(selector map[string]string) []v1.Pod {
	n.T.Helper()
	list, err := n.Client.CoreV1().Pods(n.Name).List(n.Ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(selector).String()})
	if err != nil {
		n.T.Fatal(err)
	}
	var out []v1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

// WaitLivePods waits until exactly count live pods match selector and
// returns them.
func (n Namespace) WaitLivePods(selector map[string]string, count int, timeout time.Duration) []v1.Pod {
	n.T.Helper()
	var pods []v1.Pod
	Eventually(n.T, timeout, func() (bool, error) {
		pods = n.LivePods(selector)
		return len(pods) == count, nil
	})
	return pods
}

// CreatePod creates a one-container pod with labels and owner references.
func (n Namespace) CreatePod(name string, lbls map[string]string, owners ...metav1.OwnerReference) *v1.Pod {
	n.T.Helper()
	p, err := n.Client.CoreV1().Pods(n.Name).Create(n.Ctx, &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbls, OwnerReferences: owners},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "registry.example/web:1"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		n.T.Fatal(err)
	}
	return p
}

// Bind assigns the pod to a node, as the scheduler would.
func (n Namespace) Bind(pod, node string) {
	n.T.Helper()
	err := n.Client.CoreV1().Pods(n.Name).Bind(n.Ctx, &v1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: pod},
		Target:     v1.ObjectReference{Kind: "Node", Name: node},
	}, metav1.CreateOptions{})
	if err != nil {
		n.T.Fatal(err)
	}
}

// SetRunning sets the pod Running, and Ready since now if ready, as the
// kubelet would.
func (n Namespace) SetRunning(name string, ready bool) {
	n.T.Helper()
	p, err := n.Client.CoreV1().Pods(n.Name).Get(n.Ctx, name, metav1.GetOptions{})
	if err != nil {
		n.T.Fatal(err)
	}
	p.Status.Phase = v1.PodRunning
	if ready {
		p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.Now()}}
	}
	if _, err := n.Client.CoreV1().Pods(n.Name).UpdateStatus(n.Ctx, p, metav1.UpdateOptions{}); err != nil {
		n.T.Fatal(err)
	}
}

// PatchPod applies a strategic merge patch to the pod.
func (n Namespace) PatchPod(name, patch string) {
	n.T.Helper()
	if _, err := n.Client.CoreV1().Pods(n.Name).Patch(n.Ctx, name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		n.T.Fatal(err)
	}
}

// WaitEvents waits for at least atLeast Events of reason on the named
// object of kind and returns them.
func (n Namespace) WaitEvents(kind, name, reason string, atLeast int, timeout time.Duration) []v1.Event {
	n.T.Helper()
	var events []v1.Event
	sel := fields.Set{"involvedObject.kind": kind, "involvedObject.name": name, "reason": reason}.String()
	Eventually(n.T, timeout, func() (bool, error) {
		list, err := n.Client.CoreV1().Events(n.Name).List(n.Ctx, metav1.ListOptions{FieldSelector: sel})
		if err != nil {
			return false, err
		}
		events = list.Items
		return len(events) >= atLeast, nil
	})
	return events
}

// Events returns the Events on the named object of kind in the namespace.
func (n Namespace) Events(kind, name string) []v1.Event {
	n.T.Helper()
	sel := fields.Set{"involvedObject.kind": kind, "involvedObject.name": name}.String()
	list, err := n.Client.CoreV1().Events(n.Name).List(n.Ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		n.T.Fatal(err)
	}
	return list.Items
}
