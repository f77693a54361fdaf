package endpoints

import (
	"math"

	v1 "k8s.io/api/core/v1"
)

const (
	// maxCapacity is the most addresses an Endpoints object holds.
	maxCapacity = 1000
	// truncated is the endpoints.kubernetes.io/over-capacity value of an
	// Endpoints object whose addresses were cut to maxCapacity.
	truncated = "truncated"
)

// capacityAnnotationCorrect reports whether subsets within capacity carry
// no over-capacity annotation; subsets over capacity never count as
// correct (they still have to be truncated).
func capacityAnnotationCorrect(annotations map[string]string, subsets []v1.EndpointSubset) bool {
	n := 0
	for _, ss := range subsets {
		n += len(ss.Addresses) + len(ss.NotReadyAddresses)
	}
	if n > maxCapacity {
		return false
	}
	_, ok := annotations[v1.EndpointsOverCapacity]
	return !ok
}

// truncateSubsets cuts subsets over capacity down to maxCapacity addresses
// and reports whether it did. Ready addresses are kept before not-ready
// ones; what is kept is shared among the subsets in proportion to their
// size, rounded up, so the last subsets may get fewer.
func truncateSubsets(subsets []v1.EndpointSubset) bool {
	totalReady, totalNotReady := 0, 0
	for _, ss := range subsets {
		totalReady += len(ss.Addresses)
		totalNotReady += len(ss.NotReadyAddresses)
	}
	if totalReady+totalNotReady <= maxCapacity {
		return false
	}
	truncateReady := totalReady > maxCapacity
	limit, total := maxCapacity-totalReady, totalNotReady
	if truncateReady {
		limit, total = maxCapacity, totalReady
	}
	left := limit
	for i := range subsets {
		ss := &subsets[i]
		n := len(ss.NotReadyAddresses)
		if truncateReady {
			n = len(ss.Addresses)
		}
		keep := int(math.Ceil(float64(n) / float64(total) * float64(limit)))
		keep = min(keep, left)
		if truncateReady {
			ss.Addresses = firstN(ss.Addresses, keep)
			ss.NotReadyAddresses = []v1.EndpointAddress{}
			left -= len(ss.Addresses)
		} else {
			ss.NotReadyAddresses = firstN(ss.NotReadyAddresses, keep)
			left -= len(ss.NotReadyAddresses)
		}
	}
	return true
}

func firstN(addrs []v1.EndpointAddress, n int) []v1.EndpointAddress {
	if len(addrs) <= n {
		return addrs
	}
	return addrs[:n]
}
