// Package evaluator measures what the objects of a namespace use of a
// ResourceQuota, with the rules of upstream's quota evaluators (v1.37):
//
//   - pods: count/pods always; pods, cpu, memory, ephemeral-storage,
//     requests.* and limits.* of them, hugepages-* and extended resources
//     (requests.<name> only) for pods that are not terminal (Succeeded,
//     Failed) and not past their deletion grace period, from the pod's
//     effective requests and limits (init and sidecar containers, pod-level
//     resources, overhead, in-place resizes); scopes Terminating,
//     NotTerminating, BestEffort, NotBestEffort, PriorityClass and
//     CrossNamespacePodAffinity;
//   - services: count/services, services, services.nodeports,
//     services.loadbalancers;
//   - persistentvolumeclaims: count, persistentvolumeclaims,
//     requests.storage, and both per storage class
//     (<class>.storageclass.storage.k8s.io/…), storage rounded up to whole
//     bytes and raised to status.allocatedResources; scope
//     VolumeAttributesClass;
//   - resourceclaims.resource.k8s.io (DynamicResourceAllocation): count and
//     devices per device class, and the extended resources a pod's
//     implicit claim covers beyond the pod's own requests
//     (DRAExtendedResource);
//   - any other resource: count/<resource>.<group>, plus the legacy names
//     configmaps, secrets, resourcequotas and replicationcontrollers.
//
// The resource-list arithmetic and the scope-aware summing loop are
// k8s.io/apiserver/pkg/quota/v1's, as upstream's controller uses them, so
// quantities come out in the same form.
package evaluator
