package endpointutil

import (
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/kcm-dev/kcm/internal/controller"
)

// WriteSpacing is the least time between two writes of one Service's
// endpoints (its EndpointSlices, or its Endpoints object) that pod changes
// cause, when no batch period is set.
//
// Upstream, with --endpointslice-updates-batch-period and
// --endpoint-updates-batch-period at their default of 0, syncs a Service
// for every pod change and writes whenever the endpoints differ. During a
// rollout of a Service's pods that is one write per pod and, for every
// write, one watch event for each kube-proxy of the cluster. kcm syncs the
// first pod change after a quiet second at once, as upstream, and holds
// the syncs that follow a write until a second after it, so that the pod
// changes of a burst go out in one write. A lone change is not delayed;
// during a burst an endpoint appears at most a second later than
// upstream would write it. The last-change-trigger-time annotation keeps
// the earliest change a write carries, so latency measured from it
// includes the wait. A batch period set on the command line replaces the
// spacing, as upstream's flag delays every pod-caused sync.
const WriteSpacing = time.Second

// NewWriteSpacer returns the spacer of pod-caused syncs: none (period 0)
// when batch is set, else one of spacing.
func NewWriteSpacer(batch, spacing time.Duration) *controller.Spacer {
	if batch > 0 {
		spacing = 0
	}
	return controller.NewSpacer(spacing, clock.RealClock{})
}

// EnqueuePodChange enqueues a Service whose endpoints a pod change may
// alter: after the batch period if one is set, else spaced from the
// Service's last write.
func EnqueuePodChange(q workqueue.TypedDelayingInterface[string], spacer *controller.Spacer, key string, batch time.Duration) {
	if batch > 0 {
		q.AddAfter(key, batch)
		return
	}
	spacer.Add(q, key)
}
