package legacytokencleaner

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
)

const (
	// LastUsedLabelKey is set by the kube-apiserver to the day a legacy
	// token was last used.
	LastUsedLabelKey = "kubernetes.io/legacy-token-last-used"
	// InvalidSinceLabelKey marks a legacy token invalid from that day on.
	InvalidSinceLabelKey = "kubernetes.io/legacy-token-invalid-since"
	// TrackingConfigMapName is the kube-system ConfigMap whose "since" key
	// is the day the kube-apiserver started tracking legacy token use.
	TrackingConfigMapName = "kube-apiserver-legacy-service-account-token-tracking"
	trackingConfigMapKey  = "since"
	// dateFormat is the format of all three dates.
	dateFormat = "2006-01-02"
)

// evaluate makes one pass over the cached token Secrets. Errors are logged
// and the pass goes on; the next pass retries.
func (c *Controller) evaluate(ctx context.Context) {
	logger := klog.FromContext(ctx)
	now := c.clock.Now().UTC()
	trackedSince, err := c.trackedSince(ctx)
	if err != nil {
		logger.Error(err, "Getting lastest possible tracked_since time")
		return
	}
	// Until a full period of tracking has passed, "unused" cannot be told.
	if now.Before(trackedSince.Add(c.cleanUpPeriod)) {
		return
	}
	createdCutoff := now.Add(-c.cleanUpPeriod)
	usedCutoff := createdCutoff.Format(dateFormat)

	secrets, err := c.secretLister.List(labels.Everything())
	if err != nil {
		logger.Error(err, "Getting cached secret list")
		return
	}
	mounted := map[string]sets.Set[string]{}
	for _, s := range secrets {
		unused, err := isUnused(s, createdCutoff, usedCutoff)
		if err != nil {
			logger.Error(err, "Parsing lastUsed time", "secret", klog.KObj(s))
			continue
		}
		if !unused {
			continue
		}
		// Only auto-generated tokens: referenced from their ServiceAccount.
		sa, err := c.serviceAccount(s)
		if err != nil {
			logger.Error(err, "Getting service account", "secret", klog.KObj(s))
			continue
		}
		if sa == nil || !referencesSecret(sa, s.Name) {
			continue
		}
		names, err := c.mountedSecrets(s.Namespace, mounted)
		if err != nil {
			logger.Error(err, "Resolving mounted secrets", "secret", klog.KObj(s))
			continue
		}
		if names.Has(s.Name) {
			continue
		}

		invalidSince := s.Labels[InvalidSinceLabelKey]
		if _, err := time.Parse(dateFormat, invalidSince); err != nil {
			c.markInvalid(ctx, s, now.Format(dateFormat))
			continue
		}
		if invalidSince >= usedCutoff {
			continue
		}
		logger.Info("Delete auto-generated service account token", "secret", klog.KObj(s),
			"creationTime", s.CreationTimestamp, "lastUsed", s.Labels[LastUsedLabelKey], "invalidSince", invalidSince)
		err = c.client.CoreV1().Secrets(s.Namespace).Delete(ctx, s.Name,
			metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &s.ResourceVersion}})
		if err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			logger.Error(err, "Deleting legacy service account token", "secret", klog.KObj(s), "serviceaccount", sa.Name)
		}
	}
}

// isUnused reports whether s is a live legacy token Secret created before
// createdCutoff and not used on or after the day usedCutoff. A malformed
// last-used label is an error (upstream leaves such Secrets alone).
func isUnused(s *v1.Secret, createdCutoff time.Time, usedCutoff string) (bool, error) {
	if s.Type != v1.SecretTypeServiceAccountToken || s.DeletionTimestamp != nil ||
		!s.CreationTimestamp.Time.Before(createdCutoff) {
		return false, nil
	}
	lastUsed, ok := s.Labels[LastUsedLabelKey]
	if !ok {
		return true, nil
	}
	if _, err := time.Parse(dateFormat, lastUsed); err != nil {
		return false, err
	}
	// Dates in this format compare as strings.
	return lastUsed < usedCutoff, nil
}

// markInvalid labels s invalid since today with a merge patch that also
// carries its UID, so that a recreated Secret is not labelled.
func (c *Controller) markInvalid(ctx context.Context, s *v1.Secret, today string) {
	logger := klog.FromContext(ctx)
	logger.Info("Mark the auto-generated service account token as invalid", "invalidSince", today, "secret", klog.KObj(s))
	patch, err := json.Marshal(map[string]any{
		"kind":       "Secret",
		"apiVersion": "v1",
		"metadata": map[string]any{
			"name":      s.Name,
			"namespace": s.Namespace,
			"uid":       s.UID,
			"labels":    map[string]string{InvalidSinceLabelKey: today},
		},
	})
	if err != nil {
		logger.Error(err, "Failed to marshal invalid since label")
		return
	}
	if _, err := c.client.CoreV1().Secrets(s.Namespace).Patch(ctx, s.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		logger.Error(err, "Failed to label legacy service account token secret with invalid since date")
	}
}

// trackedSince is the first full day of legacy token tracking: the day
// after the tracking ConfigMap's date.
func (c *Controller) trackedSince(ctx context.Context) (time.Time, error) {
	cm, err := c.client.CoreV1().ConfigMaps(metav1.NamespaceSystem).Get(ctx, TrackingConfigMapName, metav1.GetOptions{})
	if err != nil {
		return time.Time{}, err
	}
	since, ok := cm.Data[trackingConfigMapKey]
	if !ok {
		return time.Time{}, fmt.Errorf("configMap does not have since label")
	}
	t, err := time.Parse(dateFormat, since)
	if err != nil {
		return time.Time{}, fmt.Errorf("error parsing trackedSince time: %w", err)
	}
	return t.AddDate(0, 0, 1), nil
}

// serviceAccount returns the cached ServiceAccount s was generated for, nil
// if there is none or its UID differs from the Secret's annotation.
func (c *Controller) serviceAccount(s *v1.Secret) (*v1.ServiceAccount, error) {
	name := s.Annotations[v1.ServiceAccountNameKey]
	if name == "" {
		return nil, nil
	}
	sa, err := c.saLister.ServiceAccounts(s.Namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if uid := s.Annotations[v1.ServiceAccountUIDKey]; uid != "" && uid != string(sa.UID) {
		return nil, nil
	}
	return sa, nil
}

func referencesSecret(sa *v1.ServiceAccount, name string) bool {
	for _, ref := range sa.Secrets {
		if ref.Name == name {
			return true
		}
	}
	return false
}

// mountedSecrets returns the Secrets referenced by the pods of ns,
// memoised in seen for the pass.
func (c *Controller) mountedSecrets(ns string, seen map[string]sets.Set[string]) (sets.Set[string], error) {
	if names, ok := seen[ns]; ok {
		return names, nil
	}
	pods, err := c.podLister.Pods(ns).List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("failed to get pod list from pod cache: %w", err)
	}
	names := sets.New[string]()
	for _, p := range pods {
		names = names.Union(podSecretNames(p))
	}
	seen[ns] = names
	return names, nil
}
