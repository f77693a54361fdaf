package storageversiongc

import (
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

func cacheTombstone(obj any) cache.DeletedFinalStateUnknown {
	return cache.DeletedFinalStateUnknown{Key: "tombstone", Obj: obj}
}

func drain(q workqueue.TypedInterface[string]) []string {
	var keys []string
	for q.Len() > 0 {
		k, _ := q.Get()
		q.Done(k)
		keys = append(keys, k)
	}
	return keys
}
