package namespace

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
)

// conditionTypes are the deletion conditions, in the order upstream writes
// them into a Namespace's status.
var conditionTypes = []v1.NamespaceConditionType{
	v1.NamespaceDeletionDiscoveryFailure,
	v1.NamespaceDeletionGVParsingFailure,
	v1.NamespaceDeletionContentFailure,
	v1.NamespaceContentRemaining,
	v1.NamespaceFinalizersRemaining,
}

// okConditions are the False ("nothing wrong") forms of each condition.
var okConditions = map[v1.NamespaceConditionType]struct{ reason, message string }{
	v1.NamespaceDeletionDiscoveryFailure: {"ResourcesDiscovered", "All resources successfully discovered"},
	v1.NamespaceDeletionGVParsingFailure: {"ParsedGroupVersions", "All legacy kube types successfully parsed"},
	v1.NamespaceDeletionContentFailure:   {"ContentDeleted", "All content successfully deleted, may be waiting on finalization"},
	v1.NamespaceContentRemaining:         {"ContentRemoved", "All content successfully removed"},
	v1.NamespaceFinalizersRemaining:      {"ContentHasNoFinalizers", "All content-preserving finalizers finished"},
}

// remaining counts what is left in a namespace after a deletion pass.
type remaining struct {
	byResource  map[schema.GroupVersionResource]int
	byFinalizer map[string]int
}

func newRemaining() remaining {
	return remaining{byResource: map[schema.GroupVersionResource]int{}, byFinalizer: map[string]int{}}
}

// add records the instances of gvr left after its deletion.
func (r remaining) add(gvr schema.GroupVersionResource, res gvrResult) {
	if res.numRemaining == 0 {
		return
	}
	r.byResource[gvr] = res.numRemaining
	for f, n := range res.finalizers {
		if n > 0 {
			r.byFinalizer[f] += n
		}
	}
}

// conditions collects the failures of one deletion pass and turns them
// into the Namespace's deletion conditions.
type conditions struct {
	failed        []v1.NamespaceCondition
	contentErrors []error
}

func trueCondition(t v1.NamespaceConditionType, reason, message string) v1.NamespaceCondition {
	return v1.NamespaceCondition{Type: t, Status: v1.ConditionTrue, LastTransitionTime: metav1.Now(), Reason: reason, Message: message}
}

func (c *conditions) discoveryFailed(err error) {
	msg := err.Error()
	var gerr *discovery.ErrGroupDiscoveryFailed
	if errors.As(err, &gerr) {
		msg = fmt.Sprintf("Discovery failed for some groups, %d failing: %v", len(gerr.Groups), err)
	}
	c.failed = append(c.failed, trueCondition(v1.NamespaceDeletionDiscoveryFailure, "DiscoveryFailed", msg))
}

func (c *conditions) groupVersionParsingFailed(err error) {
	c.failed = append(c.failed, trueCondition(v1.NamespaceDeletionGVParsingFailure, "GroupVersionParsingFailed", err.Error()))
}

func (c *conditions) contentDeletionFailed(err error) {
	c.contentErrors = append(c.contentErrors, err)
}

// contentRemaining records what is left, by resource and by finalizer.
func (c *conditions) contentRemaining(r remaining) {
	if len(r.byResource) > 0 {
		var parts []string
		for gvr, n := range r.byResource {
			parts = append(parts, fmt.Sprintf("%s.%s has %d resource instances", gvr.Resource, gvr.Group, n))
		}
		sort.Strings(parts)
		c.failed = append(c.failed, trueCondition(v1.NamespaceContentRemaining, "SomeResourcesRemain",
			"Some resources are remaining: "+strings.Join(parts, ", ")))
	}
	if len(r.byFinalizer) > 0 {
		var parts []string
		for f, n := range r.byFinalizer {
			parts = append(parts, fmt.Sprintf("%s in %d resource instances", f, n))
		}
		sort.Strings(parts)
		c.failed = append(c.failed, trueCondition(v1.NamespaceFinalizersRemaining, "SomeFinalizersRemain",
			"Some content in the namespace has finalizers remaining: "+strings.Join(parts, ", ")))
	}
}

// apply writes the conditions into status and reports whether anything
// changed. Every condition type is present afterwards; one that did not
// fail gets its False form. LastTransitionTime moves only when the status
// flips.
func (c *conditions) apply(status *v1.NamespaceStatus) bool {
	desired := c.failed
	if len(c.contentErrors) > 0 && findCondition(desired, v1.NamespaceDeletionContentFailure) == nil {
		msgs := make([]string, 0, len(c.contentErrors))
		for _, e := range c.contentErrors {
			msgs = append(msgs, e.Error())
		}
		sort.Strings(msgs)
		desired = append(desired, trueCondition(v1.NamespaceDeletionContentFailure, "ContentDeletionFailed",
			fmt.Sprintf("Failed to delete all resource types, %d remaining: %v", len(c.contentErrors), strings.Join(msgs, ", "))))
	}
	changed := false
	for _, t := range conditionTypes {
		want := findCondition(desired, t)
		if want == nil {
			ok := okConditions[t]
			want = &v1.NamespaceCondition{Type: t, Status: v1.ConditionFalse, LastTransitionTime: metav1.Now(), Reason: ok.reason, Message: ok.message}
		}
		have := findCondition(status.Conditions, t)
		switch {
		case have == nil:
			status.Conditions = append(status.Conditions, *want)
			changed = true
		case have.Status != want.Status || have.Reason != want.Reason || have.Message != want.Message:
			if have.Status != want.Status {
				have.LastTransitionTime = metav1.Now()
			}
			have.Status, have.Reason, have.Message = want.Status, want.Reason, want.Message
			changed = true
		}
	}
	return changed
}

func findCondition(conds []v1.NamespaceCondition, t v1.NamespaceConditionType) *v1.NamespaceCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}
