package parity

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// allNamespaces in CaptureSpec.Namespaces selects every namespace.
const allNamespaces = "*"

// capturer lists what a scenario's capture section selects.
type capturer struct {
	kinds *kinds
	specs []CaptureSpec
	// defaultNamespaces apply to specs without namespaces: the scenario's
	// own; empty means all.
	defaultNamespaces []string
}

// capture lists every selected object. Objects being deleted are kept: a
// lingering finalizer is a difference worth seeing.
func (c *capturer) capture(ctx context.Context) (*Capture, error) {
	out := &Capture{EventCounts: true}
	for _, spec := range c.specs {
		objs, err := c.list(ctx, spec)
		if err != nil {
			return nil, err
		}
		if spec.isEvents() {
			if spec.Counts != nil && !*spec.Counts {
				out.EventCounts = false
			}
			for _, o := range objs {
				reason, _, _ := unstructured.NestedString(o.Object, "reason")
				if !harnessEvent(o) && (len(spec.Sources) == 0 || slices.Contains(spec.Sources, eventSource(o))) &&
					(len(spec.Reasons) == 0 || slices.Contains(spec.Reasons, reason)) {
					out.Events = append(out.Events, o)
				}
			}
			continue
		}
		out.Objects = append(out.Objects, objs...)
	}
	return out, nil
}

func (c *capturer) list(ctx context.Context, spec CaptureSpec) ([]*unstructured.Unstructured, error) {
	m, err := c.kinds.mapping(spec.APIVersion, spec.Kind)
	if err != nil {
		return nil, err
	}
	res := c.kinds.dyn.Resource(m.Resource)
	var clients []dynamic.ResourceInterface
	namespaces := spec.Namespaces
	if len(namespaces) == 0 {
		namespaces = c.defaultNamespaces
	}
	switch {
	case m.Scope.Name() != meta.RESTScopeNameNamespace:
		clients = []dynamic.ResourceInterface{res}
	case len(namespaces) == 0 || slices.Contains(namespaces, allNamespaces):
		clients = []dynamic.ResourceInterface{res} // all namespaces
	default:
		for _, ns := range namespaces {
			clients = append(clients, res.Namespace(ns))
		}
	}
	var out []*unstructured.Unstructured
	for _, ri := range clients {
		l, err := ri.List(ctx, metav1.ListOptions{LabelSelector: spec.Selector})
		if err != nil {
			return nil, fmt.Errorf("parity: capture %s: %w", spec.Kind, err)
		}
		for i := range l.Items {
			o := &l.Items[i]
			if len(spec.Names) > 0 && !slices.Contains(spec.Names, o.GetName()) {
				continue
			}
			if o.GetKind() == "" {
				o.SetGroupVersionKind(m.GroupVersionKind)
			}
			out = append(out, o)
		}
	}
	return out, nil
}

// isEvents reports whether the spec selects core Events, which are reduced.
func (s CaptureSpec) isEvents() bool {
	return s.Kind == eventKind && (s.APIVersion == "" || s.APIVersion == "v1")
}

// apiserverEventSources are the apiserver's own controllers that record
// Events: its ClusterIP and NodePort repair loops.
var apiserverEventSources = []string{"ipallocator-repair-controller", "portallocator-repair-controller"}

// harnessEvent reports an Event that says nothing about the controllers
// under test, so that no capture keeps it: the apiserver's own (its repair
// loop's ClusterIPNotAllocated when the kubernetes Service races its start)
// and a controller manager's LeaderElection on its Lease, one per process
// start, which counts the harness's restarts (chaos moves the controller
// manager behind a proxy by restarting it).
func harnessEvent(e *unstructured.Unstructured) bool {
	reason, _, _ := unstructured.NestedString(e.Object, "reason")
	kind, _, _ := unstructured.NestedString(e.Object, "involvedObject", "kind")
	return reason == "LeaderElection" && kind == "Lease" || slices.Contains(apiserverEventSources, eventSource(e))
}

// eventSource is the component that reported an Event.
func eventSource(e *unstructured.Unstructured) string {
	if s, _, _ := unstructured.NestedString(e.Object, "reportingComponent"); s != "" {
		return s
	}
	s, _, _ := unstructured.NestedString(e.Object, "source", "component")
	return s
}
