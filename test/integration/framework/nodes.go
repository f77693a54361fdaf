package framework

import (
	"context"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// CreateNode creates node and makes it look like a healthy node: its
// status is node.Status, with a Ready condition since now unless it has
// one, and its taints are node.Spec.Taints only, without the not-ready
// taint the apiserver's TaintNodesByCondition admission gives every new
// node (no node-lifecycle-controller runs to lift it). Nodes are
// cluster-wide and the apiserver is shared by a package's tests: a node
// that exists already is returned as it is.
func CreateNode(t testing.TB, client kubernetes.Interface, node *v1.Node) *v1.Node {
	t.Helper()
	ctx := context.Background()
	nodes := client.CoreV1().Nodes()
	created, err := nodes.Create(ctx, node, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		if created, err = nodes.Get(ctx, node.Name, metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
		return created
	}
	if err != nil {
		t.Fatal(err)
	}
	created.Status = *node.Status.DeepCopy()
	if !slices.ContainsFunc(created.Status.Conditions, func(c v1.NodeCondition) bool { return c.Type == v1.NodeReady }) {
		now := metav1.Now()
		created.Status.Conditions = append(created.Status.Conditions,
			v1.NodeCondition{Type: v1.NodeReady, Status: v1.ConditionTrue, LastHeartbeatTime: now, LastTransitionTime: now})
	}
	if created, err = nodes.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	created.Spec.Taints = node.Spec.Taints
	if created, err = nodes.Update(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return created
}
