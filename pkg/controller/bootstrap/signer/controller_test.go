package signer

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
)

func apiConflict() error {
	return apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, "cluster-info", nil)
}

func apiNotFound() error {
	return apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, "cluster-info")
}

func TestEventHandlersEnqueue(t *testing.T) {
	tok := token("abcdef", "0123456789abcdef", "")
	opaque := tok.DeepCopy()
	opaque.Type = v1.SecretTypeOpaque
	elsewhere := tok.DeepCopy()
	elsewhere.Namespace = "default"
	otherCM := clusterInfo(nil)
	otherCM.Name = "other"
	tests := []struct {
		name string
		fire func(h cache.ResourceEventHandler, cmh cache.ResourceEventHandler)
		want bool
	}{
		{name: "cluster-info added", fire: func(_, cmh cache.ResourceEventHandler) { cmh.OnAdd(clusterInfo(nil), false) }, want: true},
		{name: "cluster-info updated", fire: func(_, cmh cache.ResourceEventHandler) { cmh.OnUpdate(clusterInfo(nil), clusterInfo(nil)) }, want: true},
		{name: "cluster-info deleted", fire: func(_, cmh cache.ResourceEventHandler) { cmh.OnDelete(clusterInfo(nil)) }},
		{name: "cluster-info tombstone", fire: func(_, cmh cache.ResourceEventHandler) {
			cmh.OnDelete(cache.DeletedFinalStateUnknown{Key: "kube-public/cluster-info", Obj: clusterInfo(nil)})
		}},
		{name: "other ConfigMap", fire: func(_, cmh cache.ResourceEventHandler) { cmh.OnAdd(otherCM, false) }},
		{name: "token added", fire: func(h, _ cache.ResourceEventHandler) { h.OnAdd(tok, false) }, want: true},
		{name: "token updated", fire: func(h, _ cache.ResourceEventHandler) { h.OnUpdate(tok, tok) }, want: true},
		{name: "token deleted", fire: func(h, _ cache.ResourceEventHandler) { h.OnDelete(tok) }, want: true},
		{name: "token tombstone", fire: func(h, _ cache.ResourceEventHandler) {
			h.OnDelete(cache.DeletedFinalStateUnknown{Key: "kube-system/bootstrap-token-abcdef", Obj: tok})
		}, want: true},
		{name: "opaque Secret", fire: func(h, _ cache.ResourceEventHandler) { h.OnAdd(opaque, false) }},
		{name: "token in another namespace", fire: func(h, _ cache.ResourceEventHandler) { h.OnAdd(elsewhere, false) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			client := fake.NewClientset()
			secrets := &recordingSecretInformer{SecretInformer: informers.NewSharedInformerFactory(client, 0).Core().V1().Secrets()}
			cms := &recordingConfigMapInformer{ConfigMapInformer: informers.NewSharedInformerFactory(client, 0).Core().V1().ConfigMaps()}
			c, err := newController(ctx, "bootstrap-signer-controller", client, nil, DefaultOptions(), secrets, cms)
			if err != nil {
				t.Fatal(err)
			}
			defer c.queue.ShutDown()
			tc.fire(secrets.handler, cms.handler)
			if got := c.queue.Len() == 1; got != tc.want {
				t.Errorf("queued = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestRun drives the controller through informers: a token signs, a second
// one too, a deleted token's signature goes, and an expiring token's
// signature goes at its expiry on the fake clock.
func TestRun(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	expiry := now.Add(30 * time.Minute)
	client := fake.NewClientset(clusterInfo(map[string]string{"kubeconfig": kubeconfig}), token("abcdef", "0123456789abcdef", ""))
	factory := informers.NewSharedInformerFactory(client, 0)
	clk := testingclock.NewFakeClock(now)
	c, err := newController(ctx, "bootstrap-signer-controller", client, clk, DefaultOptions(),
		factory.Core().V1().Secrets(), factory.Core().V1().ConfigMaps())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Run(ctx)
	}()
	factory.Start(ctx.Done())
	defer factory.Shutdown()

	waitFor := func(what string, want map[string]bool) {
		t.Helper()
		err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
			cm, err := client.CoreV1().ConfigMaps("kube-public").Get(ctx, "cluster-info", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			for id, signed := range want {
				if _, ok := cm.Data["jws-kubeconfig-"+id]; ok != signed {
					return false, nil
				}
			}
			return true, nil
		})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	waitFor("first token signs", map[string]bool{"abcdef": true})
	if _, err := client.CoreV1().Secrets("kube-system").Create(ctx, token("uvwxyz", "uvwxyzuvwxyzuvwx", expiry.Format(time.RFC3339)), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("second token signs", map[string]bool{"abcdef": true, "uvwxyz": true})
	if err := client.CoreV1().Secrets("kube-system").Delete(ctx, "bootstrap-token-abcdef", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("deleted token's signature removed", map[string]bool{"abcdef": false, "uvwxyz": true})
	// The fake clock reaches the second token's expiry; its Secret is
	// still there (no token cleaner runs). The syncs above queued the
	// ConfigMap for that expiry before they wrote it.
	clk.SetTime(expiry)
	waitFor("expired token's signature removed", map[string]bool{"uvwxyz": false})

	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancellation")
	}
}
