package bench

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
)

// ScenarioEndpoints is the endpoints phase set: Services, each over a
// Deployment, whose EndpointSlices and Endpoints objects follow the pods
// through creation, a rolling update, a scale-up and deletion.
const ScenarioEndpoints = "endpoints"

// Default sizes of the endpoints phases (Params fields left zero).
const (
	defaultServices       = 100
	defaultServiceReplica = 30
	defaultServiceScaleTo = 60
)

// sliceManager is the managed-by label of the endpointslice-controller's
// slices.
const sliceManager = "endpointslice-controller.k8s.io"

func endpointsScenario() Scenario {
	static := func(n ...string) func([]string) []string { return func([]string) []string { return n } }
	workload := static(names.Deployment, names.ReplicaSet, names.EndpointSlice, names.Endpoints)
	return Scenario{
		Name:          ScenarioEndpoints,
		SetupRequires: []string{names.ServiceAccount, names.NodeLifecycle},
		Setup:         setupDeployments,
		Phases: []Phase{
			{Name: "create", Description: "create Services and their Deployments, wait until every slice and Endpoints object lists exactly the ready pods",
				Requires: workload, Run: createServices},
			{Name: "roll", Description: "new image in every Deployment, wait until every rollout is complete and every slice and Endpoints object lists exactly the new pods",
				Requires: workload, Run: rollServices},
			{Name: "scale", Description: "scale every Deployment, wait until every slice and Endpoints object lists exactly the ready pods",
				Requires: workload, Run: scaleServices},
			{Name: "delete", Description: "delete every Service and Deployment (background propagation), wait until no pod, slice or Endpoints object remains",
				Requires: static(names.GarbageCollector), Run: deleteServices},
		},
	}
}

// serviceSizes returns the number of Services and their Deployments'
// replicas before and after the scale phase.
func (p Params) serviceSizes() (services, replicas, scaleTo int) {
	return orDefault(p.Services, defaultServices), orDefault(p.ServiceReplicas, defaultServiceReplica),
		orDefault(p.ServiceScaleTo, defaultServiceScaleTo)
}

// newService is a ClusterIP Service over the Deployment of the same name.
func newService(name, namespace string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: map[string]string{"app": name}},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": name},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(8080)}},
		},
	}
}

func createServices(ctx context.Context, env *Env) error {
	n, replicas, _ := env.Params.serviceSizes()
	err := env.forEach(ctx, n, func(ctx context.Context, i int) error {
		name := deploymentName(i)
		_, err := env.Client.CoreV1().Services(env.Namespace).Create(ctx, newService(name, env.Namespace), metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create service %s: %w", name, err)
		}
		d, err := env.Client.AppsV1().Deployments(env.Namespace).Create(ctx, newDeployment(name, env.Namespace, replicas), metav1.CreateOptions{})
		switch {
		case apierrors.IsAlreadyExists(err): // a retried create that had gone through
			env.setGeneration(name, 1)
		case err != nil:
			return fmt.Errorf("create deployment %s: %w", name, err)
		default:
			env.setGeneration(name, d.Generation)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return env.waitEndpointsRight(ctx, replicas)
}

func rollServices(ctx context.Context, env *Env) error {
	_, replicas, _ := env.Params.serviceSizes()
	patch := fmt.Appendf(nil, `{"spec":{"template":{"spec":{"containers":[{"name":%q,"image":%q}]}}}}`, containerName, imageAfter)
	if err := env.patchServiceDeployments(ctx, types.StrategicMergePatchType, patch); err != nil {
		return err
	}
	return env.waitEndpointsRight(ctx, replicas)
}

func scaleServices(ctx context.Context, env *Env) error {
	_, _, scaleTo := env.Params.serviceSizes()
	if err := env.patchServiceDeployments(ctx, types.MergePatchType, fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, scaleTo)); err != nil {
		return err
	}
	return env.waitEndpointsRight(ctx, scaleTo)
}

func (env *Env) patchServiceDeployments(ctx context.Context, pt types.PatchType, patch []byte) error {
	n, _, _ := env.Params.serviceSizes()
	return env.forEach(ctx, n, func(ctx context.Context, i int) error {
		name := deploymentName(i)
		d, err := env.Client.AppsV1().Deployments(env.Namespace).Patch(ctx, name, pt, patch, metav1.PatchOptions{})
		if err != nil {
			return fmt.Errorf("patch deployment %s: %w", name, err)
		}
		env.setGeneration(name, d.Generation)
		return nil
	})
}

func deleteServices(ctx context.Context, env *Env) error {
	n, _, _ := env.Params.serviceSizes()
	bg := metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}
	err := env.forEach(ctx, n, func(ctx context.Context, i int) error {
		name := deploymentName(i)
		if err := env.Client.CoreV1().Services(env.Namespace).Delete(ctx, name, bg); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete service %s: %w", name, err)
		}
		if err := env.Client.AppsV1().Deployments(env.Namespace).Delete(ctx, name, bg); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete deployment %s: %w", name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return env.waitFor(ctx, "no pod, EndpointSlice or Endpoints left in namespace "+env.Namespace, func() (bool, string) {
		pods, _ := env.Pods.Pods(env.Namespace).List(labels.Everything())
		slices, _ := env.EndpointSlices.EndpointSlices(env.Namespace).List(labels.Everything())
		eps, _ := env.Endpoints.Endpoints(env.Namespace).List(labels.Everything())
		return len(pods)+len(slices)+len(eps) == 0, fmt.Sprintf("%d pods, %d slices, %d Endpoints left", len(pods), len(slices), len(eps))
	})
}

// waitEndpointsRight waits until every Deployment is rolled out to want
// replicas and every Service's slices and Endpoints object list exactly
// its ready pods, by IP, as ready endpoints.
func (env *Env) waitEndpointsRight(ctx context.Context, want int) error {
	n, _, _ := env.Params.serviceSizes()
	what := fmt.Sprintf("%d Services with %d ready endpoints in their slices and Endpoints", n, want)
	return env.waitFor(ctx, what, func() (bool, string) {
		ready := readyPodIPs(env)
		slices := endpointsBySlices(env)
		right, rolled := 0, 0
		var why string
		for i := range n {
			name := deploymentName(i)
			d, err := env.Deployments.Deployments(env.Namespace).Get(name)
			if err != nil || !RolledOut(d, env.generation(name), int32(want)) {
				continue
			}
			rolled++
			ok, reason := endpointsMatch(ready[name], slices[name], env.endpointsOf(name))
			if ok {
				right++
			} else if why == "" {
				why = name + ": " + reason
			}
		}
		return right == n, fmt.Sprintf("%d/%d rolled out, %d/%d right; e.g. %s", rolled, n, right, n, why)
	})
}

// readyPodIPs returns, per app label, the IPs of the ready pods not being
// deleted, by pod name.
func readyPodIPs(env *Env) map[string]map[string]string {
	pods, _ := env.Pods.Pods(env.Namespace).List(labels.Everything())
	out := map[string]map[string]string{}
	for _, p := range pods {
		if p.DeletionTimestamp != nil || p.Status.PodIP == "" || !podReady(p) {
			continue
		}
		app := p.Labels["app"]
		if out[app] == nil {
			out[app] = map[string]string{}
		}
		out[app][p.Name] = p.Status.PodIP
	}
	return out
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// endpoint is what a check compares of an endpoint or address.
type endpoint struct {
	pod, ip string
	ready   bool
}

// endpointsBySlices returns, per Service, the endpoints of its managed
// slices.
func endpointsBySlices(env *Env) map[string][]endpoint {
	slices, _ := env.EndpointSlices.EndpointSlices(env.Namespace).List(labels.Everything())
	out := map[string][]endpoint{}
	for _, s := range slices {
		if s.Labels[discoveryv1.LabelManagedBy] != sliceManager {
			continue
		}
		svc := s.Labels[discoveryv1.LabelServiceName]
		for _, ep := range s.Endpoints {
			e := endpoint{ready: ep.Conditions.Ready != nil && *ep.Conditions.Ready}
			if ep.TargetRef != nil {
				e.pod = ep.TargetRef.Name
			}
			if len(ep.Addresses) > 0 {
				e.ip = ep.Addresses[0]
			}
			out[svc] = append(out[svc], e)
		}
	}
	return out
}

// endpointsOf returns the addresses of the Service's Endpoints object.
func (env *Env) endpointsOf(name string) []endpoint {
	ep, err := env.Endpoints.Endpoints(env.Namespace).Get(name)
	if err != nil {
		return nil
	}
	var out []endpoint
	for _, ss := range ep.Subsets {
		for _, a := range ss.Addresses {
			out = append(out, endpoint{pod: targetName(a.TargetRef), ip: a.IP, ready: true})
		}
		for _, a := range ss.NotReadyAddresses {
			out = append(out, endpoint{pod: targetName(a.TargetRef), ip: a.IP})
		}
	}
	return out
}

func targetName(ref *corev1.ObjectReference) string {
	if ref == nil {
		return ""
	}
	return ref.Name
}

// endpointsMatch reports whether the slices' endpoints and the Endpoints
// object's addresses are each exactly the ready pods, ready, at their IPs.
func endpointsMatch(ready map[string]string, fromSlices, fromEndpoints []endpoint) (bool, string) {
	for _, l := range []struct {
		what string
		eps  []endpoint
	}{{"slices", fromSlices}, {"Endpoints", fromEndpoints}} {
		if len(l.eps) != len(ready) {
			return false, fmt.Sprintf("%s list %d endpoints, %d pods ready", l.what, len(l.eps), len(ready))
		}
		seen := map[string]bool{}
		for _, e := range l.eps {
			if ip, ok := ready[e.pod]; !ok || ip != e.ip || !e.ready || seen[e.pod] {
				return false, fmt.Sprintf("%s: endpoint %s (%s, ready %v) is not a ready pod's", l.what, e.pod, e.ip, e.ready)
			}
			seen[e.pod] = true
		}
	}
	return true, ""
}
