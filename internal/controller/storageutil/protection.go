package storageutil

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Upstream's protection finalizers.
const (
	PVCProtectionFinalizer = "kubernetes.io/pvc-protection"
	PVProtectionFinalizer  = "kubernetes.io/pv-protection"
	VACProtectionFinalizer = "kubernetes.io/vac-protection"
)

// IsDeletionCandidate reports whether obj is being deleted and still holds
// finalizer: the controller owning finalizer decides whether it may go.
func IsDeletionCandidate(obj metav1.Object, finalizer string) bool {
	return obj.GetDeletionTimestamp() != nil && slices.Contains(obj.GetFinalizers(), finalizer)
}

// NeedToAddFinalizer reports whether obj lives and lacks finalizer.
func NeedToAddFinalizer(obj metav1.Object, finalizer string) bool {
	return obj.GetDeletionTimestamp() == nil && !slices.Contains(obj.GetFinalizers(), finalizer)
}

// WithFinalizer returns finalizers with f appended.
func WithFinalizer(finalizers []string, f string) []string {
	return append(slices.Clip(finalizers), f)
}

// WithoutFinalizer returns a copy of finalizers without any occurrence of f.
func WithoutFinalizer(finalizers []string, f string) []string {
	out := make([]string, 0, len(finalizers))
	for _, s := range finalizers {
		if s != f {
			out = append(out, s)
		}
	}
	return out
}
