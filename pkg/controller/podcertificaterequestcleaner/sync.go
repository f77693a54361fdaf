package podcertificaterequestcleaner

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// sync deletes the PodCertificateRequest named by key once it is maxAge
// old, and requeues it for that moment otherwise.
func (c *Controller) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	pcr, err := c.lister.PodCertificateRequests(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if left := pcr.CreationTimestamp.Add(c.maxAge).Sub(c.clock.Now()); left > 0 {
		c.queue.AddAfter(key, left)
		return nil
	}
	klog.FromContext(ctx).V(2).Info("Deleting PodCertificateRequest", "pcr", klog.KObj(pcr), "created", pcr.CreationTimestamp.UTC())
	var opts metav1.DeleteOptions
	if pcr.UID != "" {
		opts.Preconditions = &metav1.Preconditions{UID: &pcr.UID}
	}
	err = c.client.CertificatesV1().PodCertificateRequests(namespace).Delete(ctx, name, opts)
	// NotFound: already gone. Conflict: the UID precondition failed, the
	// request was replaced, and the new one has its own event.
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("unable to delete PodCertificateRequest %q: %w", key, err)
	}
	return nil
}
