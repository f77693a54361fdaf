package parity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"

	"github.com/kcm-dev/kcm/test/cluster"
	"github.com/kcm-dev/kcm/test/metricsapi"
)

// fieldManager is the manager name of every write the harness makes.
const fieldManager = "parity"

// stepRunner runs a scenario's steps against one cluster.
type stepRunner struct {
	cluster *cluster.Cluster
	kinds   *kinds
	logf    func(format string, args ...any)
	// settle runs a settle step (the capture lives in the runner).
	settle func(ctx context.Context, s *Settle) error
	// deleted remembers the uid of what each delete step deleted, for
	// "for: recreated".
	deleted map[string]types.UID
	// upstream is upstream's controller manager binary, for
	// "controllerManager: start-upstream".
	upstream string
	// metrics is the test metrics API of a scenario with metricsAPI.
	metrics *metricsapi.Server
}

func refKey(r Ref) string { return r.Kind + "/" + r.Namespace + "/" + r.Name }

// run executes one step.
func (r *stepRunner) run(ctx context.Context, st *Step) error {
	switch {
	case st.Apply != nil:
		return r.apply(ctx, st.Apply)
	case st.Create != nil:
		return r.create(ctx, st.Create, st.As, max(st.Times, 1))
	case st.Patch != nil:
		return r.patch(ctx, st.Patch)
	case st.Scale != nil:
		return r.scale(ctx, st.Scale)
	case st.SetImage != nil:
		return r.setImage(ctx, st.SetImage)
	case st.Delete != nil:
		return r.delete(ctx, st.Delete)
	case st.Wait != nil:
		return r.wait(ctx, st.Wait)
	case st.ControllerManager != "":
		return r.controllerManager(ctx, st.ControllerManager)
	case st.CloudControllerManager != "":
		return r.cloudControllerManager(ctx, st.CloudControllerManager)
	case st.Settle != nil:
		return r.settle(ctx, st.Settle)
	case st.Nodes != nil:
		return r.nodes(ctx, *st.Nodes)
	case st.Evict != nil:
		return r.evict(ctx, st.Evict)
	case st.Metrics != nil:
		return r.setMetrics(st.Metrics)
	}
	return errors.New("empty step")
}

// apply server-side-applies each object, forcing ownership of conflicting
// fields, as `kubectl apply --server-side --force-conflicts`.
func (r *stepRunner) apply(ctx context.Context, objs Objects) error {
	for _, o := range objs {
		u, err := toUnstructured(o)
		if err != nil {
			return err
		}
		ri, _, err := r.kinds.resource(u.GetAPIVersion(), u.GetKind(), u.GetNamespace())
		if err != nil {
			return err
		}
		if _, err := ri.Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: fieldManager, Force: true}); err != nil {
			return fmt.Errorf("apply %s %s: %w", u.GetKind(), u.GetName(), err)
		}
	}
	return nil
}

func (r *stepRunner) patch(ctx context.Context, p *PatchStep) error {
	ri, _, err := r.kinds.resource(p.APIVersion, p.Kind, p.Namespace)
	if err != nil {
		return err
	}
	pt := map[string]types.PatchType{
		"": types.MergePatchType, "merge": types.MergePatchType,
		"strategic": types.StrategicMergePatchType, "json": types.JSONPatchType,
	}[p.Type]
	body, err := json.Marshal(p.Patch)
	if err == nil {
		body, err = substituteUIDs(body, r.lookupUID(ctx))
	}
	if err == nil {
		body, err = substituteTimes(body, time.Now())
	}
	if err != nil {
		return fmt.Errorf("patch %s: %w", p.Ref, err)
	}
	var sub []string
	if p.Subresource != "" {
		sub = append(sub, p.Subresource)
	}
	names, err := selected(ctx, ri, p.Name, p.Selector, p.FieldSelector)
	if err != nil {
		return fmt.Errorf("patch %s: %w", p.Ref, err)
	}
	for _, name := range names {
		if _, err := ri.Patch(ctx, name, pt, body, metav1.PatchOptions{FieldManager: fieldManager}, sub...); err != nil {
			return fmt.Errorf("patch %s %s: %w", p.Kind, name, err)
		}
	}
	return nil
}

// selected returns name, or the names of the objects the label and field
// selectors select (an error if none).
func selected(ctx context.Context, ri dynamic.ResourceInterface, name, selector, fieldSelector string) ([]string, error) {
	if selector == "" && fieldSelector == "" {
		return []string{name}, nil
	}
	list, err := ri.List(ctx, metav1.ListOptions{LabelSelector: selector, FieldSelector: fieldSelector})
	if err != nil {
		return nil, err
	}
	if len(list.Items) == 0 {
		return nil, fmt.Errorf("nothing matches %q", strings.TrimSpace(selector+" "+fieldSelector))
	}
	names := make([]string, len(list.Items))
	for i := range list.Items {
		names[i] = list.Items[i].GetName()
	}
	return names, nil
}

func (r *stepRunner) scale(ctx context.Context, s *ScaleStep) error {
	ri, _, err := r.kinds.resource(s.APIVersion, s.Kind, s.Namespace)
	if err != nil {
		return err
	}
	body := fmt.Sprintf(`{"spec":{"replicas":%d}}`, s.Replicas)
	if _, err := ri.Patch(ctx, s.Name, types.MergePatchType, []byte(body), metav1.PatchOptions{FieldManager: fieldManager}, "scale"); err != nil {
		return fmt.Errorf("scale %s: %w", s.Ref, err)
	}
	return nil
}

// podSpecPaths are where kinds keep their pod spec, as kubectl set image
// finds them.
var podSpecPaths = [][]string{
	{"spec", "template", "spec"},                        // Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, RC
	{"spec", "jobTemplate", "spec", "template", "spec"}, // CronJob
	{"spec"}, // Pod
}

func (r *stepRunner) setImage(ctx context.Context, s *SetImageStep) error {
	ri, _, err := r.kinds.resource(s.APIVersion, s.Kind, s.Namespace)
	if err != nil {
		return err
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		obj, err := ri.Get(ctx, s.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !setContainerImage(obj.Object, s.Container, s.Image) {
			return fmt.Errorf("no container %q", s.Container)
		}
		_, err = ri.Update(ctx, obj, metav1.UpdateOptions{FieldManager: fieldManager})
		return err
	})
	if err != nil {
		return fmt.Errorf("set image %s: %w", s.Ref, err)
	}
	return nil
}

// setContainerImage sets the image of the named container (or init
// container) in the object's pod spec; it reports whether it found one.
func setContainerImage(obj map[string]any, container, image string) bool {
	for _, p := range podSpecPaths {
		spec, ok, _ := unstructured.NestedMap(obj, p...)
		if !ok {
			continue
		}
		if _, has := spec["containers"]; !has {
			continue
		}
		found := false
		for _, field := range []string{"initContainers", "containers"} {
			cs, _, _ := unstructured.NestedSlice(spec, field)
			for _, c := range cs {
				if m, ok := c.(map[string]any); ok && m["name"] == container {
					m["image"] = image
					found = true
				}
			}
			if cs != nil {
				spec[field] = cs
			}
		}
		if found {
			_ = unstructured.SetNestedMap(obj, spec, p...)
		}
		return found
	}
	return false
}

func (r *stepRunner) delete(ctx context.Context, d *DeleteStep) error {
	ri, _, err := r.kinds.resource(d.APIVersion, d.Kind, d.Namespace)
	if err != nil {
		return err
	}
	names, err := selected(ctx, ri, d.Name, d.Selector, "")
	if err != nil {
		return fmt.Errorf("delete %s: %w", d.Ref, err)
	}
	for _, name := range names {
		obj, err := ri.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("delete %s %s: %w", d.Kind, name, err)
		}
		opts := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr(obj.GetUID())}}
		if d.Propagation != "" {
			opts.PropagationPolicy = ptr(metav1.DeletionPropagation(d.Propagation))
		}
		if err := ri.Delete(ctx, name, opts); err != nil {
			return fmt.Errorf("delete %s %s: %w", d.Kind, name, err)
		}
		if d.Selector == "" {
			r.deleted[refKey(d.Ref)] = obj.GetUID()
		}
	}
	return nil
}

func (r *stepRunner) wait(ctx context.Context, w *WaitStep) error {
	c, err := parseCondition(w)
	if err != nil {
		return err
	}
	err = poll(ctx, w.Timeout.or(DefaultWaitTimeout), func(ctx context.Context) (bool, string, error) {
		return r.check(ctx, w, c)
	})
	if err != nil {
		return fmt.Errorf("wait %s: %w", w.Ref, err)
	}
	return nil
}

// nodes makes sure kwok Nodes kwok-node-0 … kwok-node-(n-1) exist.
func (r *stepRunner) nodes(ctx context.Context, n int) error {
	if _, err := r.cluster.CreateNodes(ctx, cluster.DefaultNodePrefix, n); err != nil {
		return fmt.Errorf("nodes: %w", err)
	}
	return nil
}

func (r *stepRunner) controllerManager(ctx context.Context, action string) error {
	var err error
	switch action {
	case cmStop:
		err = r.cluster.StopControllerManager()
	case cmKill:
		err = r.cluster.KillControllerManager()
	case cmStart:
		if err = r.cluster.StartControllerManager(ctx); err == nil {
			err = r.cluster.WaitForControllerManagerLeader(ctx)
		}
	case cmRestart:
		if err = r.cluster.RestartControllerManager(ctx); err == nil {
			err = r.cluster.WaitForControllerManagerLeader(ctx)
		}
	case cmStartUpstream:
		o := r.cluster.Options().ControllerManager
		o.Binary = r.upstream
		if err = r.cluster.StartControllerManagerWith(ctx, o); err == nil {
			err = r.cluster.WaitForControllerManagerLeader(ctx)
		}
	default:
		err = fmt.Errorf("unknown action %q", action)
	}
	if err != nil {
		return fmt.Errorf("%s kube-controller-manager: %w", action, err)
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

// toUnstructured converts an object read from YAML (float64 numbers) to
// one with the number types the apimachinery helpers expect.
func toUnstructured(o map[string]any) (*unstructured.Unstructured, error) {
	b, err := json.Marshal(o)
	if err == nil {
		b, err = substituteTimes(b, time.Now())
	}
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(b); err != nil {
		return nil, fmt.Errorf("object %v: %w", o["kind"], err)
	}
	return u, nil
}
