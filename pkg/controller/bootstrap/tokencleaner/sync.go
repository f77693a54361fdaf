package tokencleaner

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/pkg/controller/bootstrap"
)

// sync deletes the bootstrap token Secret named by key if it has expired,
// and requeues it for its expiry otherwise.
func (c *Controller) sync(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)
	start := time.Now()
	defer func() { logger.V(4).Info("Finished syncing secret", "secret", key, "elapsedTime", time.Since(start)) }()

	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	secret, err := c.secretLister.Secrets(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		logger.V(3).Info("Secret has been deleted", "secret", key)
		return nil
	}
	if err != nil {
		return err
	}
	if secret.Type != bootstrapapi.SecretTypeBootstrapToken {
		return nil
	}

	remaining, expired, parseErr := bootstrap.Expiry(secret, c.clock.Now())
	if !expired {
		if remaining > 0 {
			c.queue.AddAfter(key, remaining)
		}
		return nil
	}
	if parseErr != nil {
		logger.V(3).Info("Treating bootstrap token as expired", "secret", klog.KObj(secret), "err", parseErr)
	}
	logger.V(3).Info("Deleting expired secret", "secret", klog.KObj(secret))
	var opts metav1.DeleteOptions
	if secret.UID != "" {
		opts.Preconditions = &metav1.Preconditions{UID: &secret.UID}
	}
	err = c.client.CoreV1().Secrets(namespace).Delete(ctx, name, opts)
	// NotFound: already gone. Conflict: the UID precondition failed, the
	// Secret was replaced, and the new one has its own event.
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("deleting expired bootstrap token Secret %s: %w", key, err)
	}
	return nil
}
