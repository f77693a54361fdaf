package servicelb

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	cloudprovider "k8s.io/cloud-provider"
)

// countingLB counts UpdateLoadBalancer calls.
type countingLB struct {
	cloudprovider.LoadBalancer
	updates int
}

func (lb *countingLB) UpdateLoadBalancer(context.Context, string, *v1.Service, []*v1.Node) error {
	lb.updates++
	return nil
}

// A Service whose load balancer the Service worker is deleting is left
// out of the node pass (parity scenario cloud-lb-restart).
func TestNodePassSkipsServicesBeingCleanedUp(t *testing.T) {
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	client := fake.NewClientset(node)
	f := informers.NewSharedInformerFactory(client, 0)
	lb := &countingLB{}
	c, err := newController("service-lb-controller", client, lb, "kubernetes", 1, f.Core().V1().Services(), f.Core().V1().Nodes())
	if err != nil {
		t.Fatal(err)
	}
	c.recorder = record.NewFakeRecorder(10)
	if err := f.Core().V1().Nodes().Informer().GetStore().Add(node); err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	svc := func(name string, deleting bool) *v1.Service {
		s := &v1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Finalizers: []string{Finalizer}},
			Spec:       v1.ServiceSpec{Type: v1.ServiceTypeLoadBalancer},
		}
		if deleting {
			s.DeletionTimestamp = &now
		}
		return s
	}
	c.known["ns/kept"] = svc("kept", false)
	c.known["ns/gone"] = svc("gone", true)
	if err := c.syncNodes(context.Background(), nodesKey); err != nil {
		t.Fatal(err)
	}
	if lb.updates != 1 {
		t.Errorf("UpdateLoadBalancer called %d times, want 1 (the Service being deleted skipped)", lb.updates)
	}
}
