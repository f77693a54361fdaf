package cronjob

import (
	"errors"
	"fmt"
	"strings"
	"time"
	// Time zones come with the binary, as upstream's: spec.timeZone must
	// not depend on the host's zoneinfo (the image has none).
	_ "time/tzdata"

	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
)

// requeueDelta pads the requeue at the next scheduled time, so that a
// clock running slightly behind the one that computed it still finds the
// time passed.
const requeueDelta = 100 * time.Millisecond

// tooManyMissed is upstream's bound on missed start times: beyond it the
// CronJob gets a TooManyMissedTimes warning (the most recent one still
// starts).
const tooManyMissed = 100

// missed says how many scheduled times passed unmet, roughly.
type missed int

const (
	missedNone missed = iota
	missedFew
	missedMany
)

// scheduleSpec is the schedule as the parser gets it: spec.timeZone, when
// it is set and known, becomes a TZ= prefix. A schedule that itself names
// a zone (CRON_TZ= or TZ=; the API server accepts it only on CronJobs
// stored before it was forbidden) is used as it is, with an
// UnsupportedSchedule warning if recorder is not nil.
func scheduleSpec(cj *batchv1.CronJob, recorder record.EventRecorder) string {
	if strings.Contains(cj.Spec.Schedule, "TZ") {
		if recorder != nil {
			recorder.Eventf(cj, v1.EventTypeWarning, "UnsupportedSchedule",
				"CRON_TZ or TZ used in schedule %q is not officially supported, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details",
				cj.Spec.Schedule)
		}
		return cj.Spec.Schedule
	}
	if cj.Spec.TimeZone != nil {
		if _, err := time.LoadLocation(*cj.Spec.TimeZone); err == nil {
			return "TZ=" + *cj.Spec.TimeZone + " " + cj.Spec.Schedule
		}
	}
	return cj.Spec.Schedule
}

// parseSchedule parses a schedule with the standard cron parser, turning
// the parser's panics (it has some on malformed input) into errors.
func parseSchedule(spec string) (sched cron.Schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			sched, err = nil, fmt.Errorf("invalid schedule format: %v", r)
		}
	}()
	return cron.ParseStandard(spec)
}

// errNoInterval is returned for a schedule that parses but never fires
// twice ("59 23 31 2 *": February 31st).
var errNoInterval = errors.New("time difference between two schedules is less than 1 second")

// mostRecent finds the latest scheduled time in (earliest, now], where
// earliest is the last schedule time or else the creation time, raised to
// now minus startingDeadlineSeconds when withDeadline is set. It returns
// earliest, that time (nil if none), and how many times were missed.
//
// Like upstream it does not walk every missed time: it takes the interval
// between the first two times after earliest, estimates how many fit
// before now, and walks only from one interval before the estimate. For
// irregular schedules the estimate may skip the most recent time (nil with
// missedFew); the requeue then aims at the next time after now.
func mostRecent(cj *batchv1.CronJob, now time.Time, sched cron.Schedule, withDeadline bool) (time.Time, *time.Time, missed, error) {
	earliest := cj.CreationTimestamp.Time
	if cj.Status.LastScheduleTime != nil {
		earliest = cj.Status.LastScheduleTime.Time
	}
	if withDeadline && cj.Spec.StartingDeadlineSeconds != nil {
		deadline := now.Add(-time.Duration(*cj.Spec.StartingDeadlineSeconds) * time.Second)
		if deadline.After(earliest) {
			earliest = deadline
		}
	}

	first := sched.Next(earliest)
	second := sched.Next(first)
	if now.Before(first) {
		return earliest, nil, missedNone, nil
	}
	if now.Before(second) {
		return earliest, &first, missedNone, nil
	}

	interval := int64(second.Sub(first).Round(time.Second).Seconds())
	if interval < 1 {
		return earliest, nil, missedNone, errNoInterval
	}
	count := int64(now.Sub(first).Seconds())/interval + 1
	var latest time.Time
	from := first.Add(time.Duration((count-2)*interval) * time.Second)
	// Next returns the zero time when the schedule has no time in the five
	// years after t (leap days around 2100): that ends the walk, else it
	// would restart from year 1, forever.
	for t := sched.Next(from); !t.IsZero() && !t.After(now); t = sched.Next(t) {
		latest = t
	}

	m := missedFew
	if count > tooManyMissed {
		m = missedMany
	}
	// After a first time of zero the walk may find only times before
	// earliest.
	if !latest.After(earliest) {
		return earliest, nil, m, nil
	}
	return earliest, &latest, m, nil
}

// nextUnmet returns the scheduled time a Job should be created for now,
// nil if there is none, honouring startingDeadlineSeconds. Too many
// missed times earn the CronJob a TooManyMissedTimes warning.
func nextUnmet(logger klog.Logger, cj *batchv1.CronJob, now time.Time, sched cron.Schedule, recorder record.EventRecorder) (*time.Time, error) {
	_, latest, m, err := mostRecent(cj, now, sched, true)
	if latest == nil || latest.After(now) {
		return nil, err
	}
	if m == missedMany {
		recorder.Eventf(cj, v1.EventTypeWarning, "TooManyMissedTimes",
			"too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew")
		logger.Info("too many missed times", "cronjob", klog.KObj(cj))
	}
	return latest, err
}

// requeueAfter is how long until the sync after now should run: just past
// the first scheduled time after the most recent one (ignoring
// startingDeadlineSeconds), or, when times were missed but none found or
// the schedule is unusable, the first one after now.
func requeueAfter(cj *batchv1.CronJob, now time.Time, sched cron.Schedule) time.Duration {
	earliest, latest, m, err := mostRecent(cj, now, sched, false)
	from := now
	switch {
	case err != nil:
	case latest != nil:
		from = *latest
	case m == missedNone:
		from = earliest
	}
	return sched.Next(from).Add(requeueDelta).Sub(now)
}
