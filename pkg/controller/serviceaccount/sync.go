package serviceaccount

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
)

// syncNamespace creates the missing ServiceAccounts of the namespace named
// key, if it is Active.
func (c *Controller) syncNamespace(ctx context.Context, key string) error {
	start := time.Now()
	defer func() {
		klog.FromContext(ctx).V(4).Info("Finished syncing namespace", "namespace", key, "duration", time.Since(start))
	}()

	ns, err := c.nsLister.Get(key)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("getting namespace %q: %w", key, err)
	}
	if ns.Status.Phase != v1.NamespaceActive {
		return nil
	}

	var errs []error
	for i := range c.ensure {
		name := c.ensure[i].Name
		_, err := c.saLister.ServiceAccounts(ns.Name).Get(name)
		if err == nil {
			continue
		}
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("getting ServiceAccount %s/%s: %w", ns.Name, name, err)
		}
		sa := c.ensure[i].DeepCopy()
		sa.Namespace = ns.Name
		_, err = c.client.CoreV1().ServiceAccounts(ns.Name).Create(ctx, sa, metav1.CreateOptions{})
		switch {
		case err == nil, apierrors.IsAlreadyExists(err):
		case apierrors.HasStatusCause(err, v1.NamespaceTerminatingCause):
			// The namespace started terminating since the cache saw it.
		default:
			errs = append(errs, fmt.Errorf("creating ServiceAccount %s/%s: %w", ns.Name, name, err))
		}
	}
	return errors.Join(errs...)
}
