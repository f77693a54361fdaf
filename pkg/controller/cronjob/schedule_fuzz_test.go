package cronjob

import (
	"strings"
	"testing"
	"time"

	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
)

// fuzzDeadline bounds one schedule computation: far more than a correct
// one needs, so that exceeding it means a hang.
const fuzzDeadline = 5 * time.Second

// withDeadline runs fn and fails the test if it does not return in time.
func withDeadline(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(fuzzDeadline):
		t.Fatalf("%s did not return within %v", what, fuzzDeadline)
	}
}

// fuzzTime maps an arbitrary int64 to a second between 1970 and 2200, the
// range a CronJob's timestamps and the clock can realistically take.
func fuzzTime(sec int64) time.Time {
	const lo, hi = 0, 7258118400 // 1970-01-01, 2200-01-01
	if sec < lo || sec >= hi {
		sec = lo + (sec%(hi-lo)+(hi-lo))%(hi-lo)
	}
	return time.Unix(sec, 0).UTC()
}

// FuzzParseSchedule checks that any schedule string gives a schedule or an
// error, never a panic or a hang, and that a schedule that parses yields
// either no time (the zero time) or one strictly after now, at a whole
// second.
func FuzzParseSchedule(f *testing.F) {
	for _, s := range []string{
		"", " ", "*", "* * * * *", "0 * * * *", "*/5 * * * *", "30 6-16/4 * * 1-5",
		"59 23 31 2 *", "0 0 29 2 *", "@hourly", "@daily", "@yearly", "@every 1h", "@every 0s",
		"@every -1s", "@every 1ns", "@every", "@reboot", "TZ=", "CRON_TZ=", "TZ=UTC 0 * * * *",
		"CRON_TZ=America/New_York 30 2 * * *", "TZ=Nowhere/Else * * * * *", "TZ=Europe/Berlin",
		"60 * * * *", "* 24 * * *", "* * 0 * *", "* * * 13 *", "* * * * 7", "*/0 * * * *",
		"1-0 * * * *", "5-2/3 * * * *", "a b c d e", "JAN-DEC * * * *", "* * * JAN-DEC MON-FRI",
		"* * * * * *", "0 0 0 0 0 0 0", "?", "? ? ? ? ?", "9223372036854775807 * * * *",
		"*/9223372036854775807 * * * *", "-1 * * * *", "0,,1 * * * *", "\x00", "日 * * * *",
		strings.Repeat("* ", 1000),
	} {
		f.Add(s, int64(1463652000))
	}
	f.Add("0 0 29 2 *", int64(4070908800)) // 2099: the next leap day is five years off
	f.Fuzz(func(t *testing.T, spec string, nowSec int64) {
		now := fuzzTime(nowSec).Add(123 * time.Millisecond)
		withDeadline(t, "parseSchedule("+spec+")", func() {
			sched, err := parseSchedule(spec)
			if err != nil {
				if sched != nil {
					t.Errorf("parseSchedule(%q) returned a schedule and error %v", spec, err)
				}
				return
			}
			if sched == nil {
				t.Fatalf("parseSchedule(%q) returned neither schedule nor error", spec)
			}
			next := sched.Next(now)
			if next.IsZero() {
				return // no time within five years
			}
			if !next.After(now) {
				t.Errorf("schedule %q: Next(%v) = %v, not after it", spec, now, next)
			}
			if next.Nanosecond() != 0 {
				t.Errorf("schedule %q: Next(%v) = %v, not a whole second", spec, now, next)
			}
		})
	})
}

// FuzzMostRecent checks the missed-schedule computation on any schedule,
// time zone and timestamps: it returns (no hang), a time it finds lies in
// (earliest, now] and is one the schedule fires at, an error comes
// without a time, nextUnmet never returns a future time, and the requeue
// aims past now.
func FuzzMostRecent(f *testing.F) {
	const may2016 = 1463652000 // Thursday 2016-05-19 10:00 UTC
	for _, s := range []struct {
		spec, zone                      string
		created, last, nowOff, deadline int64
	}{
		{"0 * * * *", "", may2016, -1, 30, -1},
		{"0 * * * *", "", may2016, -1, 3660, -1},
		{"0 * * * *", "", may2016 + 10, -1, 301 * 60, -1},
		{"30 6-16/4 * * 1-5", "", may2016, may2016 + 1800, 24*3600 + 31*60, -1},
		{"30 10,11,12 * * 1-5", "", may2016, may2016 + 1800, 30*3600 + 1800, -1},
		{"@every 1h", "", may2016 - 59*60, may2016 + 60, 7 * 24 * 3600, 10},
		{"* * * * *", "", may2016, -1, 200 * 24 * 3600, 200},
		{"59 23 31 2 *", "", may2016, -1, 3600, -1},
		{"30 2 * * *", "America/New_York", 1710000000, -1, 3 * 24 * 3600, -1}, // spring forward
		{"30 1 * * *", "America/New_York", 1730500000, -1, 3 * 24 * 3600, -1}, // fall back
		{"0 0 * * *", "Nowhere/Else", may2016, -1, 2 * 24 * 3600, -1},
		{"CRON_TZ=Asia/Kolkata 0 9 * * *", "", may2016, -1, 10 * 24 * 3600, 0},
		{"0 0 29 2 *", "", may2016, -1, 10 * 365 * 24 * 3600, -1},
		{"@yearly", "", 0, -1, 7258118399, -1},
		{"0 0 1 1 *", "", 0, 7258118000, 100, 1 << 40},
		// Leap days around 2100, which is none: the walk from 2096 meets
		// a five-year gap, where the parser's Next returns the zero time.
		{"0 0 29 2 *", "", 3786912000, -1, 4147027200 - 3786912000, -1},
		{"0 0 29 2 *", "", 3786912000, 4020883200, 4147027200 - 4020883200, -1},
	} {
		f.Add(s.spec, s.zone, s.created, s.last, s.nowOff, s.deadline, true)
		f.Add(s.spec, s.zone, s.created, s.last, s.nowOff, s.deadline, false)
	}
	f.Fuzz(func(t *testing.T, spec, zone string, created, last, nowOff, deadline int64, useDeadline bool) {
		cj := &batchv1.CronJob{Spec: batchv1.CronJobSpec{Schedule: spec}}
		cj.CreationTimestamp = metav1.NewTime(fuzzTime(created))
		if zone != "" {
			cj.Spec.TimeZone = &zone
		}
		if last >= 0 {
			cj.Status.LastScheduleTime = &metav1.Time{Time: fuzzTime(last)}
		}
		if deadline >= 0 {
			cj.Spec.StartingDeadlineSeconds = &deadline
		}
		start := cj.CreationTimestamp.Time
		if cj.Status.LastScheduleTime != nil {
			start = cj.Status.LastScheduleTime.Time
		}
		now := fuzzTime(start.Unix() + max(nowOff, 0)%(200*365*24*3600)).Add(250 * time.Millisecond)

		var s cron.Schedule
		withDeadline(t, "parseSchedule", func() { s, _ = parseSchedule(scheduleSpec(cj, nil)) })
		if s == nil {
			return
		}
		withDeadline(t, "mostRecent", func() {
			earliest, latest, m, err := mostRecent(cj, now, s, useDeadline)
			if earliest.Before(start) {
				t.Errorf("earliest %v is before the last schedule or creation time %v", earliest, start)
			}
			if err != nil {
				if latest != nil {
					t.Errorf("error %v with a time %v", err, latest)
				}
				return
			}
			if latest == nil {
				return
			}
			if !latest.After(earliest) || latest.After(now) {
				t.Errorf("most recent time %v is not in (%v, %v] (missed %v)", latest, earliest, now, m)
			}
			switch s := s.(type) {
			case *cron.SpecSchedule:
				if got := s.Next(latest.Add(-time.Second)); !got.Equal(*latest) {
					t.Errorf("most recent time %v is no scheduled time: the one after the second before it is %v", latest, got)
				}
			case cron.ConstantDelaySchedule:
				// @every counts from the first time after earliest.
				if d := latest.Sub(s.Next(earliest)); d%s.Delay != 0 {
					t.Errorf("most recent time %v is not a whole number of %v after the first time %v", latest, s.Delay, s.Next(earliest))
				}
			}
		})
		withDeadline(t, "nextUnmet", func() {
			// The zero Logger discards.
			if got, _ := nextUnmet(klog.Logger{}, cj, now, s, &record.FakeRecorder{}); got != nil && got.After(now) {
				t.Errorf("nextUnmet returned %v, after now %v", got, now)
			}
		})
		withDeadline(t, "requeueAfter", func() {
			// The requeue aims past the time after now, earliest or the
			// most recent time, unless the parser finds none in the five
			// years after it (a leap-day schedule near 2100).
			d := requeueAfter(cj, now, s)
			earliest, latest, _, _ := mostRecent(cj, now, s, false)
			gap := s.Next(now).IsZero() || s.Next(earliest).IsZero() || latest != nil && s.Next(*latest).IsZero()
			if d <= 0 && !gap {
				t.Errorf("requeueAfter = %v, not in the future", d)
			}
		})
	})
}
