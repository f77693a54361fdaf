package endpointutil

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"
)

// Small alphabets of valid label keys and values (the API server admits no
// others), so that fuzzed selectors and pod labels often meet.
var (
	fuzzKeys   = []string{"app", "tier", "example.com/role", "a", "a.b", "z-1"}
	fuzzValues = []string{"", "web", "db", "a", "1", "x.y_z"}
)

// fuzzLabels reads a label map from data: a count, then key and value
// indexes.
func fuzzLabels(data []byte) (map[string]string, []byte) {
	if len(data) == 0 {
		return nil, data
	}
	n := int(data[0] % 4)
	data = data[1:]
	m := map[string]string{}
	for ; n > 0 && len(data) >= 2; n-- {
		m[fuzzKeys[int(data[0])%len(fuzzKeys)]] = fuzzValues[int(data[1])%len(fuzzValues)]
		data = data[2:]
	}
	return m, data
}

// FuzzServicesForPod checks the Service selector index: after any
// sequence of Service adds, updates and deletes, the Services it finds for
// a pod are exactly those of the pod's namespace whose non-nil selector
// matches the pod's labels (an empty selector matches every pod, a nil one
// none), as a full scan with k8s.io/apimachinery's labels finds them.
func FuzzServicesForPod(f *testing.F) {
	f.Add([]byte{0, 1, 0, 1, 1, 0, 2, 3, 2, 5, 1, 0, 1})
	f.Add([]byte{0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1})
	f.Add([]byte{3, 3, 3, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	f.Add([]byte{})
	f.Add([]byte{255, 255, 255, 255, 255, 255, 255, 255})
	f.Fuzz(func(t *testing.T, data []byte) {
		informer := cache.NewSharedIndexInformer(&cache.ListWatch{}, &v1.Service{}, 0, cache.Indexers{})
		if err := AddServiceSelectorIndex(informer); err != nil {
			t.Fatal(err)
		}
		indexer := informer.GetIndexer()
		namespaces := []string{"ns", "other"}
		for i := 0; len(data) >= 2 && i < 32; i++ {
			op, which := data[0], data[1]
			data = data[2:]
			svc := &v1.Service{ObjectMeta: metav1.ObjectMeta{
				Namespace: namespaces[int(which)%2],
				Name:      fmt.Sprint("s", which%8),
			}}
			switch op % 4 {
			case 0: // a Service without a selector
			case 1:
				svc.Spec.Selector = map[string]string{}
			default:
				svc.Spec.Selector, data = fuzzLabels(data)
			}
			var err error
			if op%8 == 7 {
				err = indexer.Delete(svc)
			} else {
				err = indexer.Update(svc) // adds a Service it does not hold
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		podLabels, _ := fuzzLabels(data)

		for _, ns := range namespaces {
			got, err := ServicesForPod(indexer, ns, podLabels)
			if err != nil {
				t.Fatal(err)
			}
			want := sets.New[string]()
			for _, obj := range indexer.List() {
				svc := obj.(*v1.Service)
				if svc.Namespace == ns && svc.Spec.Selector != nil &&
					labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(podLabels)) {
					want.Insert(svc.Namespace + "/" + svc.Name)
				}
			}
			if !got.Equal(want) {
				t.Fatalf("pod labels %v in %s: ServicesForPod = %v, a full scan finds %v", podLabels, ns, sets.List(got), sets.List(want))
			}
		}
	})
}
