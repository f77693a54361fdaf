package controllerref

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Resolve returns the controller ref points to: the object get (typically
// a namespaced lister's Get) returns for ref.Name, if ref is of kind and
// the object still has ref's UID - a different UID is a new object that
// took the name, and ref does not point to it. Otherwise, or if get fails,
// it returns the zero T (nil for the API types' pointers).
func Resolve[T metav1.Object](ref *metav1.OwnerReference, kind string, get func(name string) (T, error)) T {
	var none T
	if ref == nil || ref.Kind != kind {
		return none
	}
	obj, err := get(ref.Name)
	if err != nil || obj.GetUID() != ref.UID {
		return none
	}
	return obj
}
