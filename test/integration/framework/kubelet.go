package framework

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kubeletPeriod is how often StartKubelet's stand-in looks at the pods.
const kubeletPeriod = 50 * time.Millisecond

// StartKubelet runs a stand-in for the kubelet (envtest has none) on the
// namespace until the test ends: every 50ms it lists the namespace's pods
// and calls step with each, a copy step may change and write back. step
// runs outside the test goroutine: it must not fail the test, and should
// leave what fails (a conflict) to its next call.
func (n Namespace) StartKubelet(step func(ctx context.Context, p *v1.Pod)) {
	ctx, cancel := context.WithCancel(n.Ctx)
	done := make(chan struct{})
	n.T.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		tick := time.NewTicker(kubeletPeriod)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			pods, err := n.Client.CoreV1().Pods(n.Name).List(ctx, metav1.ListOptions{})
			if err != nil {
				continue
			}
			for i := range pods.Items {
				step(ctx, &pods.Items[i])
			}
		}
	}()
}

// MarkRunningReady sets the pod's status Running and Ready since now, as
// the kubelet reports a started pod, and writes it, returning the error.
func (n Namespace) MarkRunningReady(ctx context.Context, p *v1.Pod) error {
	p.Status.Phase = v1.PodRunning
	p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.Now()}}
	_, err := n.Client.CoreV1().Pods(n.Name).UpdateStatus(ctx, p, metav1.UpdateOptions{})
	return err
}
