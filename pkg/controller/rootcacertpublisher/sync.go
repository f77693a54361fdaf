package rootcacertpublisher

import (
	"context"
	"fmt"
	"maps"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
)

// syncNamespace creates or restores the kube-root-ca.crt ConfigMap of the
// namespace named ns.
func (c *Controller) syncNamespace(ctx context.Context, ns string) (err error) {
	start := time.Now()
	defer func() {
		recordSync(start, err)
		klog.FromContext(ctx).V(4).Info("Finished syncing namespace", "namespace", ns, "elapsedTime", time.Since(start))
	}()

	want := map[string]string{DataKey: string(c.rootCA)}
	cm, err := c.cmLister.ConfigMaps(ns).Get(ConfigMapName)
	switch {
	case apierrors.IsNotFound(err):
		return c.create(ctx, ns, want)
	case err != nil:
		return fmt.Errorf("getting ConfigMap %s/%s: %w", ns, ConfigMapName, err)
	}

	// Only the data and the presence of the description are enforced;
	// other keys of the ConfigMap, labels and annotations are kept.
	if maps.Equal(cm.Data, want) && cm.Annotations[DescriptionAnnotation] != "" {
		return nil
	}
	cm = cm.DeepCopy()
	cm.Data = want
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations[DescriptionAnnotation] = Description
	if _, err := c.client.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("updating ConfigMap %s/%s: %w", ns, ConfigMapName, err)
	}
	return nil
}

func (c *Controller) create(ctx context.Context, ns string, data map[string]string) error {
	cm := &v1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:        ConfigMapName,
			Annotations: map[string]string{DescriptionAnnotation: Description},
		},
		Data: data,
	}
	_, err := c.client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
	// A namespace that is gone or terminating cannot take the ConfigMap and
	// retrying will not change that.
	if err == nil || apierrors.IsNotFound(err) || apierrors.HasStatusCause(err, v1.NamespaceTerminatingCause) {
		return nil
	}
	return fmt.Errorf("creating ConfigMap %s/%s: %w", ns, ConfigMapName, err)
}
