package garbagecollector

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/test/integration/framework"
)

// TestDependencyCircle is upstream's conformance spec "Garbage collector
// should not be blocked by dependency circle": pod1 is owned by pod3, pod2
// by pod1 and pod3 by pod2, every reference a blocking controller
// reference; deleting pod1 in the foreground must collect all three. pod3
// has its reference to pod2 unblocked before its foreground deletion, which
// then conflicts once; the retry must not strip pod3's ownerReferences
// (it did, and pod3 was left ownerless and never collected).
func TestDependencyCircle(t *testing.T) {
	e := setup(t)
	ns := namespace(t, e)
	pods := e.client.CoreV1().Pods(ns)
	ctx := context.Background()

	created := map[string]*v1.Pod{}
	for _, name := range []string{"pod1", "pod2", "pod3"} {
		p, err := pods.Create(ctx, &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](0),
				Containers: []v1.Container{{Name: "nginx", Image: "nginx"}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		created[name] = p
	}
	// The circle, made in the spec's order.
	for _, edge := range [][2]string{{"pod1", "pod3"}, {"pod2", "pod1"}, {"pod3", "pod2"}} {
		owner := created[edge[1]]
		patch := `{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"` + owner.Name +
			`","uid":"` + string(owner.UID) + `","controller":true,"blockOwnerDeletion":true}]}}`
		if _, err := pods.Patch(ctx, edge[0], types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	if err := pods.Delete(ctx, "pod1", metav1.DeleteOptions{
		PropagationPolicy: ptr.To(metav1.DeletePropagationForeground),
		Preconditions:     metav1.NewUIDPreconditions(string(created["pod1"].UID)),
	}); err != nil {
		t.Fatal(err)
	}
	var left []v1.Pod
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, p := range left {
			t.Logf("left: pod %s deletionTimestamp=%v finalizers=%v ownerReferences=%s", p.Name,
				p.DeletionTimestamp, p.Finalizers, describeRefs(p.OwnerReferences))
		}
	})
	framework.Eventually(t, timeout, func() (bool, error) {
		list, err := pods.List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		left = list.Items
		return len(left) == 0, nil
	})
}

func describeRefs(refs []metav1.OwnerReference) string {
	s := ""
	for _, r := range refs {
		s += r.Kind + "/" + r.Name
		if r.BlockOwnerDeletion != nil && *r.BlockOwnerDeletion {
			s += "(blocking)"
		}
		s += " "
	}
	return s
}
