package cronjob

import (
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
)

func TestJobName(t *testing.T) {
	cj := newCronJob("* * * * *", hour)
	for _, tc := range []struct {
		at   time.Time
		want string
	}{
		{time.Unix(0, 0), "cj-0"},
		{time.Unix(59, 0), "cj-0"},
		{time.Unix(60, 0), "cj-1"},
		{hour, "cj-24394200"},
		// The name is the same minute whatever the zone.
		{hour.In(time.FixedZone("x", 5*3600+1800)), "cj-24394200"},
	} {
		if got := jobName(cj, tc.at); got != tc.want {
			t.Errorf("jobName(%v) = %q, want %q", tc.at, got, tc.want)
		}
	}
}

func TestNewJobScheduledTimestamp(t *testing.T) {
	for _, tc := range []struct {
		zone *string
		want string
	}{
		{nil, "2016-05-19T10:00:00Z"},
		{ptrTo("UTC"), "2016-05-19T10:00:00Z"},
		{ptrTo("Asia/Kolkata"), "2016-05-19T15:30:00+05:30"},
	} {
		cj := newCronJob("* * * * *", hour)
		cj.Spec.TimeZone = tc.zone
		j, err := newJob(cj, hour)
		if err != nil {
			t.Fatal(err)
		}
		if got := j.Annotations[batchv1.CronJobScheduledTimestampAnnotation]; got != tc.want {
			t.Errorf("zone %v: annotation %q, want %q", tc.zone, got, tc.want)
		}
		if !j.CreationTimestamp.Time.Equal(hour) {
			t.Errorf("creationTimestamp %v", j.CreationTimestamp)
		}
	}
	cj := newCronJob("* * * * *", hour, zone("Mars/Olympus"))
	if _, err := newJob(cj, hour); err == nil {
		t.Error("unknown zone accepted")
	}
}

// newJob copies the template: changing the Job leaves the CronJob alone.
func TestNewJobCopies(t *testing.T) {
	cj := newCronJob("* * * * *", hour)
	j, err := newJob(cj, hour)
	if err != nil {
		t.Fatal(err)
	}
	j.Labels["a"] = "changed"
	j.Annotations["x"] = "changed"
	j.Spec.Template.Spec.Containers[0].Image = "changed"
	if cj.Spec.JobTemplate.Labels["a"] != "b" || cj.Spec.JobTemplate.Annotations["x"] != "y" ||
		cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image != "img" {
		t.Errorf("template changed: %+v", cj.Spec.JobTemplate)
	}
}

func TestOlderFirst(t *testing.T) {
	cj := newCronJob("* * * * *", hour)
	mk := func(name string, start *time.Time) *batchv1.Job {
		j := newJobAt(t, cj, hour)
		j.Name = name
		if start != nil {
			j.Status.StartTime = mtime(*start)
		}
		return j
	}
	late, early := hour.Add(time.Minute), hour
	jobs := []*batchv1.Job{mk("e", nil), mk("d", &late), mk("c", nil), mk("b", &early), mk("a", &late)}
	slices.SortFunc(jobs, olderFirst)
	var got []string
	for _, j := range jobs {
		got = append(got, j.Name)
	}
	if want := []string{"b", "a", "d", "c", "e"}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

func ptrTo(s string) *string { return &s }
