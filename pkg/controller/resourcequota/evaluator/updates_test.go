package evaluator

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

func TestReplenishOnUpdate(t *testing.T) {
	now := time.Now()
	running := podWith(container(rl("cpu", "1"), nil))
	running.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", Resources: &corev1.ResourceRequirements{Requests: rl("cpu", "1")}}}
	relabelled := running.DeepCopy()
	relabelled.Labels = map[string]string{"a": "b"}
	succeeded := running.DeepCopy()
	succeeded.Status.Phase = corev1.PodSucceeded
	deadline := running.DeepCopy()
	deadline.Spec.ActiveDeadlineSeconds = ptr.To[int64](5)
	resized := running.DeepCopy()
	resized.Status.ContainerStatuses[0].Resources = &corev1.ResourceRequirements{Requests: rl("cpu", "2")}
	lost := running.DeepCopy()
	lost.DeletionTimestamp = &metav1.Time{Time: now.Add(-time.Minute)}
	lost.DeletionGracePeriodSeconds = ptr.To[int64](0)

	clusterIP, nodePort := service(corev1.ServiceTypeClusterIP, 0), service(corev1.ServiceTypeNodePort, 30000)
	moreNodePorts := service(corev1.ServiceTypeNodePort, 30000, 30001)
	pvc, fast := claim("gold", "1Gi"), claim("gold", "1Gi")
	fast.Spec.VolumeAttributesClassName = ptr.To("fast")

	pods, services, pvcs := schema.GroupResource{Resource: "pods"}, schema.GroupResource{Resource: "services"}, schema.GroupResource{Resource: "persistentvolumeclaims"}
	for _, tc := range []struct {
		name     string
		gr       schema.GroupResource
		old, cur any
		f        Features
		want     bool
	}{
		{"pod relabelled", pods, running, relabelled, allFeatures, false},
		{"pod succeeded", pods, running, succeeded, allFeatures, true},
		{"pod got a deadline", pods, running, deadline, allFeatures, true},
		{"pod resized", pods, running, resized, allFeatures, true},
		{"pod resized, gate off", pods, running, resized, Features{}, false},
		{"pod past its grace period", pods, running, lost, allFeatures, true},
		{"service became NodePort", services, clusterIP, nodePort, allFeatures, true},
		{"service gained a node port", services, nodePort, moreNodePorts, allFeatures, false},
		{"any claim update (upstream compares pointers)", pvcs, pvc, pvc.DeepCopy(), allFeatures, true},
		{"claim without expansion recovery, same classes", pvcs, pvc, pvc.DeepCopy(), Features{VolumeAttributesClass: true}, false},
		{"claim changed attributes class", pvcs, pvc, fast, Features{VolumeAttributesClass: true}, true},
		{"other resources never", schema.GroupResource{Resource: "secrets"}, &corev1.Secret{}, &corev1.Secret{}, allFeatures, false},
		{"metadata-only objects", pods, &metav1.PartialObjectMetadata{}, &metav1.PartialObjectMetadata{}, allFeatures, false},
	} {
		if got := ReplenishOnUpdate(tc.gr, tc.old, tc.cur, now, tc.f); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
