package bench

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
)

// ScenarioStatefulSets is the statefulsets phase set: Parallel
// StatefulSets created, scaled, rolled and deleted on the deployments
// scenario's nodes.
const ScenarioStatefulSets = "statefulsets"

// statefulSetNameFormat names the benchmark's StatefulSets.
const statefulSetNameFormat = "sts-%04d"

// Default sizes of the statefulsets phases (Params fields left zero).
const (
	defaultStatefulSets       = 50
	defaultStatefulSetReplica = 10
	defaultStatefulSetScaleTo = 20
)

func statefulSetsScenario() Scenario {
	static := func(n ...string) func([]string) []string { return func([]string) []string { return n } }
	return Scenario{
		Name:          ScenarioStatefulSets,
		SetupRequires: []string{names.ServiceAccount, names.NodeLifecycle},
		Setup:         setupDeployments,
		Phases: []Phase{
			{Name: "create", Description: "create Parallel StatefulSets, wait until every pod is available",
				Requires: static(names.StatefulSet), Run: createStatefulSets},
			{Name: "scale", Description: "scale every StatefulSet, wait until every pod is available",
				Requires: static(names.StatefulSet), Run: scaleStatefulSets},
			{Name: "roll", Description: "new image in every StatefulSet, wait until every rolling update is complete",
				Requires: static(names.StatefulSet), Run: rollStatefulSets},
			{Name: "delete", Description: "delete every StatefulSet (background propagation), wait until no pod remains",
				Requires: static(names.GarbageCollector), Run: deleteStatefulSets},
		},
	}
}

// statefulSetSizes returns the number of StatefulSets and their replicas
// before and after the scale phase.
func (p Params) statefulSetSizes() (sets, replicas, scaleTo int) {
	return orDefault(p.StatefulSets, defaultStatefulSets), orDefault(p.StatefulSetReplicas, defaultStatefulSetReplica),
		orDefault(p.StatefulSetScaleTo, defaultStatefulSetScaleTo)
}

func statefulSetName(i int) string { return fmt.Sprintf(statefulSetNameFormat, i) }

func newStatefulSet(name, namespace string, replicas int) *appsv1.StatefulSet {
	lbls := map[string]string{"app": name}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: lbls},
		Spec: appsv1.StatefulSetSpec{
			Replicas:            ptr.To(int32(replicas)),
			ServiceName:         name,
			PodManagementPolicy: appsv1.ParallelPodManagement,
			Selector:            &metav1.LabelSelector{MatchLabels: lbls},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: lbls},
				Spec: corev1.PodSpec{
					// Deleted at once by the API server: kwok finishes a
					// graceful deletion by deleting the pod by name, and
					// when the StatefulSet has recreated it meanwhile,
					// deletes the new one (at 500 QPS upstream created
					// 25,145 pods to roll 1,000).
					TerminationGracePeriodSeconds: ptr.To[int64](0),
					Containers:                    []corev1.Container{{Name: containerName, Image: imageBefore}},
				},
			},
		},
	}
}

func createStatefulSets(ctx context.Context, env *Env) error {
	n, replicas, _ := env.Params.statefulSetSizes()
	err := env.forEach(ctx, n, func(ctx context.Context, i int) error {
		name := statefulSetName(i)
		set, err := env.Client.AppsV1().StatefulSets(env.Namespace).Create(ctx, newStatefulSet(name, env.Namespace, replicas), metav1.CreateOptions{})
		switch {
		case apierrors.IsAlreadyExists(err): // a retried create that had gone through
			env.setGeneration(name, 1)
		case err != nil:
			return fmt.Errorf("create statefulset %s: %w", name, err)
		default:
			env.setGeneration(name, set.Generation)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return env.waitStatefulSetsDone(ctx, int32(replicas))
}

func scaleStatefulSets(ctx context.Context, env *Env) error {
	_, _, scaleTo := env.Params.statefulSetSizes()
	if err := env.patchStatefulSets(ctx, types.MergePatchType, fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, scaleTo)); err != nil {
		return err
	}
	return env.waitStatefulSetsDone(ctx, int32(scaleTo))
}

func rollStatefulSets(ctx context.Context, env *Env) error {
	_, _, scaleTo := env.Params.statefulSetSizes()
	patch := fmt.Appendf(nil, `{"spec":{"template":{"spec":{"containers":[{"name":%q,"image":%q}]}}}}`, containerName, imageAfter)
	if err := env.patchStatefulSets(ctx, types.StrategicMergePatchType, patch); err != nil {
		return err
	}
	return env.waitStatefulSetsDone(ctx, int32(scaleTo))
}

func (env *Env) patchStatefulSets(ctx context.Context, pt types.PatchType, patch []byte) error {
	n, _, _ := env.Params.statefulSetSizes()
	return env.forEach(ctx, n, func(ctx context.Context, i int) error {
		name := statefulSetName(i)
		set, err := env.Client.AppsV1().StatefulSets(env.Namespace).Patch(ctx, name, pt, patch, metav1.PatchOptions{})
		if err != nil {
			return fmt.Errorf("patch statefulset %s: %w", name, err)
		}
		env.setGeneration(name, set.Generation)
		return nil
	})
}

// StatefulSetDone reports whether a StatefulSet has observed at least
// generation gen and runs exactly want replicas, all at the update
// revision, ready and available, the update complete: what `kubectl
// rollout status` waits for.
func StatefulSetDone(s *appsv1.StatefulSet, gen int64, want int32) bool {
	st := s.Status
	return s.Generation >= gen && st.ObservedGeneration >= s.Generation &&
		s.Spec.Replicas != nil && *s.Spec.Replicas == want &&
		st.Replicas == want && st.UpdatedReplicas == want && st.ReadyReplicas == want && st.AvailableReplicas == want &&
		st.CurrentRevision == st.UpdateRevision
}

func (env *Env) waitStatefulSetsDone(ctx context.Context, want int32) error {
	n, _, _ := env.Params.statefulSetSizes()
	what := fmt.Sprintf("%d StatefulSets with %d available updated replicas", n, want)
	return env.waitFor(ctx, what, func() (bool, string) {
		done := 0
		for i := range n {
			name := statefulSetName(i)
			s, err := env.StatefulSets.StatefulSets(env.Namespace).Get(name)
			if err == nil && StatefulSetDone(s, env.generation(name), want) {
				done++
			}
		}
		pods, _ := env.Pods.Pods(env.Namespace).List(labels.Everything())
		return done == n, fmt.Sprintf("%d/%d done, %d pods", done, n, len(pods))
	})
}

func deleteStatefulSets(ctx context.Context, env *Env) error {
	n, _, _ := env.Params.statefulSetSizes()
	err := env.forEach(ctx, n, func(ctx context.Context, i int) error {
		name := statefulSetName(i)
		err := env.Client.AppsV1().StatefulSets(env.Namespace).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete statefulset %s: %w", name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return env.waitFor(ctx, "no pod left in namespace "+env.Namespace, func() (bool, string) {
		pods, _ := env.Pods.Pods(env.Namespace).List(labels.Everything())
		sets, _ := env.StatefulSets.StatefulSets(env.Namespace).List(labels.Everything())
		return len(pods) == 0 && len(sets) == 0, fmt.Sprintf("%d pods, %d statefulsets left", len(pods), len(sets))
	})
}
