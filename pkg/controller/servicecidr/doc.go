// Package servicecidr implements the service-cidr-controller (gated by
// MultiCIDRServiceAllocator): every ServiceCIDR gets the finalizer
// networking.k8s.io/service-cidr-finalizer and a Ready condition; a
// ServiceCIDR being deleted keeps its finalizer, with Ready=False reason
// Terminating, while an IPAddress allocated by the kube-apiserver
// (managed-by ipallocator.k8s.io) lies in it and in no other ServiceCIDR,
// and loses it once none does and ten seconds have passed since the
// deletion (so that the apiserver's allocators have seen it go).
//
// The default ServiceCIDR "kubernetes" is created by the kube-apiserver;
// to this controller it is a ServiceCIDR like any other. IPAddresses and
// their parentRefs are the kube-apiserver's: the controller only reads
// them.
//
// Files: controller.go (construction, Run), handlers.go (informer events,
// enqueue only), prefixes.go (which ServiceCIDRs overlap, contain a prefix
// or an address), sync.go (one ServiceCIDR), write.go (finalizer patches,
// the condition through server-side apply).
//
// # Differences from upstream
//
// None visible: upstream's behaviour, with the ten-second grace period and
// the condition's lastTransitionTime on the injected clock.
package servicecidr
