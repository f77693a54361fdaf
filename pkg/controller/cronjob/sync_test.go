package cronjob

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

// minute is the name suffix of a Job scheduled at t.
func minute(t time.Time) string { return fmt.Sprint(t.Unix() / 60) }

func eq[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func TestSyncCreatesDueJob(t *testing.T) {
	cj := newCronJob("0 * * * *", at(-10*time.Minute))
	f := newFixture(t, at(5*time.Second), cj)
	events, err := f.sync(t)
	if err != nil {
		t.Fatal(err)
	}
	name := "cj-" + minute(hour)
	eq(t, "events", events, []string{"Normal SuccessfulCreate Created job " + name})
	created := f.created()
	if len(created) != 1 {
		t.Fatalf("created %d Jobs", len(created))
	}
	j := created[0]
	eq(t, "name", j.Name, name)
	eq(t, "labels", j.Labels, map[string]string{"a": "b"})
	eq(t, "annotations", j.Annotations, map[string]string{"x": "y", batchv1.CronJobScheduledTimestampAnnotation: "2016-05-19T10:00:00Z"})
	eq(t, "owner", j.OwnerReferences, []metav1.OwnerReference{{
		APIVersion: "batch/v1", Kind: "CronJob", Name: "cj", UID: "cj-uid", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}})
	eq(t, "spec", j.Spec, cj.Spec.JobTemplate.Spec)
	st := f.status()
	if st == nil || len(st.Active) != 1 || st.Active[0].Name != name || st.Active[0].Kind != "Job" || st.Active[0].APIVersion != "batch/v1" {
		t.Fatalf("status = %+v", st)
	}
	eq(t, "lastScheduleTime", st.LastScheduleTime, mtime(hour))
	// Next: 11:00, less the 5s past 10:00, plus the padding.
	eq(t, "requeue", f.queue.requeued(), []time.Duration{time.Hour - 5*time.Second + requeueDelta})
}

func TestSyncNothingDue(t *testing.T) {
	cj := newCronJob("0 * * * *", at(-10*time.Minute))
	f := newFixture(t, at(-5*time.Minute), cj)
	events, err := f.sync(t)
	if err != nil || len(events) != 0 || len(f.client.Actions()) != 0 {
		t.Fatalf("err %v, events %q, requests %v", err, events, f.verbs())
	}
	eq(t, "requeue", f.queue.requeued(), []time.Duration{5*time.Minute + requeueDelta})
}

func TestSyncAlreadyScheduled(t *testing.T) {
	cj := newCronJob("0 * * * *", at(-10*time.Minute), lastScheduled(hour))
	f := newFixture(t, at(time.Minute), cj)
	events, err := f.sync(t)
	if err != nil || len(events) != 0 || len(f.client.Actions()) != 0 {
		t.Fatalf("err %v, events %q, requests %v", err, events, f.verbs())
	}
	eq(t, "requeue", f.queue.requeued(), []time.Duration{59*time.Minute + requeueDelta})
}

func TestSyncTimeZone(t *testing.T) {
	// 06:00 in New York in May is 10:00 UTC.
	cj := newCronJob("0 6 * * *", at(-time.Hour), zone("America/New_York"))
	f := newFixture(t, at(time.Second), cj)
	if _, err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	created := f.created()
	if len(created) != 1 {
		t.Fatalf("created %d Jobs", len(created))
	}
	eq(t, "name", created[0].Name, "cj-"+minute(hour))
	eq(t, "scheduled", created[0].Annotations[batchv1.CronJobScheduledTimestampAnnotation], "2016-05-19T06:00:00-04:00")
	eq(t, "requeue", f.queue.requeued(), []time.Duration{24*time.Hour - time.Second + requeueDelta})
}

func TestSyncConcurrencyPolicies(t *testing.T) {
	prev := at(-time.Hour)
	tests := []struct {
		policy      batchv1.ConcurrencyPolicy
		wantEvents  []string
		wantCreated bool
		wantDeleted []string
		wantActive  int
	}{
		{policy: batchv1.AllowConcurrent, wantCreated: true, wantActive: 2,
			wantEvents: []string{"Normal SuccessfulCreate Created job cj-" + minute(hour)}},
		{policy: batchv1.ForbidConcurrent,
			wantEvents: []string{"Normal JobAlreadyActive Not starting job because prior execution is running and concurrency policy is Forbid"}},
		{policy: batchv1.ReplaceConcurrent, wantCreated: true, wantDeleted: []string{"cj-" + minute(prev)}, wantActive: 1,
			wantEvents: []string{"Normal SuccessfulDelete Deleted job cj-" + minute(prev), "Normal SuccessfulCreate Created job cj-" + minute(hour)}},
	}
	for _, tc := range tests {
		t.Run(string(tc.policy), func(t *testing.T) {
			base := newCronJob("0 * * * *", at(-2*time.Hour), policy(tc.policy))
			running := newJobAt(t, base, prev, started(prev))
			cj := newCronJob("0 * * * *", at(-2*time.Hour), policy(tc.policy), lastScheduled(prev), active(running))
			f := newFixture(t, at(time.Second), cj, running)
			events, err := f.sync(t)
			if err != nil {
				t.Fatal(err)
			}
			eq(t, "events", events, tc.wantEvents)
			eq(t, "created", len(f.created()) == 1, tc.wantCreated)
			eq(t, "deleted", f.deleted(), tc.wantDeleted)
			if st := f.status(); tc.wantCreated && (st == nil || len(st.Active) != tc.wantActive) {
				t.Errorf("status = %+v", st)
			}
			if !tc.wantCreated && f.status() != nil {
				t.Errorf("status written: %+v", f.status())
			}
			eq(t, "requeue", f.queue.requeued(), []time.Duration{time.Hour - time.Second + requeueDelta})
		})
	}
}

func TestSyncReplaceDeletesInBackground(t *testing.T) {
	prev := at(-time.Hour)
	base := newCronJob("0 * * * *", at(-2*time.Hour))
	running := newJobAt(t, base, prev)
	cj := newCronJob("0 * * * *", at(-2*time.Hour), policy(batchv1.ReplaceConcurrent), lastScheduled(prev), active(running))
	f := newFixture(t, at(time.Second), cj, running)
	if _, err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	for _, a := range f.client.Actions() {
		if d, ok := a.(clienttesting.DeleteActionImpl); ok {
			p := d.GetDeleteOptions().PropagationPolicy
			if p == nil || *p != metav1.DeletePropagationBackground {
				t.Errorf("propagation = %v", p)
			}
		}
	}
	eq(t, "requests", f.verbs(), []string{"get jobs", "delete jobs", "create jobs", "update cronjobs/status"})
}

func TestSyncNotStarting(t *testing.T) {
	tests := []struct {
		name        string
		cj          *batchv1.CronJob
		wantEvents  []string
		wantRequeue bool
	}{
		{name: "suspended", cj: newCronJob("0 * * * *", at(-time.Hour), suspended)},
		{name: "unknown time zone", cj: newCronJob("0 * * * *", at(-time.Hour), zone("Mars/Olympus")),
			wantEvents: []string{`Warning UnknownTimeZone invalid timeZone: "Mars/Olympus": unknown time zone Mars/Olympus`}},
		{name: "unparseable schedule", cj: newCronJob("obvious error schedule", at(-time.Hour)),
			wantEvents: []string{`Warning UnparseableSchedule unparseable schedule: "obvious error schedule" : expected exactly 5 fields, found 3: [obvious error schedule]`}},
		{name: "never fires", cj: newCronJob("59 23 31 2 *", at(-time.Hour)),
			wantEvents: []string{"Warning InvalidSchedule invalid schedule: 59 23 31 2 * : time difference between two schedules is less than 1 second"}},
		{name: "being deleted", cj: newCronJob("0 * * * *", at(-time.Hour), func(cj *batchv1.CronJob) {
			cj.DeletionTimestamp = mtime(hour)
		})},
		// startingDeadlineSeconds moves the earliest time considered, so
		// a time past its deadline is never found (and MissSchedule,
		// upstream's Event for it, never recorded).
		{name: "deadline passed", cj: newCronJob("0 * * * *", at(-time.Hour), deadline(10)), wantRequeue: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, at(20*time.Second), tc.cj)
			events, err := f.sync(t)
			if err != nil {
				t.Fatal(err)
			}
			eq(t, "events", events, tc.wantEvents)
			if len(f.client.Actions()) != 0 {
				t.Errorf("requests %v", f.verbs())
			}
			if got := f.queue.requeued(); (len(got) == 1) != tc.wantRequeue {
				t.Errorf("requeued %v", got)
			}
		})
	}
}

func TestSyncTooManyMissed(t *testing.T) {
	cj := newCronJob("* * * * *", at(-24*time.Hour))
	f := newFixture(t, at(30*time.Second), cj)
	events, err := f.sync(t)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "events", events, []string{
		"Warning TooManyMissedTimes too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew",
		"Normal SuccessfulCreate Created job cj-" + minute(hour),
	})
}

func TestSyncFinishedJobs(t *testing.T) {
	base := newCronJob("0 * * * *", at(-3*time.Hour))
	t1, t2 := at(-2*time.Hour), at(-time.Hour)
	done := newJobAt(t, base, t1, started(t1), finished(batchv1.JobComplete, t1.Add(time.Minute)))
	failed := newJobAt(t, base, t2, started(t2), finished(batchv1.JobFailed, t2.Add(time.Minute)))
	cj := newCronJob("0 * * * *", at(-3*time.Hour), lastScheduled(t2), active(done, failed))
	f := newFixture(t, at(-time.Minute), cj, done, failed)
	events, err := f.sync(t)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(events)
	eq(t, "events", events, []string{
		"Normal SawCompletedJob Saw completed job: " + done.Name + ", condition: Complete",
		"Normal SawCompletedJob Saw completed job: " + failed.Name + ", condition: Failed",
	})
	st := f.status()
	if st == nil || len(st.Active) != 0 {
		t.Fatalf("status = %+v", st)
	}
	eq(t, "lastSuccessfulTime", st.LastSuccessfulTime, mtime(t1.Add(time.Minute)))
}

func TestSyncLastSuccessfulTimeAdvances(t *testing.T) {
	base := newCronJob("0 * * * *", at(-3*time.Hour))
	t1 := at(-2 * time.Hour)
	done := newJobAt(t, base, t1, started(t1), finished(batchv1.JobComplete, t1.Add(time.Minute)))
	for _, tc := range []struct {
		last  time.Time
		write bool
	}{{last: t1, write: true}, {last: t1.Add(time.Hour)}} {
		cj := newCronJob("0 * * * *", at(-3*time.Hour), lastScheduled(at(-time.Hour)), func(cj *batchv1.CronJob) {
			cj.Status.LastSuccessfulTime = mtime(tc.last)
		})
		f := newFixture(t, at(-time.Minute), cj, done)
		events, err := f.sync(t)
		if err != nil || len(events) != 0 {
			t.Fatalf("err %v, events %q", err, events)
		}
		if st := f.status(); (st != nil) != tc.write || st != nil && !st.LastSuccessfulTime.Equal(mtime(t1.Add(time.Minute))) {
			t.Errorf("last %v: status %+v", tc.last, st)
		}
	}
}

func TestSyncUnexpectedJob(t *testing.T) {
	base := newCronJob("0 * * * *", at(-3*time.Hour), lastScheduled(at(-time.Hour)))
	stray := newJobAt(t, base, at(-2*time.Hour))
	f := newFixture(t, at(-time.Minute), base, stray)
	events, err := f.sync(t)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "events", events, []string{"Warning UnexpectedJob Saw a job that the controller did not create or forgot: " + stray.Name})
	eq(t, "requests", f.verbs(), []string{"get cronjobs"})
}

// A Job the cache's CronJob does not list yet but the API server's does
// is no surprise.
func TestSyncCacheBehindJob(t *testing.T) {
	base := newCronJob("0 * * * *", at(-3*time.Hour))
	j := newJobAt(t, base, at(-time.Hour))
	fresh := newCronJob("0 * * * *", at(-3*time.Hour), lastScheduled(at(-time.Hour)), active(j))
	f := newFixture(t, at(-time.Minute), j)
	f.cache(t, base)
	if err := f.client.Tracker().Add(fresh); err != nil {
		t.Fatal(err)
	}
	events, err := f.sync(t)
	if err != nil || len(events) != 0 {
		t.Fatalf("err %v, events %q", err, events)
	}
	eq(t, "requests", f.verbs(), []string{"get cronjobs"})
}

func TestSyncMissingJob(t *testing.T) {
	base := newCronJob("0 * * * *", at(-3*time.Hour))
	gone := newJobAt(t, base, at(-time.Hour))
	lagging := newJobAt(t, base, at(-2*time.Hour))
	cj := newCronJob("0 * * * *", at(-3*time.Hour), lastScheduled(at(-time.Hour)), active(gone, lagging))
	f := newFixture(t, at(-time.Minute), cj)
	// The API server has the lagging one; the cache has neither.
	if err := f.client.Tracker().Add(lagging); err != nil {
		t.Fatal(err)
	}
	events, err := f.sync(t)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "events", events, []string{"Normal MissingJob Active job went missing: " + gone.Name})
	st := f.status()
	if st == nil || len(st.Active) != 1 || st.Active[0].Name != lagging.Name {
		t.Fatalf("status = %+v", st)
	}
}

func TestSyncHistoryLimits(t *testing.T) {
	base := newCronJob("0 * * * *", at(-10*time.Hour))
	var jobs []runtime.Object
	mk := func(h int, opts ...jobOpt) *batchv1.Job {
		s := at(time.Duration(-h) * time.Hour)
		j := newJobAt(t, base, s, append([]jobOpt{started(s)}, opts...)...)
		jobs = append(jobs, j)
		return j
	}
	ok := func(h int) jobOpt { return finished(batchv1.JobComplete, at(time.Duration(-h)*time.Hour+time.Minute)) }
	bad := func(h int) jobOpt { return finished(batchv1.JobFailed, at(time.Duration(-h)*time.Hour+time.Minute)) }
	ok9, ok8, ok7 := mk(9, ok(9)), mk(8, ok(8)), mk(7, ok(7))
	bad6, bad5 := mk(6, bad(6)), mk(5, bad(5))
	running := mk(4)
	ok3 := mk(3, ok(3))
	cj := newCronJob("0 * * * *", at(-10*time.Hour), history(2, 1), lastScheduled(at(-time.Hour)), active(running, ok3))
	f := newFixture(t, at(-time.Minute), append(jobs, cj)...)
	events, err := f.sync(t)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "deleted", f.deleted(), []string{ok9.Name, ok8.Name, bad6.Name})
	eq(t, "events", events, []string{
		"Normal SuccessfulDelete Deleted job " + ok9.Name,
		"Normal SuccessfulDelete Deleted job " + ok8.Name,
		"Normal SuccessfulDelete Deleted job " + bad6.Name,
		"Normal SawCompletedJob Saw completed job: " + ok3.Name + ", condition: Complete",
	})
	_, _ = ok7, bad5
	st := f.status()
	if st == nil || len(st.Active) != 1 || st.Active[0].Name != running.Name {
		t.Fatalf("status = %+v", st)
	}
	eq(t, "lastSuccessfulTime", st.LastSuccessfulTime, mtime(at(-3*time.Hour+time.Minute)))
}

// A listed Job that finished and is beyond the history limit is deleted
// before the active list is reconciled, so no SawCompletedJob (as
// upstream).
func TestSyncHistoryLimitZeroDropsActive(t *testing.T) {
	base := newCronJob("0 * * * *", at(-3*time.Hour))
	s := at(-time.Hour)
	done := newJobAt(t, base, s, started(s), finished(batchv1.JobComplete, s.Add(time.Minute)))
	cj := newCronJob("0 * * * *", at(-3*time.Hour), history(0, 0), lastScheduled(s), active(done))
	f := newFixture(t, at(-time.Minute), cj, done)
	events, err := f.sync(t)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "events", events, []string{"Normal SuccessfulDelete Deleted job " + done.Name})
	st := f.status()
	if st == nil || len(st.Active) != 0 || !st.LastSuccessfulTime.Equal(mtime(s.Add(time.Minute))) {
		t.Fatalf("status = %+v", st)
	}
}

func TestSyncCreateRejected(t *testing.T) {
	cj := newCronJob("0 * * * *", at(-time.Hour))
	f := newFixture(t, at(time.Second), cj)
	f.client.PrependReactor("create", "jobs", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "batch", Resource: "jobs"}, "x", fmt.Errorf("denied"))
	})
	events, err := f.sync(t)
	if err == nil {
		t.Fatal("no error: the sync must be retried with backoff")
	}
	eq(t, "events", events, []string{`Warning FailedCreate Error creating job: jobs.batch "x" is forbidden: denied`})
	if f.status() != nil || len(f.queue.requeued()) != 0 {
		t.Errorf("status %v written or requeued", f.status())
	}
}

func TestSyncNamespaceTerminating(t *testing.T) {
	cj := newCronJob("0 * * * *", at(-time.Hour))
	f := newFixture(t, at(time.Second), cj)
	f.client.PrependReactor("create", "jobs", func(clienttesting.Action) (bool, runtime.Object, error) {
		err := apierrors.NewForbidden(schema.GroupResource{Group: "batch", Resource: "jobs"}, "x", fmt.Errorf("terminating"))
		err.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: v1.NamespaceTerminatingCause}}
		return true, nil, err
	})
	events, err := f.sync(t)
	if err == nil || len(events) != 0 {
		t.Fatalf("err %v, events %q", err, events)
	}
}

func TestSyncJobAlreadyExists(t *testing.T) {
	cj := newCronJob("0 * * * *", at(-time.Hour))
	mine := newJobAt(t, cj, hour)
	theirs := mine.DeepCopy()
	theirs.OwnerReferences = nil
	for _, tc := range []struct {
		name     string
		existing *batchv1.Job
		listed   bool
	}{{"controlled", mine, true}, {"not controlled", theirs, false}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, at(time.Second), cj)
			if err := f.client.Tracker().Add(tc.existing); err != nil {
				t.Fatal(err)
			}
			events, err := f.sync(t)
			if err != nil || len(events) != 0 {
				t.Fatalf("err %v, events %q", err, events)
			}
			st := f.status()
			if tc.listed != (st != nil && len(st.Active) == 1 && st.Active[0].UID == mine.UID) {
				t.Errorf("status = %+v", st)
			}
			// Upstream: listed, requeued for the next time; else neither.
			eq(t, "requeued", len(f.queue.requeued()) == 1, tc.listed)
		})
	}
}

func TestSyncStatusConflictRetried(t *testing.T) {
	cj := newCronJob("0 * * * *", at(-10*time.Minute))
	f := newFixture(t, at(5*time.Second), cj)
	f.client.PrependReactor("update", "cronjobs", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(schema.GroupResource{Group: "batch", Resource: "cronjobs"}, "cj", fmt.Errorf("stale"))
	})
	if _, err := f.sync(t); !apierrors.IsConflict(err) {
		t.Fatalf("err = %v", err)
	}
	if len(f.queue.requeued()) != 0 {
		t.Error("requeued for the next time as well as with backoff")
	}
}

func TestSyncDeletedCronJob(t *testing.T) {
	f := newFixture(t, hour)
	if events, err := f.sync(t); err != nil || len(events) != 0 || len(f.client.Actions()) != 0 {
		t.Fatalf("err %v, events %q, requests %v", err, events, f.verbs())
	}
}

// A sync woken right after the controller's own status write, before the
// cache has it, starts from the write: the finished Job is reported once.
func TestSyncStartsFromOwnWrite(t *testing.T) {
	base := newCronJob("0 * * * *", at(-3*time.Hour))
	s := at(-time.Hour)
	done := newJobAt(t, base, s, started(s), finished(batchv1.JobComplete, s.Add(time.Minute)))
	cj := newCronJob("0 * * * *", at(-3*time.Hour), lastScheduled(s), active(done))
	cj.ResourceVersion = "5"
	f := newFixture(t, at(-time.Minute), cj, done)
	// The fake does not move resourceVersions; the API server does.
	f.client.PrependReactor("update", "cronjobs", func(a clienttesting.Action) (bool, runtime.Object, error) {
		a.(clienttesting.UpdateAction).GetObject().(*batchv1.CronJob).ResourceVersion = "6"
		return false, nil, nil
	})
	events, err := f.sync(t)
	if err != nil || len(events) != 1 {
		t.Fatalf("err %v, events %q", err, events)
	}
	if st := f.status(); st == nil || len(st.Active) != 0 {
		t.Fatalf("status %+v", st)
	}
	events, err = f.sync(t)
	if err != nil || len(events) != 0 {
		t.Fatalf("second sync: err %v, events %q", err, events)
	}
	if n := len(f.verbs()); n != 1 {
		t.Errorf("requests %v", f.verbs())
	}
	// Once the cache has caught up, it is the cache again.
	fresh, err := f.client.BatchV1().CronJobs("ns").Get(t.Context(), "cj", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.cache(t, fresh)
	if got := f.c.written.Newest("ns/cj", fresh); got != fresh {
		t.Error("written copy kept after the cache caught up")
	}
}
