package parity

import (
	"regexp"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// scheduledNames recognises the Jobs of captured CronJobs: the
// cronjob-controller names each <cronjob>-<minutes since the epoch of its
// scheduled time>, which differs between runs. The name becomes
// <cronjob>-<minute+N>, N counting minutes from the one the CronJob was
// created in: the first time of an every-minute CronJob is always
// <minute+1>, whatever second it was created at, so a Job started for
// another scheduled time than upstream's still shows in the diff.
type scheduledNames struct {
	// created is each captured CronJob's creation minute, by name.
	created map[string]int64
	re      *regexp.Regexp
	// found maps each Job name seen to its normalised form.
	found map[string]string
}

func newScheduledNames(objs []*unstructured.Unstructured) *scheduledNames {
	s := &scheduledNames{created: map[string]int64{}, found: map[string]string{}}
	var alts string
	for _, o := range objs {
		if o.GetKind() != "CronJob" {
			continue
		}
		s.created[o.GetName()] = o.GetCreationTimestamp().Unix() / 60
		if alts != "" {
			alts += "|"
		}
		alts += regexp.QuoteMeta(o.GetName())
	}
	if alts != "" {
		// A name with 7 or more digits (minutes since 1970 have had 8
		// since 1979), as a whole word or followed by "-" (a pod's name).
		s.re = regexp.MustCompile(`\b(` + alts + `)-([0-9]{7,})\b`)
	}
	return s
}

// scan records the Job names of known CronJobs in str.
func (s *scheduledNames) scan(str string) {
	if s.re == nil {
		return
	}
	for _, m := range s.re.FindAllStringSubmatch(str, -1) {
		minute, err := strconv.ParseInt(m[2], 10, 64)
		if err != nil {
			continue
		}
		s.found[m[0]] = m[1] + "-<minute+" + strconv.FormatInt(minute-s.created[m[1]], 10) + ">"
	}
}

// scanObjects records the names in every object's name, labels and
// annotations and every Event's involved object and message.
func (s *scheduledNames) scanObjects(objs, events []*unstructured.Unstructured) {
	if s.re == nil {
		return
	}
	for _, o := range objs {
		s.scan(o.GetName())
		for _, v := range o.GetLabels() {
			s.scan(v)
		}
	}
	for _, e := range events {
		name, _, _ := unstructured.NestedString(e.Object, "involvedObject", "name")
		msg, _, _ := unstructured.NestedString(e.Object, "message")
		s.scan(name)
		s.scan(msg)
	}
}
