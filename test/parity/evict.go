package parity

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"

	v1 "k8s.io/api/core/v1"
	policy "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Outcomes an evict step expects.
const (
	evictAllowed = "allowed"
	evictRefused = "refused"
)

// EvictStep asks the eviction API to evict a pod, the named one or the
// oldest Running, not deleting pod the selector selects (name breaking
// ties), and checks the outcome: allowed (the eviction succeeded) or
// refused (429 with the DisruptionBudget cause, a budget forbade it).
type EvictStep struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name,omitempty"`
	Selector  string `json:"selector,omitempty"`
	Expect    string `json:"expect"`
}

func (e *EvictStep) validate() error {
	var errs []error
	if e.Namespace == "" || (e.Name == "") == (e.Selector == "") {
		errs = append(errs, errors.New("evict: namespace and either name or selector are required"))
	}
	if !slices.Contains([]string{evictAllowed, evictRefused}, e.Expect) {
		errs = append(errs, fmt.Errorf("evict: expect %q: want allowed or refused", e.Expect))
	}
	return errors.Join(errs...)
}

func (e *EvictStep) String() string {
	what := e.Name
	if what == "" {
		what = "a pod of " + e.Selector
	}
	return fmt.Sprintf("evict %s/%s, expecting %s", e.Namespace, what, e.Expect)
}

func (r *stepRunner) evict(ctx context.Context, e *EvictStep) error {
	name := e.Name
	if name == "" {
		var err error
		if name, err = r.evictionCandidate(ctx, e); err != nil {
			return err
		}
	}
	err := r.cluster.Client.CoreV1().Pods(e.Namespace).EvictV1(ctx, &policy.Eviction{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.Namespace},
	})
	refused := apierrors.IsTooManyRequests(err) && apierrors.HasStatusCause(err, policy.DisruptionBudgetCause)
	switch {
	case e.Expect == evictAllowed && err != nil:
		return fmt.Errorf("evict %s/%s: %w", e.Namespace, name, err)
	case e.Expect == evictRefused && err == nil:
		return fmt.Errorf("evict %s/%s: allowed, want refused", e.Namespace, name)
	case e.Expect == evictRefused && !refused:
		return fmt.Errorf("evict %s/%s: %w, want refused by a PodDisruptionBudget", e.Namespace, name, err)
	}
	return nil
}

// evictionCandidate picks the oldest Running pod the selector selects
// that is not being deleted.
func (r *stepRunner) evictionCandidate(ctx context.Context, e *EvictStep) (string, error) {
	list, err := r.cluster.Client.CoreV1().Pods(e.Namespace).List(ctx, metav1.ListOptions{LabelSelector: e.Selector})
	if err != nil {
		return "", fmt.Errorf("evict: %w", err)
	}
	var pods []v1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase == v1.PodRunning {
			pods = append(pods, p)
		}
	}
	if len(pods) == 0 {
		return "", fmt.Errorf("evict: no Running pod matches %q in %s", e.Selector, e.Namespace)
	}
	sort.Slice(pods, func(i, j int) bool {
		a, b := pods[i].CreationTimestamp, pods[j].CreationTimestamp
		if !a.Equal(&b) {
			return a.Before(&b)
		}
		return pods[i].Name < pods[j].Name
	})
	return pods[0].Name, nil
}
