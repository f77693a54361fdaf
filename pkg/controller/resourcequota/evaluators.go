package resourcequota

import (
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	resourcelisters "k8s.io/client-go/listers/resource/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/pkg/controller/resourcequota/evaluator"
)

var (
	podsResource     = schema.GroupResource{Resource: "pods"}
	servicesResource = schema.GroupResource{Resource: "services"}
	pvcsResource     = schema.GroupResource{Resource: "persistentvolumeclaims"}
	claimsResource   = resourceapi.SchemeGroupVersion.WithResource("resourceclaims").GroupResource()
	classesResource  = resourceapi.SchemeGroupVersion.WithResource("deviceclasses").GroupResource()
)

// extendedClaimOwnerIndex indexes extended-resource ResourceClaims by
// "<namespace>/<pod uid>" of their pod.
const extendedClaimOwnerIndex = "resourcequota-extended-claim-owner"

// errNotSynced marks usage left unmeasured because a cache has not synced.
var errNotSynced = errors.New("not yet synced")

// coreEvaluators registers the typed informers the evaluators of pods,
// Services, PersistentVolumeClaims (and ResourceClaims) read, and returns
// the registry holding them and the legacy object counts, and the caches
// the workers wait for.
func (c *Controller) coreEvaluators(cfg Config) (*evaluator.Registry, []cache.InformerSynced, error) {
	core := cfg.Informers.Core().V1()
	pods := core.Pods().Informer()
	services := core.Services().Informer()
	pvcs := core.PersistentVolumeClaims().Informer()
	evs := []evaluator.Evaluator{
		evaluator.NewPods(evaluator.InformerList(pods, podsResource), c.clock, cfg.Features),
		evaluator.NewServices(evaluator.InformerList(services, servicesResource)),
		evaluator.NewPersistentVolumeClaims(evaluator.InformerList(pvcs, pvcsResource), cfg.Features),
	}
	for gr := range evaluator.LegacyCountNames {
		evs = append(evs, evaluator.NewObjectCount(gr, c.count(gr)))
	}
	if cfg.DynamicResourceAllocation {
		e, err := c.claimEvaluator(cfg)
		if err != nil {
			return nil, nil, err
		}
		evs = append(evs, e)
	}
	return evaluator.NewRegistry(evs...), []cache.InformerSynced{pods.HasSynced, services.HasSynced, pvcs.HasSynced}, nil
}

// claimEvaluator registers the ResourceClaim informer (and, for
// DRAExtendedResource, its owner index and the DeviceClass informer).
// The workers do not wait for them: until they synced, claims' usage is
// left unmeasured and reported.
func (c *Controller) claimEvaluator(cfg Config) (evaluator.Evaluator, error) {
	claims := cfg.Informers.Resource().V1().ResourceClaims().Informer()
	c.extraInformers[claimsResource.String()] = claims
	var sources evaluator.ClaimSources
	if cfg.Features.DRAExtendedResource {
		if err := claims.AddIndexers(cache.Indexers{extendedClaimOwnerIndex: evaluator.ExtendedClaimOwnerKeys}); err != nil {
			return nil, fmt.Errorf("adding ResourceClaim index %q: %w", extendedClaimOwnerIndex, err)
		}
		podLister := cfg.Informers.Core().V1().Pods().Lister()
		classes := cfg.Informers.Resource().V1().DeviceClasses()
		c.extraInformers[classesResource.String()] = classes.Informer()
		sources = evaluator.ClaimSources{
			ExtendedResourceOf: func(class string) string { return extendedResourceOf(classes.Lister(), class) },
			HasDeviceClassFor:  func(name corev1.ResourceName) bool { return hasDeviceClassFor(classes.Lister(), name) },
			Pod: func(namespace, name string) (*corev1.Pod, error) {
				return podLister.Pods(namespace).Get(name)
			},
			ExtendedClaimsOf: func(namespace, podUID string) ([]*resourceapi.ResourceClaim, error) {
				items, err := claims.GetIndexer().ByIndex(extendedClaimOwnerIndex, namespace+"/"+podUID)
				if err != nil {
					return nil, err
				}
				out := make([]*resourceapi.ResourceClaim, 0, len(items))
				for _, item := range items {
					if claim, ok := item.(*resourceapi.ResourceClaim); ok {
						out = append(out, claim)
					}
				}
				return out, nil
			},
		}
	}
	return evaluator.NewResourceClaims(evaluator.InformerList(claims, claimsResource), sources, c.clock, cfg.Features), nil
}

// extendedResourceOf is the extended resource name a device class
// provides, or "".
func extendedResourceOf(classes resourcelisters.DeviceClassLister, class string) string {
	dc, err := classes.Get(class)
	if err != nil {
		return ""
	}
	return ptr.Deref(dc.Spec.ExtendedResourceName, "")
}

// hasDeviceClassFor: a device class provides name, as its explicit
// extended resource name or as deviceclass.resource.kubernetes.io/<class>.
func hasDeviceClassFor(classes resourcelisters.DeviceClassLister, name corev1.ResourceName) bool {
	if class, ok := strings.CutPrefix(string(name), resourceapi.ResourceDeviceClassPrefix); ok {
		if _, err := classes.Get(class); err == nil {
			return true
		}
	}
	all, err := classes.List(labels.Everything())
	if err != nil {
		return false
	}
	for _, dc := range all {
		if ptr.Deref(dc.Spec.ExtendedResourceName, "") == string(name) {
			return true
		}
	}
	return false
}

// count counts a namespace's objects of gr in the cache of its monitor.
func (c *Controller) count(gr schema.GroupResource) evaluator.CountFunc {
	return func(namespace string) (int, error) {
		inf, synced, ok := c.monitors.Informer(gr)
		if !ok || !synced {
			return 0, fmt.Errorf("%v %w", gr, errNotSynced)
		}
		items, err := inf.GetIndexer().ByIndex(cache.NamespaceIndex, namespace)
		return len(items), err
	}
}

// builtIn reports whether gr's evaluator is one the controller starts
// with, kept whatever discovery says.
func (c *Controller) builtIn(gr schema.GroupResource) bool {
	switch gr {
	case podsResource, servicesResource, pvcsResource, claimsResource:
		return true
	}
	_, legacy := evaluator.LegacyCountNames[gr]
	return legacy
}

// measurable reports whether the caches gr's evaluator reads have synced
// (those of pods, Services and PersistentVolumeClaims have before any
// sync; an object count's is its monitor's, which a legacy count lacks
// until discovery found its resource).
func (c *Controller) measurable(gr schema.GroupResource) bool {
	switch gr {
	case podsResource, servicesResource, pvcsResource:
		return true
	}
	if inf, ok := c.extraInformers[gr.String()]; ok {
		return inf.HasSynced()
	}
	_, synced, _ := c.monitors.Informer(gr)
	return synced
}
