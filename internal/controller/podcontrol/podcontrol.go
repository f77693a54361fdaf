package podcontrol

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
)

// Event reasons, upstream's. FailedCreate and FailedDelete are also the
// reasons of the ReplicaFailure condition of ReplicaSets.
const (
	FailedCreateReason     = "FailedCreate"
	SuccessfulCreateReason = "SuccessfulCreate"
	FailedDeleteReason     = "FailedDelete"
	SuccessfulDeleteReason = "SuccessfulDelete"
)

// Interface is what controllers use to change pods; Real talks to the API
// server, Fake records calls.
type Interface interface {
	// CreatePods creates one pod from template in namespace, controlled by
	// controllerRef; Events are recorded on owner.
	CreatePods(ctx context.Context, namespace string, template *v1.PodTemplateSpec, owner runtime.Object, controllerRef *metav1.OwnerReference) error
	// CreatePodsWithGenerateName is CreatePods with generateName instead of
	// "<owner name>-" (when not empty).
	CreatePodsWithGenerateName(ctx context.Context, namespace string, template *v1.PodTemplateSpec, owner runtime.Object, controllerRef *metav1.OwnerReference, generateName string) error
	// DeletePod deletes the named pod; Events are recorded on owner. A
	// NotFound error is returned as is, without an Event.
	DeletePod(ctx context.Context, namespace, name string, owner runtime.Object) error
	// PatchPod applies a strategic merge patch to the named pod.
	PatchPod(ctx context.Context, namespace, name string, patch []byte) error
}

// WriteObserver is told about every pod Real created or patched, with the
// pod's controllerRef (nil if it has none), e.g. to feed
// expectations.Consistency.
type WriteObserver func(pod *v1.Pod, controllerRef *metav1.OwnerReference)

// Real is the Interface backed by a clientset.
type Real struct {
	Client   kubernetes.Interface
	Recorder record.EventRecorder
	// OnWrite, if set, observes successful creates and patches.
	OnWrite WriteObserver
}

var _ Interface = Real{}

// CreatePods implements Interface.
func (r Real) CreatePods(ctx context.Context, namespace string, template *v1.PodTemplateSpec, owner runtime.Object, controllerRef *metav1.OwnerReference) error {
	return r.CreatePodsWithGenerateName(ctx, namespace, template, owner, controllerRef, "")
}

// CreatePodsWithGenerateName implements Interface.
func (r Real) CreatePodsWithGenerateName(ctx context.Context, namespace string, template *v1.PodTemplateSpec, owner runtime.Object, controllerRef *metav1.OwnerReference, generateName string) error {
	if err := validateControllerRef(controllerRef); err != nil {
		return err
	}
	pod := PodFromTemplate(template, controllerRef.Name, controllerRef)
	if generateName != "" {
		pod.GenerateName = generateName
	}
	if len(pod.Labels) == 0 {
		return errors.New("unable to create pods, no labels")
	}
	created, err := r.Client.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		// Creating in a terminating namespace cannot succeed; not worth an Event.
		if !apierrors.HasStatusCause(err, v1.NamespaceTerminatingCause) {
			r.Recorder.Eventf(owner, v1.EventTypeWarning, FailedCreateReason, "Error creating: %v", err)
		}
		return err
	}
	if r.OnWrite != nil {
		r.OnWrite(created, controllerRef)
	}
	klog.FromContext(ctx).V(4).Info("Controller created pod", "controller", controllerRef.Name, "pod", klog.KObj(created))
	r.Recorder.Eventf(owner, v1.EventTypeNormal, SuccessfulCreateReason, "Created pod: %v", created.Name)
	return nil
}

// DeletePod implements Interface.
func (r Real) DeletePod(ctx context.Context, namespace, name string, owner runtime.Object) error {
	logger := klog.FromContext(ctx)
	logger.V(2).Info("Deleting pod", "pod", klog.KRef(namespace, name))
	if err := r.Client.CoreV1().Pods(namespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			logger.V(4).Info("Pod has already been deleted", "pod", klog.KRef(namespace, name))
			return err
		}
		r.Recorder.Eventf(owner, v1.EventTypeWarning, FailedDeleteReason, "Error deleting: %v", err)
		return fmt.Errorf("unable to delete pods: %w", err)
	}
	r.Recorder.Eventf(owner, v1.EventTypeNormal, SuccessfulDeleteReason, "Deleted pod: %v", name)
	return nil
}

// PatchPod implements Interface.
func (r Real) PatchPod(ctx context.Context, namespace, name string, patch []byte) error {
	pod, err := r.Client.CoreV1().Pods(namespace).Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	if err == nil && r.OnWrite != nil {
		r.OnWrite(pod, metav1.GetControllerOfNoCopy(pod))
	}
	return err
}

// PodFromTemplate returns the pod a controller named ownerName creates from
// template: the template's labels, annotations, finalizers and spec (all
// copied), generateName from ownerName, and controllerRef (if not nil) as
// its ownerReference.
func PodFromTemplate(template *v1.PodTemplateSpec, ownerName string, controllerRef *metav1.OwnerReference) *v1.Pod {
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: GenerateNamePrefix(ownerName),
			Labels:       copyMap(template.Labels),
			Annotations:  copyMap(template.Annotations),
			Finalizers:   slices.Clone(template.Finalizers),
		},
		Spec: *template.Spec.DeepCopy(),
	}
	if controllerRef != nil {
		pod.OwnerReferences = []metav1.OwnerReference{*controllerRef}
	}
	return pod
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	maps.Copy(out, m)
	return out
}

// GenerateNamePrefix returns "<ownerName>-", or ownerName when the dash
// would not make a valid name prefix.
func GenerateNamePrefix(ownerName string) string {
	prefix := ownerName + "-"
	if len(apivalidation.NameIsDNSSubdomain(prefix, true)) != 0 {
		return ownerName
	}
	return prefix
}

func validateControllerRef(ref *metav1.OwnerReference) error {
	switch {
	case ref == nil:
		return errors.New("controllerRef is nil")
	case ref.APIVersion == "":
		return errors.New("controllerRef has empty APIVersion")
	case ref.Kind == "":
		return errors.New("controllerRef has empty Kind")
	case ref.Controller == nil || !*ref.Controller:
		return errors.New("controllerRef.Controller is not set to true")
	case ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion:
		return errors.New("controllerRef.BlockOwnerDeletion is not set")
	}
	return nil
}

// SlowStartInitialBatchSize is the first batch size of SlowStartBatch as
// controllers use it: 1, then 2, 4, 8, ...
const SlowStartInitialBatchSize = 1

// SlowStartBatch calls fn count times in batches that start at
// initialBatchSize and double after each batch that fully succeeded; the
// calls of one batch run concurrently. After a batch with a failure, the
// remaining calls are skipped, so that a doomed create (quota, admission)
// costs few requests and Events. It returns the number of successful calls
// and the first error seen.
func SlowStartBatch(count, initialBatchSize int, fn func() error) (int, error) {
	remaining, successes := count, 0
	for batch := min(remaining, initialBatchSize); batch > 0; batch = min(2*batch, remaining) {
		errs := make(chan error, batch)
		var wg sync.WaitGroup
		for range batch {
			wg.Go(func() {
				if err := fn(); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		successes += batch - len(errs)
		if len(errs) > 0 {
			return successes, <-errs
		}
		remaining -= batch
	}
	return successes, nil
}
