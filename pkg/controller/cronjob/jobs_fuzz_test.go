package cronjob

import (
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// FuzzNewJob checks the Job built for a scheduled time: its name is
// "<cronjob>-<minutes since the epoch>" and, for a valid CronJob name (at
// most 52 characters) and a time before 2200, a valid DNS subdomain short
// enough for the job-name label; its scheduled-timestamp annotation is
// RFC 3339 in the CronJob's time zone and reads back as the scheduled
// time.
func FuzzNewJob(f *testing.F) {
	for _, s := range []struct {
		name, zone string
		sec        int64
	}{
		{"cj", "", 1463652000},
		{"cj", "UTC", 0},
		{"hello", "America/New_York", 1730611800},
		{"hello", "Asia/Kolkata", 1463652059},
		{"hello", "Pacific/Chatham", 7258118399},
		{strings.Repeat("a", 52), "Europe/Berlin", 7258118399},
		{strings.Repeat("a", 253), "", 1 << 40},
		{"a.b-c", "Local", -1},
		{"", "", 0},
		{"日本", "Nowhere/Else", 1463652000},
		{"cj", "", -62135596800}, // year 1
		{"cj", "", 253402300799}, // the last second of 9999
	} {
		f.Add(s.name, s.zone, s.sec)
	}
	f.Fuzz(func(t *testing.T, name, zone string, sec int64) {
		cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: "uid"}}
		if zone != "" {
			cj.Spec.TimeZone = &zone
		}
		scheduled := time.Unix(sec, 0)
		job, err := newJob(cj, scheduled)
		if _, zerr := time.LoadLocation(zone); zerr != nil {
			if err == nil {
				t.Fatalf("newJob with unknown time zone %q: no error", zone)
			}
			return
		}
		if err != nil {
			t.Fatalf("newJob(%q, %q): %v", name, zone, err)
		}

		suffix, ok := strings.CutPrefix(job.Name, name+"-")
		if !ok {
			t.Fatalf("job name %q does not start with %q", job.Name, name+"-")
		}
		if m, err := strconv.ParseInt(suffix, 10, 64); err != nil || m != sec/60 {
			t.Errorf("job name %q: suffix %q is not the scheduled minute %d", job.Name, suffix, sec/60)
		}
		if job.Name != jobName(cj, scheduled) {
			t.Errorf("newJob named the Job %q, jobName says %q", job.Name, jobName(cj, scheduled))
		}
		realistic := sec >= 0 && sec < 7258118400
		if len(name) <= 52 && len(validation.IsDNS1123Subdomain(name)) == 0 && realistic {
			if errs := validation.IsDNS1123Subdomain(job.Name); len(errs) != 0 {
				t.Errorf("job name %q: %v", job.Name, errs)
			}
			if errs := validation.IsValidLabelValue(job.Name); len(errs) != 0 {
				t.Errorf("job name %q is no label value: %v", job.Name, errs)
			}
		}

		ts := job.Annotations[batchv1.CronJobScheduledTimestampAnnotation]
		// Before 1970 some zones had offsets of odd seconds, which RFC 3339
		// cannot write.
		if realistic {
			back, err := time.Parse(time.RFC3339, ts)
			if err != nil {
				t.Fatalf("scheduled timestamp %q: %v", ts, err)
			}
			if !back.Equal(scheduled) {
				t.Errorf("scheduled timestamp %q reads back as %v, want %v", ts, back, scheduled)
			}
		}
		if !job.CreationTimestamp.Time.Equal(scheduled) {
			t.Errorf("creation timestamp %v, want %v", job.CreationTimestamp, scheduled)
		}
		if ref := metav1.GetControllerOf(job); ref == nil || ref.UID != cj.UID || ref.Kind != "CronJob" {
			t.Errorf("controller reference %+v, want the CronJob's", ref)
		}
	})
}
