package clustertrustbundlepublisher

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"
)

// BundleName is the name of the signer's bundle for caBundle: the signer
// name with "/" replaced by ":", a ":", and the hex of the first 12 bytes of
// the bundle's SHA-256 (upstream's).
func BundleName(signerName string, caBundle []byte) string {
	sum := sha256.Sum256(caBundle)
	return fmt.Sprintf("%s:%x", strings.ReplaceAll(signerName, "/", ":"), sum[:12])
}

// sync creates or corrects the bundle of the current CA, then deletes the
// signer's other bundles. A failed deletion does not stop the others; the
// sync is retried.
func (c *Controller) sync(ctx context.Context, b *bundles) (err error) {
	logger := klog.FromContext(ctx)
	start := time.Now()
	defer func() {
		recordSync(start, err)
		logger.V(4).Info("Finished syncing ClusterTrustBundle", "signerName", c.signerName, "elapsedTime", time.Since(start))
	}()

	caBundle := c.ca.CurrentCABundleContent()
	name := BundleName(c.signerName, caBundle)
	if err := c.ensure(ctx, b, name, string(caBundle)); err != nil {
		return err
	}

	var errs []error
	for _, obj := range b.informer.GetStore().List() {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok || u.GetName() == name || specString(u, "signerName") != c.signerName {
			continue
		}
		err := b.client.Delete(ctx, u.GetName(), metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			logger.Error(err, "failed to remove a cluster trust bundle", "bundleName", u.GetName())
			errs = append(errs, err)
			continue
		}
		logger.V(2).Info("Deleted stale ClusterTrustBundle", "bundleName", u.GetName())
	}
	return errors.Join(errs...)
}

// ensure creates the bundle named name, or updates its trustBundle when it
// differs; the signer name is immutable and part of the name.
func (c *Controller) ensure(ctx context.Context, b *bundles, name, caBundle string) error {
	logger := klog.FromContext(ctx)
	cur, err := b.get(name)
	if err != nil {
		return err
	}
	if cur == nil {
		_, err := b.client.Create(ctx, newBundle(b.gv, name, c.signerName, caBundle), metav1.CreateOptions{})
		if err == nil {
			logger.V(2).Info("Created ClusterTrustBundle", "bundleName", name)
		}
		return err
	}
	if specString(cur, "trustBundle") == caBundle {
		return nil
	}
	upd := cur.DeepCopy()
	if err := unstructured.SetNestedField(upd.Object, caBundle, "spec", "trustBundle"); err != nil {
		return err
	}
	if _, err := b.client.Update(ctx, upd, metav1.UpdateOptions{}); err != nil {
		return err
	}
	logger.V(2).Info("Restored ClusterTrustBundle", "bundleName", name)
	return nil
}
