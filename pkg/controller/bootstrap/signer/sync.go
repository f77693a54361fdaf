package signer

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"k8s.io/cluster-bootstrap/token/jws"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/pkg/controller/bootstrap"
)

// sync recomputes the signatures of the ConfigMap from the caches and
// writes it when they changed. It requeues itself for the next expiry of a
// signing token, so that an expired token's signature goes at its expiry
// even before the token cleaner deletes its Secret.
func (c *Controller) sync(ctx context.Context, _ string) error {
	logger := klog.FromContext(ctx)
	start := time.Now()
	defer func() {
		logger.V(4).Info("Finished signing ConfigMap", "configMap", c.key, "elapsedTime", time.Since(start))
	}()

	cm, err := c.configMapLister.ConfigMaps(c.opts.ConfigMapNamespace).Get(c.opts.ConfigMapName)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("getting ConfigMap %s: %w", c.key, err)
	}
	content, ok := cm.Data[bootstrapapi.KubeConfigKey]
	if !ok {
		logger.V(3).Info("No key in ConfigMap", "key", bootstrapapi.KubeConfigKey, "configMap", klog.KObj(cm))
		return nil
	}

	tokens, nextExpiry, err := c.signingTokens(logger)
	if err != nil {
		return err
	}
	if nextExpiry > 0 {
		c.queue.AddAfter(c.key, nextExpiry)
	}
	want, err := signatures(content, tokens)
	if err != nil {
		return err
	}
	if maps.Equal(currentSignatures(cm), want) {
		return nil
	}
	return c.update(ctx, cm, want)
}

// signingTokens returns token ID → token secret for every bootstrap token
// that may sign now, and how long until the first of them expires (0 if
// none expires).
func (c *Controller) signingTokens(logger klog.Logger) (map[string]string, time.Duration, error) {
	secrets, err := c.secretLister.Secrets(c.opts.TokenSecretNamespace).List(labels.Everything())
	if err != nil {
		return nil, 0, fmt.Errorf("listing Secrets in %s: %w", c.opts.TokenSecretNamespace, err)
	}
	now := c.clock.Now()
	tokens := map[string]string{}
	var next time.Duration
	for _, s := range secrets {
		if s.Type != bootstrapapi.SecretTypeBootstrapToken {
			continue
		}
		// Secret names are unique and must carry the token ID, so token
		// IDs are unique too.
		id, token, ok := bootstrap.SigningToken(logger, s, now)
		if !ok {
			continue
		}
		tokens[id] = token
		if left, _, _ := bootstrap.Expiry(s, now); left > 0 && (next == 0 || left < next) {
			next = left
		}
	}
	return tokens, next, nil
}

// signatures returns the ConfigMap keys jws-kubeconfig-<token-id> with the
// detached JWS of content for each token.
func signatures(content string, tokens map[string]string) (map[string]string, error) {
	sigs := make(map[string]string, len(tokens))
	for id, token := range tokens {
		sig, err := jws.ComputeDetachedSignature(content, id, token)
		if err != nil {
			return nil, fmt.Errorf("signing with bootstrap token %s: %w", id, err)
		}
		sigs[bootstrapapi.JWSSignatureKeyPrefix+id] = sig
	}
	return sigs, nil
}

// currentSignatures returns the signature keys of cm's data.
func currentSignatures(cm *v1.ConfigMap) map[string]string {
	sigs := map[string]string{}
	for k, v := range cm.Data {
		if strings.HasPrefix(k, bootstrapapi.JWSSignatureKeyPrefix) {
			sigs[k] = v
		}
	}
	return sigs
}

// update writes cm with its signatures replaced by sigs. A conflict or a
// ConfigMap deleted meanwhile is not an error: the informer event that
// follows queues a sync of the current state.
func (c *Controller) update(ctx context.Context, cm *v1.ConfigMap, sigs map[string]string) error {
	cm = cm.DeepCopy()
	maps.DeleteFunc(cm.Data, func(k, _ string) bool { return strings.HasPrefix(k, bootstrapapi.JWSSignatureKeyPrefix) })
	maps.Copy(cm.Data, sigs)
	_, err := c.client.CoreV1().ConfigMaps(cm.Namespace).Update(ctx, cm, metav1.UpdateOptions{})
	if err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
		return fmt.Errorf("updating ConfigMap %s: %w", c.key, err)
	}
	klog.FromContext(ctx).V(2).Info("Updated ConfigMap signatures", "configMap", klog.KObj(cm), "tokens", len(sigs), "err", err)
	return nil
}
