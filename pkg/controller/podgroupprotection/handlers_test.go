package podgroupprotection

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"
)

// queued drains the controller's queue.
func queued(c *Controller) []string {
	var keys []string
	for c.queue.Len() > 0 {
		k, _ := c.queue.Get()
		c.queue.Done(k)
		keys = append(keys, k)
	}
	return keys
}

func TestPodGroupEvents(t *testing.T) {
	c, _, _ := newTestController(t)
	logger, _ := ktesting.NewTestContext(t)
	c.podGroupChanged(logger, podGroup(false, Finalizer))
	c.podGroupChanged(logger, podGroup(true))
	if keys := queued(c); len(keys) != 0 {
		t.Errorf("queued %v for groups with nothing to decide", keys)
	}
	c.podGroupChanged(logger, podGroup(true, Finalizer))
	if keys := queued(c); len(keys) != 1 || keys[0] != "ns/pg" {
		t.Errorf("queued %v, want [ns/pg]", keys)
	}
}

func TestPodEvents(t *testing.T) {
	running := pod("p", "ns", "pg", v1.PodRunning)
	succeeded := pod("p", "ns", "pg", v1.PodSucceeded)
	replaced := pod("p", "ns", "pg", v1.PodPending)
	replaced.UID = types.UID("new")
	tests := []struct {
		name     string
		old, cur *v1.Pod // cur nil: a deletion
		tomb     bool
		want     []string
	}{
		{name: "turns terminal", old: running, cur: succeeded, want: []string{"ns/pg"}},
		{name: "replaced under the same name", old: running, cur: replaced, want: []string{"ns/pg"}},
		{name: "still running", old: running, cur: running.DeepCopy()},
		{name: "already terminal", old: succeeded, cur: succeeded.DeepCopy()},
		{name: "no group", old: pod("p", "ns", "", v1.PodRunning), cur: pod("p", "ns", "", v1.PodSucceeded)},
		{name: "deleted", old: running, want: []string{"ns/pg"}},
		{name: "deleted, tombstone", old: running, tomb: true, want: []string{"ns/pg"}},
		{name: "deleted without a group", old: pod("p", "ns", "", v1.PodRunning)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _, _ := newTestController(t)
			logger, _ := ktesting.NewTestContext(t)
			switch {
			case tt.cur != nil:
				c.podUpdated(logger, tt.old, tt.cur)
			case tt.tomb:
				c.podDeleted(logger, cache.DeletedFinalStateUnknown{Key: "ns/p", Obj: tt.old})
			default:
				c.podDeleted(logger, tt.old)
			}
			got := queued(c)
			if len(got) != len(tt.want) || (len(got) > 0 && got[0] != tt.want[0]) {
				t.Errorf("queued %v, want %v", got, tt.want)
			}
		})
	}
}

func TestActivePodIndex(t *testing.T) {
	c, _, _ := newTestController(t,
		pod("a", "ns", "pg", v1.PodRunning), pod("b", "ns", "pg", v1.PodSucceeded),
		pod("c", "ns", "", v1.PodRunning), pod("d", "other", "pg", v1.PodPending))
	objs, err := c.podIndexer.ByIndex(activePodIndex, "ns/pg")
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 || objs[0].(*v1.Pod).Name != "a" {
		t.Errorf("active pods of ns/pg: %v, want [a]", objs)
	}
}
