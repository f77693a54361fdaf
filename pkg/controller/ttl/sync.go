package ttl

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// sync sets the node's TTL annotation to the desired value unless it
// already holds it.
func (c *Controller) sync(ctx context.Context, name string) error {
	logger := klog.FromContext(ctx)
	node, err := c.nodeLister.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	desired := c.size.ttlSeconds()
	if current, ok := annotationTTL(logger, node); ok && current == desired {
		return nil
	}
	patch, err := annotationPatch(desired)
	if err != nil {
		return err
	}
	if _, err := c.client.CoreV1().Nodes().Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		logger.V(2).Info("Failed to change ttl annotation for node", "node", klog.KObj(node), "err", err)
		return fmt.Errorf("patching the ttl annotation of node %q: %w", name, err)
	}
	logger.V(2).Info("Changed ttl annotation", "node", klog.KObj(node), "TTL", time.Duration(desired)*time.Second)
	return nil
}

// annotationTTL returns the node's TTL annotation as an integer, and false
// when it is absent or not an integer.
func annotationTTL(logger klog.Logger, node *v1.Node) (int, bool) {
	s, ok := node.Annotations[v1.ObjectTTLAnnotationKey]
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		logger.Info("Could not convert the value with annotation key for the node", "annotationValue", s,
			"annotationKey", v1.ObjectTTLAnnotationKey, "node", klog.KObj(node))
		return 0, false
	}
	return n, true
}

// annotationPatch is the patch setting the TTL annotation, the same one
// upstream computes as a two-way merge of the node before and after.
func annotationPatch(ttlSeconds int) ([]byte, error) {
	return json.Marshal(map[string]any{
		"metadata": map[string]any{
			"annotations": map[string]string{v1.ObjectTTLAnnotationKey: strconv.Itoa(ttlSeconds)},
		},
	})
}
