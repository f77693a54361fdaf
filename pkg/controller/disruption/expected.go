package disruption

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	policy "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// expectation is what a budget asks of its pods.
type expectation struct {
	// expected is status.expectedPods; desiredHealthy the Ready pods the
	// budget wants.
	expected, desiredHealthy int32
	// unmanaged names the selected pods without a controller, when the
	// budget's rule needed their controllers' scale.
	unmanaged []string
}

// expect computes the budget's expectation, upstream's rules:
//
//   - maxUnavailable (int or percentage): expected is the controllers'
//     scale, desiredHealthy expected minus maxUnavailable (a percentage
//     rounded up), at least 0;
//   - minAvailable as an int: expected is the number of selected pods,
//     desiredHealthy minAvailable;
//   - minAvailable as a percentage: expected is the controllers' scale,
//     desiredHealthy that percentage of it, rounded up;
//   - neither: both 0.
func (c *Controller) expect(ctx context.Context, pdb *policy.PodDisruptionBudget, pods []*v1.Pod) (expectation, error) {
	var e expectation
	var err error
	switch {
	case pdb.Spec.MaxUnavailable != nil:
		if e.expected, e.unmanaged, err = c.expectedScale(ctx, pods); err != nil {
			return e, err
		}
		maxUnavailable, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MaxUnavailable, int(e.expected), true)
		if err != nil {
			return e, err
		}
		e.desiredHealthy = max(e.expected-int32(maxUnavailable), 0)
	case pdb.Spec.MinAvailable != nil && pdb.Spec.MinAvailable.Type == intstr.Int:
		e.desiredHealthy = pdb.Spec.MinAvailable.IntVal
		e.expected = int32(len(pods))
	case pdb.Spec.MinAvailable != nil && pdb.Spec.MinAvailable.Type == intstr.String:
		if e.expected, e.unmanaged, err = c.expectedScale(ctx, pods); err != nil {
			return e, err
		}
		minAvailable, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MinAvailable, int(e.expected), true)
		if err != nil {
			return e, err
		}
		e.desiredHealthy = int32(minAvailable)
	}
	return e, nil
}

// expectedScale sums the desired scale of the controllers of pods, each
// controller once. Pods without a controller are returned, not counted; a
// pod whose controller no finder resolves is an error naming it.
func (c *Controller) expectedScale(ctx context.Context, pods []*v1.Pod) (int32, []string, error) {
	scales := map[types.UID]int32{}  // by the counted controller
	resolved := map[types.UID]bool{} // pods' controllerRefs already resolved
	var unmanaged []string
	for _, pod := range pods {
		ref := metav1.GetControllerOfNoCopy(pod)
		if ref == nil {
			unmanaged = append(unmanaged, pod.Name)
			continue
		}
		if resolved[ref.UID] {
			continue
		}
		o, err := c.findOwner(ctx, ref, pod.Namespace)
		if err != nil {
			return 0, nil, err
		}
		if o == nil {
			return 0, nil, fmt.Errorf("found no controllers for pod %q", pod.Name)
		}
		scales[o.uid] = o.scale
		resolved[ref.UID] = true
	}
	var sum int32
	for _, s := range scales {
		sum += s
	}
	return sum, unmanaged, nil
}

// findOwner tries each finder in turn; the first error or match ends it.
func (c *Controller) findOwner(ctx context.Context, ref *metav1.OwnerReference, ns string) (*owner, error) {
	for _, find := range c.finders() {
		o, err := find(ctx, ref, ns)
		if err != nil || o != nil {
			return o, err
		}
	}
	return nil, nil
}
