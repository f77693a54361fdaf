package resourcepoolstatusrequest

import (
	"testing"
	"time"

	resourcev1alpha3 "k8s.io/api/resource/v1alpha3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

func TestExpiry(t *testing.T) {
	at := func(d time.Duration) metav1.Time { return metav1.NewTime(epoch.Add(d)) }
	withCondition := func(typ string, when metav1.Time) func(*resourcev1alpha3.ResourcePoolStatusRequest) {
		return func(r *resourcev1alpha3.ResourcePoolStatusRequest) {
			r.Status = &resourcev1alpha3.ResourcePoolStatusRequestStatus{PoolCount: ptr.To[int32](0),
				Conditions: []metav1.Condition{{Type: typ, Status: metav1.ConditionTrue, LastTransitionTime: when}}}
		}
	}
	created := func(when metav1.Time) func(*resourcev1alpha3.ResourcePoolStatusRequest) {
		return func(r *resourcev1alpha3.ResourcePoolStatusRequest) { r.CreationTimestamp = when }
	}
	objs := []runtime.Object{
		request("complete-old", created(at(-3*time.Hour)), withCondition("Complete", at(-61*time.Minute))),
		request("failed-old", created(at(-3*time.Hour)), withCondition("Failed", at(-61*time.Minute))),
		request("complete-new", created(at(-3*time.Hour)), withCondition("Complete", at(-59*time.Minute))),
		request("complete-no-time", created(at(-3*time.Hour)), withCondition("Complete", metav1.Time{})),
		request("status-without-condition-old", created(at(-61*time.Minute)), withCondition("Other", at(-3*time.Hour))),
		request("pending-old", created(at(-25*time.Hour))),
		request("pending-new", created(at(-23*time.Hour))),
	}
	f := newFixture(t, objs...)
	f.c.cleanup(f.ctx)
	for name, gone := range map[string]bool{
		"complete-old": true, "failed-old": true, "status-without-condition-old": true, "pending-old": true,
		"complete-new": false, "complete-no-time": false, "pending-new": false,
	} {
		_, err := f.client.ResourceV1alpha3().ResourcePoolStatusRequests().Get(f.ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) != gone {
			t.Errorf("%s: deleted %v, want %v", name, !gone, gone)
		}
	}
	for _, a := range f.client.Actions() {
		if a.GetVerb() == "delete" {
			if p := a.(interface{ GetDeleteOptions() metav1.DeleteOptions }).GetDeleteOptions().Preconditions; p == nil || p.UID == nil || *p.UID == "" {
				t.Errorf("delete without a UID precondition: %+v", a)
			}
		}
	}
}
