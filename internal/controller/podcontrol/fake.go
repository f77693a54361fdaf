package podcontrol

import (
	"context"
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Fake records the calls made to it, for unit tests. It is safe for
// concurrent use; read its fields after the code under test returned.
type Fake struct {
	mu sync.Mutex

	// Templates and ControllerRefs record each create call.
	Templates      []v1.PodTemplateSpec
	ControllerRefs []metav1.OwnerReference
	// Deleted records each DeletePod call's pod name.
	Deleted []string
	// Patches records each PatchPod call's patch.
	Patches [][]byte

	// Err, if set, is returned by every call (after recording it).
	Err error
	// CreateLimit, if not zero, makes creates after the first CreateLimit
	// ones fail.
	CreateLimit int
	// DeleteErr, if set, returns an error for the named pods' deletion.
	DeleteErr func(name string) error

	createCalls int
}

var _ Interface = &Fake{}

// CreatePods implements Interface.
func (f *Fake) CreatePods(ctx context.Context, namespace string, template *v1.PodTemplateSpec, owner runtime.Object, controllerRef *metav1.OwnerReference) error {
	return f.CreatePodsWithGenerateName(ctx, namespace, template, owner, controllerRef, "")
}

// CreatePodsWithGenerateName implements Interface.
func (f *Fake) CreatePodsWithGenerateName(_ context.Context, _ string, template *v1.PodTemplateSpec, _ runtime.Object, controllerRef *metav1.OwnerReference, generateName string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.createCalls++
	if f.CreateLimit != 0 && f.createCalls > f.CreateLimit {
		return fmt.Errorf("not creating pod, limit %d already reached (create call %d)", f.CreateLimit, f.createCalls)
	}
	t := *template.DeepCopy()
	t.GenerateName = generateName
	f.Templates = append(f.Templates, t)
	f.ControllerRefs = append(f.ControllerRefs, *controllerRef)
	return f.Err
}

// DeletePod implements Interface.
func (f *Fake) DeletePod(_ context.Context, _ string, name string, _ runtime.Object) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Deleted = append(f.Deleted, name)
	if f.DeleteErr != nil {
		if err := f.DeleteErr(name); err != nil {
			return err
		}
	}
	return f.Err
}

// PatchPod implements Interface.
func (f *Fake) PatchPod(_ context.Context, _, _ string, patch []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Patches = append(f.Patches, patch)
	return f.Err
}

// CreateCalls returns how many create calls were made, including failed
// ones.
func (f *Fake) CreateCalls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.createCalls
}
