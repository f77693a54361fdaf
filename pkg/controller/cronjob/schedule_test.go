package cronjob

import (
	"testing"
	"time"

	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"
)

// hour is a Thursday, 10:00 UTC.
var hour = time.Date(2016, 5, 19, 10, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return hour.Add(d) }

func mtime(t time.Time) *metav1.Time { return ptr.To(metav1.NewTime(t)) }

func mustParse(t *testing.T, cj *batchv1.CronJob) cron.Schedule {
	t.Helper()
	s, err := parseSchedule(scheduleSpec(cj, nil))
	if err != nil {
		t.Fatalf("parse %q: %v", cj.Spec.Schedule, err)
	}
	return s
}

func TestMostRecent(t *testing.T) {
	tests := []struct {
		name         string
		cj           *batchv1.CronJob
		withDeadline bool
		now          time.Time
		wantEarliest time.Time
		want         *time.Time
		wantMissed   missed
		wantErr      bool
	}{
		{name: "before the first time", cj: newCronJob("0 * * * *", hour), now: at(30 * time.Second), wantEarliest: hour},
		{name: "just after the first time", cj: newCronJob("0 * * * *", hour), now: at(61 * time.Minute),
			wantEarliest: hour, want: ptr.To(at(time.Hour))},
		{name: "five missed", cj: newCronJob("0 * * * *", at(10*time.Second)), now: at(301 * time.Minute),
			wantEarliest: at(10 * time.Second), want: ptr.To(at(300 * time.Minute)), wantMissed: missedFew},
		{name: "weekdays every four hours", cj: newCronJob("30 6-16/4 * * 1-5", hour, lastScheduled(at(30*time.Minute))),
			now: at(24*time.Hour + 31*time.Minute), wantEarliest: at(30 * time.Minute),
			want: ptr.To(at(24*time.Hour + 30*time.Minute)), wantMissed: missedFew},
		// The estimate from the first interval (an hour) overshoots the
		// evening gap: the most recent time (11:30 the day after) is
		// not found, as upstream's.
		{name: "irregular schedule, estimate misses", cj: newCronJob("30 10,11,12 * * 1-5", hour, lastScheduled(at(30*time.Minute))),
			now: at(30*time.Hour + 30*time.Minute), wantEarliest: at(30 * time.Minute), wantMissed: missedFew},
		{name: "over the weekend", cj: newCronJob("30 6-16/4 * * 1-5", hour, lastScheduled(at(30*time.Minute))),
			now: at(96*time.Hour + 31*time.Minute), wantEarliest: at(30 * time.Minute),
			want: ptr.To(at(96*time.Hour + 30*time.Minute)), wantMissed: missedFew},
		{name: "@every past the limit", cj: newCronJob("@every 1h", at(-59*time.Minute), lastScheduled(at(time.Minute)), deadline(10)),
			now: at(7 * 24 * time.Hour), wantEarliest: at(time.Minute),
			want: ptr.To(at(6*24*time.Hour + 23*time.Hour + time.Minute)), wantMissed: missedMany},
		{name: "February 31st", cj: newCronJob("59 23 31 2 *", at(10*time.Second)), now: at(time.Hour), wantErr: true},
		{name: "last schedule time is the earliest", cj: newCronJob("*/5 * * * *", hour, lastScheduled(at(30*time.Minute))),
			now: at(31 * time.Minute), wantEarliest: at(30 * time.Minute)},
		{name: "deadline not applied", cj: newCronJob("*/5 * * * *", hour, lastScheduled(at(30*time.Minute)), deadline(60)),
			now: at(32 * time.Minute), wantEarliest: at(30 * time.Minute)},
		{name: "deadline later than last schedule", cj: newCronJob("*/5 * * * *", hour, lastScheduled(at(30*time.Minute)), deadline(60)),
			withDeadline: true, now: at(32 * time.Minute), wantEarliest: at(31 * time.Minute)},
		{name: "deadline drops old times", cj: newCronJob("*/5 * * * *", hour, deadline(60)),
			withDeadline: true, now: at(35*time.Minute + 30*time.Second), wantEarliest: at(34*time.Minute + 30*time.Second),
			want: ptr.To(at(35 * time.Minute))},
		{name: "101 missed minutes", cj: newCronJob("* * * * *", hour), now: at(102 * time.Minute),
			wantEarliest: hour, want: ptr.To(at(102 * time.Minute)), wantMissed: missedMany},
		{name: "100 missed minutes", cj: newCronJob("* * * * *", hour), now: at(100 * time.Minute),
			wantEarliest: hour, want: ptr.To(at(100 * time.Minute)), wantMissed: missedFew},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sched, err := parseSchedule(tc.cj.Spec.Schedule)
			if err != nil {
				t.Fatal(err)
			}
			earliest, got, m, err := mostRecent(tc.cj, tc.now, sched, tc.withDeadline)
			if tc.wantErr {
				if err == nil {
					t.Fatal("no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !earliest.Equal(tc.wantEarliest) {
				t.Errorf("earliest = %v, want %v", earliest, tc.wantEarliest)
			}
			if (got == nil) != (tc.want == nil) || got != nil && !got.Equal(*tc.want) {
				t.Errorf("most recent = %v, want %v", got, tc.want)
			}
			if m != tc.wantMissed {
				t.Errorf("missed = %v, want %v", m, tc.wantMissed)
			}
		})
	}
}

func TestRequeueAfter(t *testing.T) {
	tests := []struct {
		name string
		cj   *batchv1.CronJob
		now  time.Time
		want time.Duration
	}{
		{name: "weekday schedule, next the same afternoon", cj: newCronJob("30 6-16/4 * * 1-5", hour, lastScheduled(at(30*time.Minute))),
			now: at(24*time.Hour + 31*time.Minute), want: 3*time.Hour + 59*time.Minute},
		{name: "estimate misses: next after now, over the weekend", cj: newCronJob("30 10,11,12 * * 1-5", hour, lastScheduled(at(30*time.Minute))),
			now: at(30*time.Hour + 30*time.Minute), want: 66 * time.Hour},
		{name: "weekly, two missed", cj: newCronJob("0 12 * * 4", hour, lastScheduled(at(2*time.Hour))),
			now: at(19*24*time.Hour + time.Hour + 30*time.Minute), want: 48*time.Hour + 30*time.Minute},
		{name: "never run", cj: newCronJob("0 12 * * 5", hour), now: at(6 * time.Hour), want: 20 * time.Hour},
		{name: "every minute, mid-minute", cj: newCronJob("* * * * *", hour, lastScheduled(at(time.Minute))),
			now: at(time.Minute + 20*time.Second), want: 40 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sched, err := parseSchedule(tc.cj.Spec.Schedule)
			if err != nil {
				t.Fatal(err)
			}
			if got := requeueAfter(tc.cj, tc.now, sched); got != tc.want+requeueDelta {
				t.Errorf("requeue after %v, want %v", got, tc.want+requeueDelta)
			}
		})
	}
}

// A schedule that never fires twice is requeued at once (its sync reports
// it and stops).
func TestRequeueAfterNeverFires(t *testing.T) {
	cj := newCronJob("59 23 31 2 *", hour)
	if d := requeueAfter(cj, at(time.Hour), mustParse(t, cj)); d > 0 {
		t.Errorf("requeue after %v", d)
	}
}

func TestScheduleSpec(t *testing.T) {
	rec := record.NewFakeRecorder(10)
	tests := []struct {
		name      string
		cj        *batchv1.CronJob
		want      string
		wantEvent bool
	}{
		{name: "plain", cj: newCronJob("0 9 * * *", hour), want: "0 9 * * *"},
		{name: "time zone", cj: newCronJob("0 9 * * *", hour, zone("Europe/Paris")), want: "TZ=Europe/Paris 0 9 * * *"},
		{name: "unknown time zone ignored", cj: newCronJob("0 9 * * *", hour, zone("Mars/Olympus")), want: "0 9 * * *"},
		{name: "CRON_TZ in the schedule wins", cj: newCronJob("CRON_TZ=Asia/Tokyo 0 9 * * *", hour, zone("Europe/Paris")),
			want: "CRON_TZ=Asia/Tokyo 0 9 * * *", wantEvent: true},
		{name: "TZ in the schedule", cj: newCronJob("TZ=UTC 0 9 * * *", hour), want: "TZ=UTC 0 9 * * *", wantEvent: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := scheduleSpec(tc.cj, rec); got != tc.want {
				t.Errorf("spec = %q, want %q", got, tc.want)
			}
			got := drain(rec)
			if tc.wantEvent != (len(got) == 1) {
				t.Errorf("events = %q", got)
			}
			if tc.wantEvent && got[0] != `Warning UnsupportedSchedule CRON_TZ or TZ used in schedule "`+tc.cj.Spec.Schedule+
				`" is not officially supported, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details` {
				t.Errorf("event = %q", got[0])
			}
		})
	}
}

func TestParseSchedule(t *testing.T) {
	for _, s := range []string{"obvious error schedule", "TZ=Bad/Zone * * * * *", "", "* * * *", "61 * * * *"} {
		if _, err := parseSchedule(s); err == nil {
			t.Errorf("%q parsed", s)
		}
	}
	for _, s := range []string{"* * * * ?", "@hourly", "@every 90s", "0 0 29 2 *", "CRON_TZ=Asia/Tokyo 0 9 * * 1-5"} {
		if _, err := parseSchedule(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
}

// TestTimeZones checks the times a zoned schedule fires at, across both
// daylight-saving changes of New York in 2024: a local time that does not
// exist is skipped, one that exists twice fires twice (the parser's
// behaviour, hence upstream's).
func TestTimeZones(t *testing.T) {
	utc := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		name     string
		cj       *batchv1.CronJob
		from     string
		want     []string
		wantName string
	}{
		{name: "Tokyo 9:00", cj: newCronJob("0 9 * * *", hour, zone("Asia/Tokyo")), from: "2024-01-01T00:00:00Z",
			want: []string{"2024-01-02T00:00:00Z", "2024-01-03T00:00:00Z"}},
		{name: "spring forward skips 2:30", cj: newCronJob("30 2 * * *", hour, zone("America/New_York")), from: "2024-03-09T12:00:00Z",
			want: []string{"2024-03-11T06:30:00Z", "2024-03-12T06:30:00Z"}},
		{name: "fall back runs 1:30 twice", cj: newCronJob("30 1 * * *", hour, zone("America/New_York")), from: "2024-11-02T12:00:00Z",
			want: []string{"2024-11-03T05:30:00Z", "2024-11-03T06:30:00Z", "2024-11-04T06:30:00Z"}},
		{name: "CRON_TZ in the schedule", cj: newCronJob("CRON_TZ=Asia/Kolkata 0 9 * * *", hour), from: "2024-01-01T00:00:00Z",
			want: []string{"2024-01-01T03:30:00Z", "2024-01-02T03:30:00Z"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sched := mustParse(t, tc.cj)
			next := utc(tc.from)
			for _, w := range tc.want {
				next = sched.Next(next)
				if !next.Equal(utc(w)) {
					t.Fatalf("next = %v, want %s", next.UTC(), w)
				}
			}
		})
	}
}

func TestNextUnmetTooManyMissed(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	rec := record.NewFakeRecorder(10)
	cj := newCronJob("* * * * *", hour)
	sched := mustParse(t, cj)
	got, err := nextUnmet(logger, cj, at(200*time.Minute+5*time.Second), sched, rec)
	if err != nil || got == nil || !got.Equal(at(200*time.Minute)) {
		t.Fatalf("next unmet = %v, %v", got, err)
	}
	want := "Warning TooManyMissedTimes too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew"
	if ev := drain(rec); len(ev) != 1 || ev[0] != want {
		t.Errorf("events = %q", ev)
	}
	// With a deadline, only the times within it count.
	cj.Spec.StartingDeadlineSeconds = ptr.To[int64](200)
	if _, err := nextUnmet(logger, cj, at(200*time.Minute+5*time.Second), sched, rec); err != nil {
		t.Fatal(err)
	}
	if ev := drain(rec); len(ev) != 0 {
		t.Errorf("events = %q", ev)
	}
}
