package endpointslicemirroring

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
)

func managedSlice(name, svc string, uid string, gen int64) *discovery.EndpointSlice {
	return &discovery.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: name, UID: types.UID(uid), Generation: gen,
		Labels: map[string]string{discovery.LabelServiceName: svc, discovery.LabelManagedBy: ControllerName}}}
}

func TestHandlersEnqueue(t *testing.T) {
	plain := endpoints("svc")
	skip := endpoints("svc")
	skip.Labels = map[string]string{discovery.LabelSkipMirror: "true"}
	lock := endpoints("svc")
	lock.Annotations = map[string]string{resourcelock.LeaderElectionRecordAnnotationKey: "{}"}
	selector := service("svc", map[string]string{"a": "b"})
	noSelector := service("svc", nil)
	tracked := managedSlice("s1", "svc", "u1", 1)
	newer := managedSlice("s1", "svc", "u1", 2)
	foreign := tracked.DeepCopy()
	foreign.Labels[discovery.LabelManagedBy] = "someone"
	renamed := tracked.DeepCopy()
	renamed.Labels[discovery.LabelServiceName] = "other"

	tests := []struct {
		name string
		fire func(c *Controller, logger klog.Logger)
		want []string
	}{
		{name: "Endpoints added", fire: func(c *Controller, l klog.Logger) { c.onEndpointsAdd(l, plain) }, want: []string{"ns/svc"}},
		{name: "skip-mirror Endpoints added", fire: func(c *Controller, l klog.Logger) { c.onEndpointsAdd(l, skip) }},
		{name: "lock Endpoints added", fire: func(c *Controller, l klog.Logger) { c.onEndpointsAdd(l, lock) }},
		{name: "Endpoints becomes skip-mirror", fire: func(c *Controller, l klog.Logger) { c.onEndpointsUpdate(l, plain, skip) }, want: []string{"ns/svc"}},
		{name: "skip-mirror Endpoints updated", fire: func(c *Controller, l klog.Logger) { c.onEndpointsUpdate(l, skip, skip) }},
		{name: "Endpoints tombstone", fire: func(c *Controller, l klog.Logger) {
			c.onEndpointsDelete(l, cache.DeletedFinalStateUnknown{Key: "ns/svc", Obj: plain})
		}, want: []string{"ns/svc"}},
		{name: "bad tombstone", fire: func(c *Controller, l klog.Logger) {
			c.onEndpointsDelete(l, cache.DeletedFinalStateUnknown{Key: "x", Obj: "x"})
		}},
		{name: "selector-less Service added", fire: func(c *Controller, l klog.Logger) { c.onServiceAdd(l, noSelector) }, want: []string{"ns/svc"}},
		{name: "Service with selector added", fire: func(c *Controller, l klog.Logger) { c.onServiceAdd(l, selector) }},
		{name: "Service gains a selector", fire: func(c *Controller, l klog.Logger) { c.onServiceUpdate(l, noSelector, selector) }, want: []string{"ns/svc"}},
		{name: "Service updated, selector kept", fire: func(c *Controller, l klog.Logger) { c.onServiceUpdate(l, selector, selector) }},
		{name: "untracked slice added", fire: func(c *Controller, l klog.Logger) { c.onSliceAdd(l, tracked) }, want: []string{"ns/svc"}},
		{name: "own write observed", fire: func(c *Controller, l klog.Logger) {
			c.tracker.Update(tracked)
			c.onSliceAdd(l, tracked)
			c.onSliceUpdate(l, tracked, tracked)
		}},
		{name: "someone else's write", fire: func(c *Controller, l klog.Logger) {
			c.tracker.Update(tracked)
			c.onSliceUpdate(l, tracked, newer)
		}, want: []string{"ns/svc"}},
		{name: "foreign slice", fire: func(c *Controller, l klog.Logger) { c.onSliceAdd(l, foreign) }},
		{name: "slice taken over by someone", fire: func(c *Controller, l klog.Logger) {
			c.tracker.Update(tracked)
			c.onSliceUpdate(l, tracked, foreign)
		}, want: []string{"ns/svc"}},
		{name: "service-name label changed", fire: func(c *Controller, l klog.Logger) { c.onSliceUpdate(l, tracked, renamed) },
			want: []string{"ns/other", "ns/svc"}},
		{name: "expected deletion", fire: func(c *Controller, l klog.Logger) {
			c.tracker.ExpectDeletion(tracked)
			c.onSliceDelete(l, tracked)
		}},
		{name: "unexpected deletion", fire: func(c *Controller, l klog.Logger) {
			c.tracker.Update(tracked)
			c.onSliceDelete(l, tracked)
		}, want: []string{"ns/svc"}},
		{name: "untracked deletion", fire: func(c *Controller, l klog.Logger) { c.onSliceDelete(l, tracked) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			logger, _ := ktesting.NewTestContext(t)
			f := newFixture(t, 1000)
			tc.fire(f.c, logger)
			got := map[string]bool{}
			deadline := time.Now().Add(time.Second)
			for f.c.queue.Len() < len(tc.want) && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			for f.c.queue.Len() > 0 {
				k, _ := f.c.queue.Get()
				got[k] = true
				f.c.queue.Done(k)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("queued %v, want %v", got, tc.want)
			}
			for _, k := range tc.want {
				if !got[k] {
					t.Errorf("queued %v, want %v", got, tc.want)
				}
			}
		})
	}
}

func TestShouldMirror(t *testing.T) {
	ep := &v1.Endpoints{}
	if !shouldMirror(ep) {
		t.Error("plain Endpoints not mirrored")
	}
	ep.Labels = map[string]string{discovery.LabelSkipMirror: "false"}
	if !shouldMirror(ep) {
		t.Error("skip-mirror=false not mirrored")
	}
	if shouldMirror(nil) {
		t.Error("nil mirrored")
	}
}
