package nodeutil

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
)

func TestPodsOnNode(t *testing.T) {
	informer := informers.NewSharedInformerFactory(fake.NewClientset(), 0).Core().V1().Pods().Informer()
	for i := 0; i < 2; i++ { // the second call finds the index in place
		if err := AddPodNodeNameIndexer(informer); err != nil {
			t.Fatal(err)
		}
	}
	pod := func(name, node string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Spec: v1.PodSpec{NodeName: node}}
	}
	for _, p := range []*v1.Pod{pod("a", "n1"), pod("b", "n2"), pod("c", "n1"), pod("unbound", "")} {
		if err := informer.GetIndexer().Add(p); err != nil {
			t.Fatal(err)
		}
	}
	pods, err := PodsOnNode(informer.GetIndexer(), "n1")
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 2 {
		t.Errorf("got %d pods on n1, want 2", len(pods))
	}
	if pods, _ := PodsOnNode(informer.GetIndexer(), ""); len(pods) != 0 {
		t.Errorf("unbound pods are indexed: %v", pods)
	}
}
