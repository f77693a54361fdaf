package framework

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The helpers below take a typed client of one resource, such as
// client.AppsV1().Deployments(namespace), and fail the test on an error.

// Creator is the Create of a typed client.
type Creator[T any] interface {
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
}

// Create creates obj and returns it as created.
func Create[T any](t testing.TB, c Creator[T], obj T) T {
	t.Helper()
	created, err := c.Create(context.Background(), obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return created
}

// Getter is the Get of a typed client, such as
// client.AppsV1().Deployments(namespace).
type Getter[T any] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
}

// Get returns the named object.
func Get[T any](t testing.TB, c Getter[T], name string) T {
	t.Helper()
	obj, err := c.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// GetUpdater is the Get and Update of a typed client.
type GetUpdater[T any] interface {
	Getter[T]
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
}

// Update applies mutate to the named object as it is now and writes it,
// again on a conflict (with a controller's writes) until timeout, and
// returns what it wrote. Other errors fail the test.
func Update[T any](t testing.TB, timeout time.Duration, c GetUpdater[T], name string, mutate func(T)) T {
	t.Helper()
	var out T
	Eventually(t, timeout, func() (bool, error) {
		obj, err := c.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		mutate(obj)
		out, err = c.Update(context.Background(), obj, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			return false, nil
		}
		return err == nil, err
	})
	return out
}
