// Package legacytokencleaner tests the
// legacy-serviceaccount-token-cleaner-controller against a real
// kube-apiserver, with a fake clock that jumps years ahead.
package legacytokencleaner

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kcm-dev/kcm/pkg/controller/legacytokencleaner"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const timeout = 30 * time.Second

func TestUnusedTokenIsInvalidatedThenDeleted(t *testing.T) {
	cfg := framework.StartEnv(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()

	// The kube-apiserver records when it started tracking legacy tokens.
	framework.Eventually(t, timeout, func() (bool, error) {
		_, err := client.CoreV1().ConfigMaps("kube-system").Get(ctx, legacytokencleaner.TrackingConfigMapName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})

	ns, err := client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "legacytoken-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	secrets := client.CoreV1().Secrets(ns.Name)
	sa, err := client.CoreV1().ServiceAccounts(ns.Name).Create(ctx, &v1.ServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Name: "old"},
		Secrets:    []v1.ObjectReference{{Name: "old-token"}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"old-token", "manual-token"} {
		if _, err := secrets.Create(ctx, &v1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{
				v1.ServiceAccountNameKey: "old", v1.ServiceAccountUIDKey: string(sa.UID)}},
			Type: v1.SecretTypeServiceAccountToken,
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	clk := testingclock.NewFakeClock(time.Now().AddDate(2, 0, 0))
	cc := framework.NewControllerContext(t, cfg)
	cc.Clock = clk
	cc.Config.LegacySATokenCleaner.CleanUpPeriod = metav1.Duration{Duration: 365 * 24 * time.Hour}
	c, err := legacytokencleaner.New(ctx, cc, names.LegacyServiceAccountTokenCleaner)
	if err != nil {
		t.Fatal(err)
	}
	stop := framework.StartController(t, cc, c)

	today := clk.Now().UTC().Format("2006-01-02")
	framework.Eventually(t, timeout, func() (bool, error) {
		s, err := secrets.Get(ctx, "old-token", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return s.Labels[legacytokencleaner.InvalidSinceLabelKey] == today, nil
	})

	// A period later (the ticker fires once the fake clock moves), the
	// invalid token is deleted.
	framework.Eventually(t, timeout, func() (bool, error) {
		if clk.HasWaiters() {
			clk.Step(400 * 24 * time.Hour)
		}
		_, err := secrets.Get(ctx, "old-token", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})

	// The token its ServiceAccount does not reference is left alone.
	s, err := secrets.Get(ctx, "manual-token", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Labels[legacytokencleaner.InvalidSinceLabelKey]; ok {
		t.Errorf("manual token was labelled: %v", s.Labels)
	}
	stop()
}
