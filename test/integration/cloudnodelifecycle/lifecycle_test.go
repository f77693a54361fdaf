// Package cloudnodelifecycle tests the cloud-node-lifecycle-controller
// with the fake cloud provider against a real kube-apiserver.
package cloudnodelifecycle

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2/ktesting"

	"github.com/kcm-dev/kcm/pkg/cloudcontrollers"
	"github.com/kcm-dev/kcm/pkg/cloudprovider/fakecloud"
	"github.com/kcm-dev/kcm/pkg/controller/cloudnodelifecycle"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const timeout = 60 * time.Second

func hasShutdownTaint(n *v1.Node) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == cloudnodelifecycle.TaintShutdown && t.Effect == v1.TaintEffectNoSchedule {
			return true
		}
	}
	return false
}

func TestInstanceGoneAndShutdown(t *testing.T) {
	cfg := framework.StartEnv(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	cloud := fakecloud.New()
	cloud.SetInstance("cnl-down", fakecloud.Instance{Shutdown: true})
	cloud.SetInstance("cnl-fine", fakecloud.Instance{})
	for _, name := range []string{"cnl-gone", "cnl-down", "cnl-fine"} {
		if _, err := client.CoreV1().Nodes().Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = client.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	}

	_, tctx := ktesting.NewTestContext(t)
	cc := framework.NewControllerContext(t, cfg)
	cc.Config.NodeLifecycleController.NodeMonitorPeriod.Duration = 200 * time.Millisecond
	if err := cloudcontrollers.Attach(tctx, cc, cloud); err != nil {
		t.Fatal(err)
	}
	c, err := cloudnodelifecycle.New(tctx, cc, cloudcontrollers.CloudNodeLifecycle)
	if err != nil || c == nil {
		t.Fatalf("New: %v %v", c, err)
	}
	framework.StartController(t, cc, c)

	// The node whose instance is gone is deleted, with an Event.
	framework.Eventually(t, timeout, func() (bool, error) {
		_, err := client.CoreV1().Nodes().Get(ctx, "cnl-gone", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	framework.Eventually(t, timeout, func() (bool, error) {
		evs, err := client.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=cnl-gone"})
		if err != nil {
			return false, err
		}
		for _, e := range evs.Items {
			if e.Reason == "DeletingNode" && e.Message == "Deleting node cnl-gone because it does not exist in the cloud provider" &&
				e.Source.Component == cloudnodelifecycle.EventSource && e.InvolvedObject.Kind == "Node" {
				return true, nil
			}
		}
		return false, nil
	})
	// The shut-down one is tainted, the other left alone.
	framework.Eventually(t, timeout, func() (bool, error) {
		n, err := client.CoreV1().Nodes().Get(ctx, "cnl-down", metav1.GetOptions{})
		return err == nil && hasShutdownTaint(n), err
	})
	framework.Consistently(t, time.Second, "cnl-fine untouched", func() bool {
		n, err := client.CoreV1().Nodes().Get(ctx, "cnl-fine", metav1.GetOptions{})
		return err == nil && !hasShutdownTaint(n)
	})

	// Ready again: the taint goes.
	n, err := client.CoreV1().Nodes().Get(ctx, "cnl-down", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue, LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
	if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, timeout, func() (bool, error) {
		n, err := client.CoreV1().Nodes().Get(ctx, "cnl-down", metav1.GetOptions{})
		return err == nil && !hasShutdownTaint(n), err
	})
	// A failing provider deletes nothing.
	cloud.SetError(context.DeadlineExceeded)
	cloud.DeleteInstance("cnl-fine")
	framework.Consistently(t, time.Second, "cnl-fine kept while the provider fails", func() bool {
		_, err := client.CoreV1().Nodes().Get(ctx, "cnl-fine", metav1.GetOptions{})
		return err == nil
	})
}
