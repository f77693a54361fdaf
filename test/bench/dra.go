package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	resourcelisters "k8s.io/client-go/listers/resource/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
)

// ScenarioDRA is the dra phase set: Deployments whose pods each get a
// ResourceClaim from a template (resourceclaim-controller), allocated by the
// scheduler from a driver's ResourceSlices on kwok nodes; rolled; a few
// allocated devices then tainted NoExecute (device-taint-eviction-controller
// evicts their pods, the Deployments replace them); deleted.
const ScenarioDRA = "dra"

const (
	defaultDRANodes       = 50
	defaultDRADeployments = 100
	defaultDRAReplicas    = 10
	defaultDRATaints      = 10
	// draDevicesPerNode leaves room for a rollout's surge and for the
	// scheduler's uneven spread: 50 nodes hold 2,000 devices for 1,000 pods.
	draDevicesPerNode = 40

	draDriver             = "dra.bench.kcm.dev"
	draClassName          = "dra.bench.kcm.dev"
	draTemplateName       = "device"
	draClaimName          = "device"
	draDeploymentFormat   = "dra-%03d"
	draTaintRuleFormat    = "bench-dra-taint-%03d"
	draTaintKey           = "bench.kcm.dev/unhealthy"
	draSliceNameSuffix    = "-dra"
	draDeviceNameFormat   = "dev-%03d"
	draDeploymentLabelKey = "bench.kcm.dev/dra"
)

func draScenario() Scenario {
	static := func(n ...string) func([]string) []string { return func([]string) []string { return n } }
	nodes, deployments, replicas, taints := Params{}.draSizes()
	return Scenario{
		Name:          ScenarioDRA,
		SetupRequires: []string{names.ServiceAccount, names.NodeLifecycle},
		Setup:         setupDRA,
		Phases: []Phase{
			{Name: "create", Description: fmt.Sprintf("create Deployments (%d of %d replicas on %d nodes by default), each pod with a claim from a template; wait until all are available", deployments, replicas, nodes),
				Requires: static(names.Deployment, names.ReplicaSet, names.ResourceClaim), Run: createDRADeployments},
			{Name: "roll", Description: "new image in every Deployment; wait until every rollout is complete and only the new pods' claims remain",
				Requires: static(names.GarbageCollector), Run: rollDRADeployments},
			{Name: "taint", Description: fmt.Sprintf("taint %d allocated devices NoExecute (a DeviceTaintRule each); wait until their pods are evicted and replaced", taints),
				Requires: static(names.DeviceTaintEviction), Run: taintDRADevices},
			{Name: "delete", Description: "delete every Deployment; wait until no pod and no claim remains",
				Run: deleteDRADeployments},
		},
	}
}

// draSizes returns the dra scenario's sizes, defaults for zero fields.
func (p Params) draSizes() (nodes, deployments, replicas, taints int) {
	return orDefault(p.DRANodes, defaultDRANodes), orDefault(p.DRADeployments, defaultDRADeployments),
		orDefault(p.DRAReplicas, defaultDRAReplicas), orDefault(p.DRATaints, defaultDRATaints)
}

func draDeploymentName(i int) string { return fmt.Sprintf(draDeploymentFormat, i) }

// setupDRA creates the namespace and nodes, then what a driver and an
// administrator would: a DeviceClass, one ResourceSlice per node and the
// claim template the Deployments name.
func setupDRA(ctx context.Context, env *Env) error {
	nodes, _, _, _ := env.Params.draSizes()
	if err := setupNamespaceAndNodes(ctx, env, nodes); err != nil {
		return err
	}
	class := &resourcev1.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: draClassName},
		Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{
			CEL: &resourcev1.CELDeviceSelector{Expression: fmt.Sprintf("device.driver == %q", draDriver)},
		}}},
	}
	if _, err := env.Client.ResourceV1().DeviceClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create DeviceClass: %w", err)
	}
	tmpl := &resourcev1.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: draTemplateName, Namespace: env.Namespace},
		Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
			Requests: []resourcev1.DeviceRequest{{Name: "dev", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: draClassName}}},
		}}},
	}
	if _, err := env.Client.ResourceV1().ResourceClaimTemplates(env.Namespace).Create(ctx, tmpl, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create ResourceClaimTemplate: %w", err)
	}
	return env.forEach(ctx, nodes, func(ctx context.Context, i int) error {
		node := fmt.Sprintf("%s-%d", setupNodePrefix, i)
		devices := make([]resourcev1.Device, draDevicesPerNode)
		for d := range devices {
			devices[d].Name = fmt.Sprintf(draDeviceNameFormat, d)
		}
		slice := &resourcev1.ResourceSlice{
			ObjectMeta: metav1.ObjectMeta{Name: node + draSliceNameSuffix},
			Spec: resourcev1.ResourceSliceSpec{
				Driver:   draDriver,
				NodeName: ptr.To(node),
				Pool:     resourcev1.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1},
				Devices:  devices,
			},
		}
		if _, err := env.Client.ResourceV1().ResourceSlices().Create(ctx, slice, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create ResourceSlice %s: %w", slice.Name, err)
		}
		return nil
	})
}

// newDRADeployment is newDeployment whose pods each claim one device
// through the template.
func newDRADeployment(name, namespace string, replicas int) *appsv1.Deployment {
	d := newDeployment(name, namespace, replicas)
	d.Labels[draDeploymentLabelKey] = "true"
	spec := &d.Spec.Template.Spec
	spec.Containers[0].Resources.Claims = []corev1.ResourceClaim{{Name: draClaimName}}
	spec.ResourceClaims = []corev1.PodResourceClaim{{Name: draClaimName, ResourceClaimTemplateName: ptr.To(draTemplateName)}}
	return d
}

// claimLister starts an informer of the bench namespace's ResourceClaims
// (the load generator's own, not audited).
func (env *Env) claimLister(ctx context.Context) (resourcelisters.ResourceClaimNamespaceLister, func(), error) {
	ictx, cancel := context.WithCancel(ctx)
	f := informers.NewSharedInformerFactoryWithOptions(env.Client, 0, informers.WithNamespace(env.Namespace))
	claims := f.Resource().V1().ResourceClaims()
	lister := claims.Lister()
	f.Start(ictx.Done())
	stop := func() { cancel(); f.Shutdown() }
	if !cache.WaitForCacheSync(ictx.Done(), claims.Informer().HasSynced) {
		stop()
		return nil, nil, fmt.Errorf("claim informer: %w", ctx.Err())
	}
	return lister.ResourceClaims(env.Namespace), stop, nil
}

// waitDRARolledOut waits until every Deployment has rolled out and the
// namespace holds exactly one claim per pod, each allocated and reserved.
func (env *Env) waitDRARolledOut(ctx context.Context) error {
	_, deployments, replicas, _ := env.Params.draSizes()
	if err := env.waitDeploymentsRolledOut(ctx, deployments, draDeploymentName, int32(replicas)); err != nil {
		return err
	}
	claims, stop, err := env.claimLister(ctx)
	if err != nil {
		return err
	}
	defer stop()
	want := deployments * replicas
	return env.waitFor(ctx, fmt.Sprintf("%d claims, all reserved", want), func() (bool, string) {
		list, _ := claims.List(labels.Everything())
		reserved := 0
		for _, c := range list {
			if c.Status.Allocation != nil && len(c.Status.ReservedFor) > 0 {
				reserved++
			}
		}
		return len(list) == want && reserved == want, fmt.Sprintf("%d claims, %d reserved", len(list), reserved)
	})
}

func createDRADeployments(ctx context.Context, env *Env) error {
	_, deployments, replicas, _ := env.Params.draSizes()
	err := env.forEach(ctx, deployments, func(ctx context.Context, i int) error {
		name := draDeploymentName(i)
		d, err := env.Client.AppsV1().Deployments(env.Namespace).Create(ctx, newDRADeployment(name, env.Namespace, replicas), metav1.CreateOptions{})
		switch {
		case apierrors.IsAlreadyExists(err):
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
	return env.waitDRARolledOut(ctx)
}

func rollDRADeployments(ctx context.Context, env *Env) error {
	_, deployments, _, _ := env.Params.draSizes()
	patch := fmt.Appendf(nil, `{"spec":{"template":{"spec":{"containers":[{"name":%q,"image":%q}]}}}}`, containerName, imageAfter)
	if err := env.patchDeployments(ctx, deployments, draDeploymentName, types.StrategicMergePatchType, patch); err != nil {
		return err
	}
	return env.waitDRARolledOut(ctx)
}

// taintDRADevices taints the devices of the first pods (by name) NoExecute,
// one DeviceTaintRule each, and waits until those pods are gone and the
// Deployments whole again.
func taintDRADevices(ctx context.Context, env *Env) error {
	_, _, _, taints := env.Params.draSizes()
	claims, stop, err := env.claimLister(ctx)
	if err != nil {
		return err
	}
	defer stop()
	pods, _ := env.Pods.Pods(env.Namespace).List(labels.Everything())
	slices.SortFunc(pods, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	type victim struct {
		uid    types.UID
		result resourcev1.DeviceRequestAllocationResult
	}
	var victims []victim
	for _, p := range pods {
		if len(victims) == taints {
			break
		}
		if p.DeletionTimestamp != nil || len(p.Status.ResourceClaimStatuses) == 0 || p.Status.ResourceClaimStatuses[0].ResourceClaimName == nil {
			continue
		}
		c, err := claims.Get(*p.Status.ResourceClaimStatuses[0].ResourceClaimName)
		if err != nil || c.Status.Allocation == nil || len(c.Status.Allocation.Devices.Results) == 0 {
			continue
		}
		victims = append(victims, victim{uid: p.UID, result: c.Status.Allocation.Devices.Results[0]})
	}
	if len(victims) < taints {
		return fmt.Errorf("only %d of %d pods have an allocated claim to taint", len(victims), taints)
	}
	err = env.forEach(ctx, len(victims), func(ctx context.Context, i int) error {
		r := victims[i].result
		rule := &resourcev1.DeviceTaintRule{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf(draTaintRuleFormat, i)},
			Spec: resourcev1.DeviceTaintRuleSpec{
				DeviceSelector: &resourcev1.DeviceTaintSelector{Driver: ptr.To(r.Driver), Pool: ptr.To(r.Pool), Device: ptr.To(r.Device)},
				Taint:          resourcev1.DeviceTaint{Key: draTaintKey, Value: "true", Effect: resourcev1.DeviceTaintEffectNoExecute},
			},
		}
		if _, err := env.Client.ResourceV1().DeviceTaintRules().Create(ctx, rule, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create DeviceTaintRule %s: %w", rule.Name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	victimUIDs := make(map[types.UID]bool, len(victims))
	for _, v := range victims {
		victimUIDs[v.uid] = true
	}
	err = env.waitFor(ctx, fmt.Sprintf("%d pods on tainted devices evicted", len(victims)), func() (bool, string) {
		left := 0
		pods, _ := env.Pods.Pods(env.Namespace).List(labels.Everything())
		for _, p := range pods {
			if victimUIDs[p.UID] {
				left++
			}
		}
		return left == 0, fmt.Sprintf("%d/%d still there", left, len(victims))
	})
	if err != nil {
		return err
	}
	return env.waitDRARolledOut(ctx)
}

func deleteDRADeployments(ctx context.Context, env *Env) error {
	_, deployments, _, _ := env.Params.draSizes()
	claims, stop, err := env.claimLister(ctx)
	if err != nil {
		return err
	}
	defer stop()
	err = env.forEach(ctx, deployments, func(ctx context.Context, i int) error {
		name := draDeploymentName(i)
		err := env.Client.AppsV1().Deployments(env.Namespace).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete deployment %s: %w", name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return env.waitFor(ctx, "no pod and no claim left in namespace "+env.Namespace, func() (bool, string) {
		pods, _ := env.Pods.Pods(env.Namespace).List(labels.Everything())
		ds, _ := env.Deployments.Deployments(env.Namespace).List(labels.Everything())
		cs, _ := claims.List(labels.Everything())
		return len(pods) == 0 && len(ds) == 0 && len(cs) == 0, fmt.Sprintf("%d pods, %d deployments, %d claims left", len(pods), len(ds), len(cs))
	})
}
