package endpointslicemirroring

import (
	"maps"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kcm-dev/kcm/internal/controller/podcontrol"
)

var endpointsKind = v1.SchemeGroupVersion.WithKind("Endpoints")

// droppedAnnotations are the Endpoints annotations a mirrored slice does
// not get: the trigger time is the endpoints-controller's, and kubectl's
// last-applied configuration describes the Endpoints, not the slice.
var droppedAnnotations = []string{v1.EndpointsLastChangeTriggerTime, v1.LastAppliedConfigAnnotation}

// newSlice returns the slice mirroring ep for one group, without
// endpoints: named name, or, when name is empty, generated from the
// Endpoints' name. It carries every label of ep (service-name and
// managed-by set to the controller's values), every annotation but the
// dropped ones, and ep as its controller owner.
func newSlice(ep *v1.Endpoints, ports []discovery.EndpointPort, addrType discovery.AddressType, name string) *discovery.EndpointSlice {
	s := &discovery.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       ep.Namespace,
			Labels:          wantedLabels(ep),
			Annotations:     wantedAnnotations(ep),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ep, endpointsKind)},
		},
		AddressType: addrType,
		Ports:       ports,
		Endpoints:   []discovery.Endpoint{},
	}
	if name == "" {
		s.GenerateName = podcontrol.GenerateNamePrefix(ep.Name)
	} else {
		s.Name = name
	}
	return s
}

func wantedLabels(ep *v1.Endpoints) map[string]string {
	labels := make(map[string]string, len(ep.Labels)+2)
	maps.Copy(labels, ep.Labels)
	labels[discovery.LabelServiceName] = ep.Name
	labels[discovery.LabelManagedBy] = ControllerName
	return labels
}

func wantedAnnotations(ep *v1.Endpoints) map[string]string {
	annotations := maps.Clone(ep.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	for _, k := range droppedAnnotations {
		delete(annotations, k)
	}
	return annotations
}
