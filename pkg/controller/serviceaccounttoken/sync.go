package serviceaccounttoken

import (
	"bytes"
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	apiserverserviceaccount "k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller"
)

// removeReferenceBackoff is upstream's RemoveTokenBackoff: how long removing
// a deleted Secret's reference from its ServiceAccount retries conflicts.
var removeReferenceBackoff = wait.Backoff{Steps: 10, Duration: 100 * time.Millisecond, Jitter: 1.0}

// syncServiceAccount deletes the token Secrets of a ServiceAccount that is
// no longer in the cache (with the UID the key carries).
func (c *Controller) syncServiceAccount(ctx context.Context, key string) error {
	k, err := parseServiceAccountKey(key)
	if err != nil {
		return controller.Permanent(err)
	}
	sa, err := c.cachedServiceAccount(k.Namespace, k.Name, k.UID)
	if err != nil || sa != nil {
		return err
	}
	klog.FromContext(ctx).V(4).Info("Service account deleted, removing tokens", "namespace", k.Namespace, "serviceaccount", k.Name)
	return c.deleteTokens(ctx, &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: k.Name, UID: k.UID}})
}

// syncSecret handles one token Secret: a deleted one loses its reference
// in its ServiceAccount; one whose ServiceAccount is gone is deleted; any
// other is populated with whatever of token, ca.crt and namespace it lacks.
func (c *Controller) syncSecret(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)
	k, err := parseSecretKey(key)
	if err != nil {
		return controller.Permanent(err)
	}
	secret, err := c.cachedSecret(k.Namespace, k.Name, k.UID)
	if err != nil {
		return err
	}
	if secret == nil {
		sa, err := c.cachedServiceAccount(k.Namespace, k.SAName, k.SAUID)
		if err != nil || sa == nil {
			return err
		}
		err = retry.RetryOnConflict(removeReferenceBackoff, func() error {
			return c.removeSecretReference(ctx, k.Namespace, k.SAName, k.SAUID, k.Name)
		})
		if err != nil {
			logger.Error(err, "Removing secret reference", "secret", klog.KRef(k.Namespace, k.Name))
		}
		return nil // as upstream: not retried
	}

	sa, err := c.serviceAccount(ctx, k.Namespace, k.SAName, k.SAUID)
	if err != nil {
		return fmt.Errorf("getting service account %s/%s: %w", k.Namespace, k.SAName, err)
	}
	if sa == nil {
		logger.V(4).Info("Service account does not exist, deleting token", "secret", klog.KRef(k.Namespace, k.Name))
		return c.deleteToken(ctx, k.Namespace, k.Name, k.UID)
	}
	return c.populate(ctx, sa, secret)
}

// populate fills in secret's missing token, CA and namespace. It re-reads
// the Secret first and gives up, without retrying, when the cache is stale
// or the write conflicts: the newer version queues the key again.
func (c *Controller) populate(ctx context.Context, sa *v1.ServiceAccount, cached *v1.Secret) error {
	if !c.needsUpdate(cached).any() {
		return nil
	}
	secrets := c.client.CoreV1().Secrets(cached.Namespace)
	live, err := secrets.Get(ctx, cached.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return controller.Permanent(err)
	}
	if err != nil {
		return fmt.Errorf("getting secret %s/%s: %w", cached.Namespace, cached.Name, err)
	}
	if live.ResourceVersion != cached.ResourceVersion {
		klog.FromContext(ctx).V(2).Info("Secret is not up to date, skipping token population", "secret", klog.KObj(live))
		return nil
	}
	need := c.needsUpdate(live)
	if !need.any() {
		return nil
	}
	if err := c.fill(live, sa, need); err != nil {
		return controller.Permanent(err)
	}
	_, err = secrets.Update(ctx, live, metav1.UpdateOptions{})
	if err == nil || apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return nil
	}
	return fmt.Errorf("populating serviceaccount token %s/%s: %w", live.Namespace, live.Name, err)
}

// missing says which parts of a token Secret need to be (re)written.
type missing struct{ ca, namespace, token bool }

func (m missing) any() bool { return m.ca || m.namespace || m.token }

// needsUpdate is upstream's rule: ca.crt when a root CA is configured and
// differs from the Secret's; namespace and token only when empty. An
// existing token is never replaced.
func (c *Controller) needsUpdate(s *v1.Secret) missing {
	return missing{
		ca:        len(c.rootCA) > 0 && !bytes.Equal(s.Data[v1.ServiceAccountRootCAKey], c.rootCA),
		namespace: len(s.Data[v1.ServiceAccountNamespaceKey]) == 0,
		token:     len(s.Data[v1.ServiceAccountTokenKey]) == 0,
	}
}

// fill writes the missing parts into s (a copy owned by the caller) and
// sets the ServiceAccount name and UID annotations.
func (c *Controller) fill(s *v1.Secret, sa *v1.ServiceAccount, need missing) error {
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	if s.Data == nil {
		s.Data = map[string][]byte{}
	}
	if need.ca {
		s.Data[v1.ServiceAccountRootCAKey] = c.rootCA
	}
	if need.namespace {
		s.Data[v1.ServiceAccountNamespaceKey] = []byte(s.Namespace)
	}
	if need.token {
		token, err := c.signer.LegacyToken(sa, s.Name)
		if err != nil {
			return fmt.Errorf("generating token for secret %s/%s: %w", s.Namespace, s.Name, err)
		}
		s.Data[v1.ServiceAccountTokenKey] = []byte(token)
	}
	s.Annotations[v1.ServiceAccountNameKey] = sa.Name
	s.Annotations[v1.ServiceAccountUIDKey] = string(sa.UID)
	return nil
}

// deleteTokens deletes every cached token Secret of sa.
func (c *Controller) deleteTokens(ctx context.Context, sa *v1.ServiceAccount) error {
	secrets, err := c.secretLister.Secrets(sa.Namespace).List(labels.Everything())
	if err != nil {
		return err
	}
	var errs []error
	for _, s := range secrets {
		if apiserverserviceaccount.IsServiceAccountToken(s, sa) {
			if err := c.deleteToken(ctx, s.Namespace, s.Name, s.UID); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return utilerrors.NewAggregate(errs)
}

// deleteToken deletes the Secret, only if it still has uid. A Secret that
// is already gone or was replaced is not an error.
func (c *Controller) deleteToken(ctx context.Context, ns, name string, uid types.UID) error {
	var opts metav1.DeleteOptions
	if uid != "" {
		opts.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	err := c.client.CoreV1().Secrets(ns).Delete(ctx, name, opts)
	if err == nil || apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return fmt.Errorf("deleting serviceaccount token %s/%s: %w", ns, name, err)
}

// removeSecretReference drops secretName from the live ServiceAccount's
// secrets, if it still is the one with saUID and still refers to it.
func (c *Controller) removeSecretReference(ctx context.Context, ns, saName string, saUID types.UID, secretName string) error {
	client := c.client.CoreV1().ServiceAccounts(ns)
	sa, err := client.Get(ctx, saName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if saUID != "" && saUID != sa.UID {
		return nil
	}
	kept := []v1.ObjectReference{}
	for _, ref := range sa.Secrets {
		if ref.Name != secretName {
			kept = append(kept, ref)
		}
	}
	if len(kept) == len(sa.Secrets) {
		return nil
	}
	sa.Secrets = kept
	_, err = client.Update(ctx, sa, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// cachedServiceAccount returns the cached ServiceAccount if it has uid (or
// uid is empty), and nil when there is none.
func (c *Controller) cachedServiceAccount(ns, name string, uid types.UID) (*v1.ServiceAccount, error) {
	return withUID(c.saLister.ServiceAccounts(ns).Get(name))(uid)
}

// serviceAccount is cachedServiceAccount that falls back to a live read on
// a cache miss: a Secret must not be deleted because the ServiceAccount it
// was created with has not reached the cache yet.
func (c *Controller) serviceAccount(ctx context.Context, ns, name string, uid types.UID) (*v1.ServiceAccount, error) {
	if sa, err := c.cachedServiceAccount(ns, name, uid); err != nil || sa != nil {
		return sa, err
	}
	return withUID(c.client.CoreV1().ServiceAccounts(ns).Get(ctx, name, metav1.GetOptions{}))(uid)
}

// cachedSecret returns the cached Secret if it has uid, nil when there is
// none.
func (c *Controller) cachedSecret(ns, name string, uid types.UID) (*v1.Secret, error) {
	return withUID(c.secretLister.Secrets(ns).Get(name))(uid)
}

// withUID turns the result of a Get into (obj, nil) when obj exists and has
// uid (any uid when uid is empty), (nil, nil) when it is absent or another
// object of the same name, and (nil, err) on other errors.
func withUID[T metav1.Object](obj T, err error) func(uid types.UID) (T, error) {
	return func(uid types.UID) (T, error) {
		var none T
		switch {
		case apierrors.IsNotFound(err):
			return none, nil
		case err != nil:
			return none, err
		case uid != "" && uid != obj.GetUID():
			return none, nil
		}
		return obj, nil
	}
}
