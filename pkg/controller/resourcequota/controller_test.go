package resourcequota

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	quota "k8s.io/apiserver/pkg/quota/v1"

	"github.com/kcm-dev/kcm/pkg/controller/resourcequota/evaluator"
	"github.com/kcm-dev/kcm/pkg/features"
)

// Run writes a new quota's status and replenishes it when a pod goes, and
// returns once cancelled.
func TestRun(t *testing.T) {
	f := newFixture(t, newQuota("q", rl("pods", "5", "count/secrets", "5")), newPod("a", ""), newPod("b", ""),
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns"}})
	ctx, cancel := context.WithCancel(f.ctx)
	var wg sync.WaitGroup
	wg.Go(func() { f.c.Run(ctx) })
	defer func() {
		cancel()
		wg.Wait()
	}()
	// Waits until the controller's own informer has the status, not only
	// the API: a deletion replenishes the quotas whose cached
	// status.hard names the resource, and one seen before the first
	// status reached the cache is, as upstream, left to the next full
	// resync (none here).
	waitUsed := func(want corev1.ResourceList) {
		t.Helper()
		var got *corev1.ResourceQuota
		err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
			q, err := f.c.lister.ResourceQuotas("ns").Get("q")
			got = q
			return err == nil && quota.Equals(q.Status.Used, want), nil
		})
		if err != nil {
			if got == nil {
				t.Fatalf("quota not in the cache, want status.used %v", want)
			}
			t.Fatalf("status.used = %v, want %v", got.Status.Used, want)
		}
	}
	waitUsed(rl("pods", "2", "count/secrets", "1"))
	if err := f.client.CoreV1().Pods("ns").Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUsed(rl("pods", "1", "count/secrets", "1"))
	if err := f.client.CoreV1().Secrets("ns").Delete(ctx, "s", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUsed(rl("pods", "1", "count/secrets", "0"))
	if err := f.c.ReadinessCheck(nil); err != nil {
		t.Errorf("ReadinessCheck = %v", err)
	}
}

// Every gate the evaluators consult is on in v1.37 by default.
func TestEvaluatorFeatureDefaults(t *testing.T) {
	want := evaluator.Features{PodLevelResources: true, PodLevelResourcesFixKubeletQOSClass: true,
		InPlacePodVerticalScaling: true, VolumeAttributesClass: true, RecoverVolumeExpansionFailure: true, DRAExtendedResource: true}
	if got := evaluatorFeatures(nil); got != want {
		t.Errorf("evaluatorFeatures(nil) = %+v, want %+v", got, want)
	}
	if !features.Enabled(nil, features.DynamicResourceAllocation) {
		t.Error("DynamicResourceAllocation is off by default")
	}
}

// Before discovery found anything to follow, the controller is not ready.
func TestReadinessWithoutMonitors(t *testing.T) {
	f := newFixture(t)
	if err := f.c.ReadinessCheck(nil); err != nil {
		t.Fatalf("ReadinessCheck with synced monitors = %v", err)
	}
	f.c.monitors.Stop()
	if err := f.c.ReadinessCheck(nil); err == nil || !strings.Contains(err.Error(), "no monitors") {
		t.Errorf("ReadinessCheck without monitors = %v", err)
	}
}
