package cronjob

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"
)

func TestJobHandlersEnqueueOwner(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	cj := newCronJob("0 * * * *", hour)
	other := newCronJob("0 * * * *", hour)
	other.Name, other.UID = "other", "other-uid"
	f := newFixture(t, hour, cj, other)
	mine := newJobAt(t, cj, hour)
	stranger := mine.DeepCopy()
	stranger.OwnerReferences[0].UID = types.UID("recreated")
	orphan := mine.DeepCopy()
	orphan.OwnerReferences = nil
	notCron := mine.DeepCopy()
	notCron.OwnerReferences[0].Kind = "Deployment"

	keys := func() []string {
		var out []string
		for f.c.queue.Len() > 0 {
			k, _ := f.c.queue.Get()
			f.c.queue.Done(k)
			out = append(out, k)
		}
		return out
	}
	f.c.addJob(logger, mine)
	eq(t, "add", keys(), []string{"ns/cj"})
	for _, j := range []*batchv1.Job{stranger, orphan, notCron} {
		f.c.addJob(logger, j)
	}
	eq(t, "add of others", keys(), []string(nil))
	f.c.deleteJob(logger, cache.DeletedFinalStateUnknown{Key: "ns/" + mine.Name, Obj: mine})
	eq(t, "tombstone", keys(), []string{"ns/cj"})

	// Same resourceVersion: a resync.
	f.c.updateJob(logger, mine, mine.DeepCopy())
	eq(t, "resync", keys(), []string(nil))
	// The controller reference moved: both are woken.
	moved := mine.DeepCopy()
	moved.ResourceVersion = "2"
	moved.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(other, cronJobKind)}
	f.c.updateJob(logger, mine, moved)
	eq(t, "moved", keys(), []string{"ns/cj", "ns/other"})
}

func TestUpdateCronJob(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	old := newCronJob("0 * * * *", at(-time.Hour), lastScheduled(hour))
	f := newFixture(t, at(10*time.Minute), old)

	// A change other than the schedule: at once.
	cur := old.DeepCopy()
	cur.Spec.Suspend = new(bool)
	f.c.updateCronJob(logger, old, cur)
	eq(t, "queued", f.c.queue.Len(), 1)
	eq(t, "delays", f.queue.requeued(), []time.Duration(nil))

	// A new schedule: at its next time.
	cur = old.DeepCopy()
	cur.Spec.Schedule = "30 * * * *"
	f.c.updateCronJob(logger, old, cur)
	eq(t, "delays", f.queue.requeued(), []time.Duration{20*time.Minute + requeueDelta})

	// A new time zone too: 30 past in Kolkata is 0 past in UTC.
	cur.Spec.TimeZone = ptrTo("Asia/Kolkata")
	f.c.updateCronJob(logger, old, cur)
	eq(t, "delays", f.queue.requeued(), []time.Duration{50*time.Minute + requeueDelta})

	// A schedule that does not parse (stored before validation caught
	// it): an Event, nothing queued.
	cur = old.DeepCopy()
	cur.Spec.Schedule = "TZ=Nowhere/Land 0 * * * *"
	f.c.updateCronJob(logger, old, cur)
	eq(t, "delays", f.queue.requeued(), []time.Duration(nil))
	eq(t, "events", drain(f.rec), []string{"Warning UnParseableCronJobSchedule unparseable schedule for cronjob: TZ=Nowhere/Land 0 * * * *"})
}
