package endpointslice

import (
	"context"
	"fmt"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/internal/controller/endpointutil"
)

// reconciler turns a Service's pods into its EndpointSlices.
type reconciler struct {
	client               kubernetes.Interface
	nodes                corelisters.NodeLister
	maxEndpointsPerSlice int32
	tracker              *endpointutil.SliceTracker
	topology             *topologyCache
	metrics              *metricsCache
	recorder             record.EventRecorder
	// manager is the managed-by label value of the slices.
	manager string
	// preferSame accepts PreferSameZone and PreferSameNode.
	preferSame bool
	// spacer learns of every sync that wrote (the controller's).
	spacer *controller.Spacer
}

// portGroup is the desired endpoints of the pods that resolve the
// Service's ports to the same numbers.
type portGroup struct {
	ports     []discovery.EndpointPort
	endpoints endpointSet
}

// reconcile writes the Service's slices for pods over existing (the
// cache's slices of this manager, none being deleted): per address type
// of the Service, then deletes the slices of address types it no longer
// has. Errors are collected; every address type is attempted.
func (r *reconciler) reconcile(ctx context.Context, logger klog.Logger, svc *v1.Service, pods []*v1.Pod, existing []*discovery.EndpointSlice, triggerTime time.Time) error {
	families := addressTypes(logger, svc)
	byType := map[discovery.AddressType][]*discovery.EndpointSlice{}
	var obsolete []*discovery.EndpointSlice
	for _, s := range existing {
		if !containsType(families, s.AddressType) {
			r.topology.removeHints(svc.Namespace+"/"+svc.Name, s.AddressType)
			obsolete = append(obsolete, s)
			continue
		}
		byType[s.AddressType] = append(byType[s.AddressType], s)
	}
	var errs []error
	for _, t := range families {
		if err := r.reconcileAddressType(ctx, logger, svc, pods, byType[t], triggerTime, t); err != nil {
			errs = append(errs, err)
		}
	}
	for _, s := range sortedByName(obsolete) {
		if err := r.client.DiscoveryV1().EndpointSlices(svc.Namespace).Delete(ctx, s.Name, metav1.DeleteOptions{}); err != nil {
			errs = append(errs, fmt.Errorf("error deleting %s EndpointSlice for Service %s/%s: %w", s.Name, svc.Namespace, svc.Name, err))
			continue
		}
		r.tracker.ExpectDeletion(s)
		sliceChanges.WithLabelValues("delete").Inc()
	}
	return utilerrors.NewAggregate(errs)
}

// reconcileAddressType reconciles the slices of one address type: groups
// the pods' endpoints by resolved ports, places each group, keeps a
// placeholder slice when there would be none, sets hints, writes, and
// records the topology Events.
func (r *reconciler) reconcileAddressType(ctx context.Context, logger klog.Logger, svc *v1.Service, pods []*v1.Pod, existing []*discovery.EndpointSlice, triggerTime time.Time, addressType discovery.AddressType) error {
	var errs []error
	var toCreate, toUpdate, toDelete []*discovery.EndpointSlice
	existingByPorts := map[string][]*discovery.EndpointSlice{}
	for _, s := range existing {
		if ownedBy(s, svc) {
			k := portsKey(s.Ports)
			existingByPorts[k] = append(existingByPorts[k], s)
		} else {
			// Another Service of the same name (deleted, recreated).
			toDelete = append(toDelete, s)
		}
	}

	groups, err := r.desiredGroups(logger, svc, pods, addressType, &errs)
	if err != nil {
		return err
	}
	svcMetrics := servicePortMetrics{}
	added, removed := 0, 0
	for _, k := range sortedKeys(groups) {
		g := groups[k]
		n := len(g.endpoints)
		p := r.placeGroup(logger, svc, existingByPorts[k], g.endpoints, g.ports, addressType)
		added += p.added
		removed += p.removed
		svcMetrics[k] = efficiency{endpoints: n, slices: len(existingByPorts[k]) + len(p.create) - len(p.delete)}
		toCreate = append(toCreate, p.create...)
		toUpdate = append(toUpdate, p.update...)
		toDelete = append(toDelete, p.delete...)
	}
	for _, k := range sortedKeys(existingByPorts) {
		if _, ok := groups[k]; !ok {
			toDelete = append(toDelete, sortedByName(existingByPorts[k])...)
		}
	}

	// A Service without endpoints keeps one empty slice.
	if len(existing) == len(toDelete) && len(toCreate) == 0 {
		placeholder := newSlice(logger, svc, []discovery.EndpointPort{}, addressType, r.manager)
		if len(toDelete) == 1 && samePlaceholder(toDelete[0], placeholder) {
			toDelete = nil
		} else {
			toCreate = append(toCreate, placeholder)
		}
		svcMetrics[portsKey(placeholder.Ports)] = efficiency{endpoints: 0, slices: 1}
	}
	endpointsAddedPerSync.WithLabelValues().Observe(float64(added))
	endpointsRemovedPerSync.WithLabelValues().Observe(float64(removed))
	nn := types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}
	r.metrics.updateService(nn, svcMetrics)

	si := &sliceSet{
		serviceKey:  svc.Namespace + "/" + svc.Name,
		addressType: addressType,
		create:      toCreate,
		update:      toUpdate,
		unchanged:   unchangedSlices(existing, toUpdate, toDelete),
	}
	events := r.reconcileHints(logger, svc, si, existing, toDelete)
	if err := r.finalize(ctx, svc, si.create, si.update, toDelete, triggerTime); err != nil {
		errs = append(errs, err)
	}
	for _, e := range events {
		r.recorder.Event(svc, e.eventType, e.reason, e.message)
	}
	return utilerrors.NewAggregate(errs)
}

// desiredGroups builds the desired endpoints of addressType per port
// group. A pod whose node is not in the cache is left out with an error
// (the Service is retried), unless the Service publishes not-ready
// addresses.
func (r *reconciler) desiredGroups(logger klog.Logger, svc *v1.Service, pods []*v1.Pod, addressType discovery.AddressType, errs *[]error) (map[string]*portGroup, error) {
	groups := map[string]*portGroup{}
	for _, pod := range pods {
		if !endpointutil.ShouldPodBeInEndpoints(pod, true) {
			continue
		}
		ports := endpointPorts(logger, svc, pod)
		k := portsKey(ports)
		g := groups[k]
		if g == nil {
			g = &portGroup{ports: sortPortsByHash(ports), endpoints: endpointSet{}}
			groups[k] = g
		}
		node, err := r.nodes.Get(pod.Spec.NodeName)
		if err != nil {
			if !apierrors.IsNotFound(err) {
				return nil, err
			}
			if !svc.Spec.PublishNotReadyAddresses {
				logger.Info("skipping Pod for Service, Node not found", "pod", klog.KObj(pod), "service", klog.KObj(svc), "node", klog.KRef("", pod.Spec.NodeName))
				*errs = append(*errs, fmt.Errorf("skipping Pod %s for Service %s/%s: Node %s Not Found", pod.Name, svc.Namespace, svc.Name, pod.Spec.NodeName))
				continue
			}
		}
		ep := podToEndpoint(pod, node, svc, addressType)
		if len(ep.Addresses) > 0 {
			g.endpoints[keyOf(&ep)] = &ep
		}
	}
	return groups, nil
}

// reconcileHints sets or clears the slices' hints for topology-mode Auto
// or spec.trafficDistribution (the annotation wins) and returns the
// Events to record.
func (r *reconciler) reconcileHints(logger klog.Logger, svc *v1.Service, si *sliceSet, existing, toDelete []*discovery.EndpointSlice) []event {
	nn := types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}
	auto := hintsEnabled(svc.Annotations)
	useTraffic := r.validTrafficDistribution(svc.Spec.TrafficDistribution) && !auto
	var events []event
	if auto {
		events = r.topology.addHints(logger, si)
	} else {
		if r.topology.hasPopulatedHints(si.serviceKey) {
			logger.Info("TopologyAwareHints annotation has changed, removing hints", "serviceKey", si.serviceKey, "addressType", si.addressType)
			events = append(events, event{v1.EventTypeWarning, reasonHintsDisabled, withAddressType(msgHintsDisabled, si.addressType)})
		}
		r.topology.removeHints(si.serviceKey, si.addressType)
		if !useTraffic {
			si.removeHints()
		}
	}
	if !useTraffic {
		r.metrics.updateTrafficDistribution(nn, nil)
		return events
	}
	r.metrics.updateTrafficDistribution(nn, svc.Spec.TrafficDistribution)
	// Upstream recomputes the unchanged slices from the existing ones here.
	si.unchanged = unchangedSlices(existing, si.update, toDelete)
	trafficHintsFor(svc.Spec.TrafficDistribution).reconcile(si)
	return events
}

// finalize writes: a create is turned into an update of a slice to be
// deleted (same address type, owned by the Service) where it can be, then
// creates (not while the Service is being deleted, which would race the
// garbage collector), updates and deletes, each recorded in the tracker.
func (r *reconciler) finalize(ctx context.Context, svc *v1.Service, toCreate, toUpdate, toDelete []*discovery.EndpointSlice, triggerTime time.Time) error {
	for i := 0; i < len(toDelete) && len(toCreate) > 0; {
		del, s := toDelete[i], toCreate[len(toCreate)-1]
		if del.AddressType != s.AddressType || !ownedBy(del, svc) {
			i++
			continue
		}
		s.Name = del.Name
		toCreate = toCreate[:len(toCreate)-1]
		toUpdate = append(toUpdate, s)
		toDelete = append(toDelete[:i:i], toDelete[i+1:]...)
	}
	slices := r.client.DiscoveryV1().EndpointSlices(svc.Namespace)
	if svc.DeletionTimestamp == nil {
		for _, s := range toCreate {
			setTriggerTime(s, triggerTime)
			created, err := slices.Create(ctx, s, metav1.CreateOptions{})
			if err != nil {
				if apierrors.HasStatusCause(err, v1.NamespaceTerminatingCause) {
					return nil
				}
				return fmt.Errorf("failed to create EndpointSlice for Service %s/%s: %v", svc.Namespace, svc.Name, err)
			}
			r.tracker.Update(created)
			sliceChanges.WithLabelValues("create").Inc()
		}
	}
	for _, s := range toUpdate {
		setTriggerTime(s, triggerTime)
		updated, err := slices.Update(ctx, s, metav1.UpdateOptions{})
		if err != nil {
			return fmt.Errorf("failed to update %s EndpointSlice for Service %s/%s: %v", s.Name, svc.Namespace, svc.Name, err)
		}
		r.tracker.Update(updated)
		sliceChanges.WithLabelValues("update").Inc()
	}
	for _, s := range toDelete {
		if err := slices.Delete(ctx, s.Name, metav1.DeleteOptions{}); err != nil {
			return fmt.Errorf("failed to delete %s EndpointSlice for Service %s/%s: %v", s.Name, svc.Namespace, svc.Name, err)
		}
		r.tracker.ExpectDeletion(s)
		sliceChanges.WithLabelValues("delete").Inc()
	}
	topology, traffic := "Disabled", ""
	if hintsEnabled(svc.Annotations) {
		topology = "Auto"
	} else if r.validTrafficDistribution(svc.Spec.TrafficDistribution) {
		traffic = *svc.Spec.TrafficDistribution
	}
	changed := len(toCreate) + len(toUpdate) + len(toDelete)
	slicesChangedPerSync.WithLabelValues(topology, traffic).Observe(float64(changed))
	if changed > 0 {
		r.spacer.Wrote(svc.Namespace + "/" + svc.Name)
	}
	return nil
}

// setTriggerTime sets or, for the zero time, removes the
// last-change-trigger-time annotation.
func setTriggerTime(s *discovery.EndpointSlice, t time.Time) {
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	if t.IsZero() {
		delete(s.Annotations, v1.EndpointsLastChangeTriggerTime)
		return
	}
	s.Annotations[v1.EndpointsLastChangeTriggerTime] = t.UTC().Format(time.RFC3339Nano)
}

// samePlaceholder reports whether an existing slice is the placeholder
// the controller would create, as upstream compares them: namespace,
// labels (a missing label equals an empty one), address type, no
// endpoints and no ports. Names, annotations and owners are not compared.
func samePlaceholder(s, placeholder *discovery.EndpointSlice) bool {
	if s.Namespace != placeholder.Namespace || s.AddressType != placeholder.AddressType ||
		len(s.Endpoints) != 0 || len(s.Ports) != 0 {
		return false
	}
	for k, v := range s.Labels {
		if placeholder.Labels[k] != v {
			return false
		}
	}
	for k, v := range placeholder.Labels {
		if s.Labels[k] != v {
			return false
		}
	}
	return true
}

// unchangedSlices returns the existing slices neither updated nor deleted.
func unchangedSlices(existing, toUpdate, toDelete []*discovery.EndpointSlice) []*discovery.EndpointSlice {
	changed := map[string]bool{}
	for _, s := range toUpdate {
		changed[s.Name] = true
	}
	for _, s := range toDelete {
		changed[s.Name] = true
	}
	var out []*discovery.EndpointSlice
	for _, s := range existing {
		if !changed[s.Name] {
			out = append(out, s)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
