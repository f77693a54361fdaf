package cronjob

import (
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/reference"
	"k8s.io/utils/ptr"
)

var cronJobKind = batchv1.SchemeGroupVersion.WithKind("CronJob")

// jobName is the name of the Job for a scheduled time: the CronJob's name
// and the time in whole minutes since the epoch. The name is the lock that
// keeps two syncs from creating a Job for one time twice.
func jobName(cj *batchv1.CronJob, scheduled time.Time) string {
	return fmt.Sprintf("%s-%d", cj.Name, scheduled.Unix()/60)
}

// newJob builds the Job for a scheduled time from the CronJob's template:
// its labels and annotations, the scheduled-timestamp annotation (in the
// CronJob's time zone), and the CronJob as controller owner. It fails only
// for a time zone this binary does not know.
func newJob(cj *batchv1.CronJob, scheduled time.Time) (*batchv1.Job, error) {
	loc, err := time.LoadLocation(ptr.Deref(cj.Spec.TimeZone, ""))
	if err != nil {
		return nil, err
	}
	labels := make(map[string]string, len(cj.Spec.JobTemplate.Labels))
	for k, v := range cj.Spec.JobTemplate.Labels {
		labels[k] = v
	}
	annotations := make(map[string]string, len(cj.Spec.JobTemplate.Annotations)+1)
	for k, v := range cj.Spec.JobTemplate.Annotations {
		annotations[k] = v
	}
	annotations[batchv1.CronJobScheduledTimestampAnnotation] = scheduled.In(loc).Format(time.RFC3339)

	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:              jobName(cj, scheduled),
			Labels:            labels,
			Annotations:       annotations,
			CreationTimestamp: metav1.NewTime(scheduled),
			OwnerReferences:   []metav1.OwnerReference{*metav1.NewControllerRef(cj, cronJobKind)},
		},
	}
	cj.Spec.JobTemplate.Spec.DeepCopyInto(&job.Spec)
	return job, nil
}

// finishedType returns Complete or Failed for a Job with either condition
// True (the first such condition), "" for a Job still running.
func finishedType(j *batchv1.Job) batchv1.JobConditionType {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == v1.ConditionTrue {
			return c.Type
		}
	}
	return ""
}

// succeeded reports whether a Job has a True Complete condition.
func succeeded(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == batchv1.JobComplete && c.Status == v1.ConditionTrue {
			return true
		}
	}
	return false
}

// olderFirst orders Jobs by start time, unstarted ones last, then by name.
func olderFirst(a, b *batchv1.Job) int {
	sa, sb := a.Status.StartTime, b.Status.StartTime
	switch {
	case sa == nil && sb != nil:
		return 1
	case sa != nil && sb == nil:
		return -1
	case sa.Equal(sb):
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	case sa.Before(sb):
		return -1
	}
	return 1
}

// isActive reports whether the CronJob's active list holds the uid.
func isActive(cj *batchv1.CronJob, uid types.UID) bool {
	for _, r := range cj.Status.Active {
		if r.UID == uid {
			return true
		}
	}
	return false
}

// isActiveName reports whether the active list holds a Job of that name in
// the CronJob's namespace.
func isActiveName(cj *batchv1.CronJob, name string) bool {
	for _, r := range cj.Status.Active {
		if r.Name == name && r.Namespace == cj.Namespace {
			return true
		}
	}
	return false
}

// removeActive drops the uid from the active list. The list is rebuilt
// (never nil afterwards), as upstream does.
func removeActive(cj *batchv1.CronJob, uid types.UID) {
	kept := []v1.ObjectReference{}
	for _, r := range cj.Status.Active {
		if r.UID != uid {
			kept = append(kept, r)
		}
	}
	cj.Status.Active = kept
}

// jobRef is the active list's reference to a Job.
func jobRef(j *batchv1.Job) (*v1.ObjectReference, error) {
	return reference.GetReference(scheme.Scheme, j)
}
