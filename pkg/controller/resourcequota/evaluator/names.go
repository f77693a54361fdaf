package evaluator

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/validation"
)

// isNativeResource: unprefixed names and names under kubernetes.io/.
func isNativeResource(name corev1.ResourceName) bool {
	return !strings.Contains(string(name), "/") ||
		strings.Contains(string(name), corev1.ResourceDefaultNamespacePrefix)
}

// isExtendedResourceName: a name outside kubernetes.io/, not already a
// requests. name, that is still a qualified name with requests. in front.
func isExtendedResourceName(name corev1.ResourceName) bool {
	if isNativeResource(name) || strings.HasPrefix(string(name), corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(corev1.DefaultResourceRequestsPrefix+string(name))) == 0
}

// isDRAExtendedResourceName: an extended resource, or a device class's
// implicit one (deviceclass.resource.kubernetes.io/<class>).
func isDRAExtendedResourceName(name corev1.ResourceName) bool {
	return isExtendedResourceName(name) || strings.HasPrefix(string(name), resourceapi.ResourceDeviceClassPrefix)
}

// requestsDeviceClassPrefix is the quota name prefix of a device class's
// implicit extended resource.
const requestsDeviceClassPrefix = corev1.DefaultResourceRequestsPrefix + resourceapi.ResourceDeviceClassPrefix

// isExtendedResourceNameForQuota: requests.<extended resource> (quota
// does not overcommit extended resources, so only requests count), or
// requests.deviceclass.resource.kubernetes.io/<class>.
func isExtendedResourceNameForQuota(name corev1.ResourceName) bool {
	nonNative := !isNativeResource(name)
	implicit := strings.HasPrefix(string(name), requestsDeviceClassPrefix)
	return (nonNative || implicit) && strings.HasPrefix(string(name), corev1.DefaultResourceRequestsPrefix)
}

// withPrefix prepends prefix to name: hugepages-2Mi → requests.hugepages-2Mi.
func withPrefix(name corev1.ResourceName, prefix string) corev1.ResourceName {
	return corev1.ResourceName(prefix + string(name))
}

// scopeSelectorAsLabelSelector turns a scope selector requirement into a
// label selector over the key <scope name>.
func scopeSelectorAsLabelSelector(ssr corev1.ScopedResourceSelectorRequirement) (labels.Selector, error) {
	var op selection.Operator
	switch ssr.Operator {
	case corev1.ScopeSelectorOpIn:
		op = selection.In
	case corev1.ScopeSelectorOpNotIn:
		op = selection.NotIn
	case corev1.ScopeSelectorOpExists:
		op = selection.Exists
	case corev1.ScopeSelectorOpDoesNotExist:
		op = selection.DoesNotExist
	default:
		return nil, fmt.Errorf("%q is not a valid scope selector operator", ssr.Operator)
	}
	r, err := labels.NewRequirement(string(ssr.ScopeName), op, ssr.Values)
	if err != nil {
		return nil, err
	}
	return labels.NewSelector().Add(*r), nil
}
