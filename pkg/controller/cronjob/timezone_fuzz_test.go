package cronjob

import (
	"strings"
	"testing"
	"time"

	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/client-go/tools/record"
)

// FuzzScheduleSpec checks spec.timeZone handling: a schedule naming a zone
// itself is used as it is, with an UnsupportedSchedule warning; otherwise
// a known spec.timeZone becomes a TZ= prefix (an unknown one is dropped),
// and the prefixed schedule parses whenever the bare one does and fires at
// the same instants as the bare one read in that zone.
func FuzzScheduleSpec(f *testing.F) {
	for _, s := range []struct{ spec, zone string }{
		{"0 * * * *", ""},
		{"30 2 * * *", "America/New_York"},
		{"30 1 * * *", "America/New_York"},
		{"0 0 * * 1-5", "Asia/Kolkata"},
		{"45 23 * * *", "Pacific/Chatham"},
		{"@daily", "Europe/Berlin"},
		{"@every 90m", "Australia/Lord_Howe"},
		{"TZ=UTC 0 * * * *", "Europe/Berlin"},
		{"CRON_TZ=Asia/Tokyo 0 9 * * *", ""},
		{"0 * * * *", "Nowhere/Else"},
		{"0 * * * *", "UTC"},
		{"0 * * * *", "Local"},
		{"0 * * * *", " "},
		{"0 * * * *", "../etc/passwd"},
		{"", "UTC"},
		{"  0 * * * *  ", "UTC"},
		{"59 23 31 2 *", "UTC"},
	} {
		f.Add(s.spec, s.zone, true, int64(1710000000))
	}
	f.Fuzz(func(t *testing.T, spec, zone string, hasZone bool, nowSec int64) {
		cj := &batchv1.CronJob{Spec: batchv1.CronJobSpec{Schedule: spec}}
		if hasZone {
			cj.Spec.TimeZone = &zone
		}
		recorder := record.NewFakeRecorder(10)
		got := scheduleSpec(cj, recorder)
		loc, zoneErr := time.LoadLocation(zone)
		switch {
		case strings.Contains(spec, "TZ"):
			if got != spec {
				t.Fatalf("scheduleSpec(%q, %q) = %q, want the schedule as it is", spec, zone, got)
			}
			if len(recorder.Events) != 1 || !strings.Contains(<-recorder.Events, "UnsupportedSchedule") {
				t.Errorf("schedule %q with a zone: no UnsupportedSchedule warning", spec)
			}
			return
		case hasZone && zoneErr == nil:
			if want := "TZ=" + zone + " " + spec; got != want {
				t.Fatalf("scheduleSpec(%q, %q) = %q, want %q", spec, zone, got, want)
			}
		default:
			if got != spec {
				t.Fatalf("scheduleSpec(%q, %q) = %q, want the schedule as it is", spec, zone, got)
			}
			return
		}
		if len(recorder.Events) != 0 {
			t.Errorf("schedule %q: unexpected event %q", spec, <-recorder.Events)
		}

		bare, err := parseSchedule(spec)
		if err != nil {
			return
		}
		zoned, err := parseSchedule(got)
		if err != nil {
			t.Fatalf("%q parses but %q does not: %v", spec, got, err)
		}
		if s, ok := bare.(*cron.SpecSchedule); ok {
			s.Location = loc
		}
		now := fuzzTime(nowSec)
		if a, b := zoned.Next(now), bare.Next(now); !a.Equal(b) {
			t.Errorf("schedule %q in zone %q: next after %v is %v, want %v", spec, zone, now, a, b)
		}
	})
}
