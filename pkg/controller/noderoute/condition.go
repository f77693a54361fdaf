package noderoute

import (
	"context"
	"encoding/json"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller/nodeutil"
)

// Upstream's NetworkUnavailable reasons and messages.
const (
	ReasonRouteCreated   = "RouteCreated"
	ReasonNoRouteCreated = "NoRouteCreated"
	messageCreated       = "RouteController created a route"
	messageNotCreated    = "RouteController failed to create a route"
)

// conditionBackoff is upstream's: five tries from 100ms, full jitter.
var conditionBackoff = wait.Backoff{Steps: 5, Duration: 100 * time.Millisecond, Jitter: 1.0}

// setNetworkCondition sets NetworkUnavailable False (RouteCreated) when
// all the node's routes exist, True (NoRouteCreated) otherwise; a
// condition already saying so is left alone.
func (c *Controller) setNetworkCondition(ctx context.Context, n *v1.Node, created bool) {
	logger := klog.FromContext(ctx)
	cond := v1.NodeCondition{Type: v1.NodeNetworkUnavailable, Status: v1.ConditionTrue, Reason: ReasonNoRouteCreated, Message: messageNotCreated}
	if created {
		cond.Status, cond.Reason, cond.Message = v1.ConditionFalse, ReasonRouteCreated, messageCreated
	}
	if _, cur := nodeutil.GetNodeCondition(&n.Status, v1.NodeNetworkUnavailable); cur != nil && cur.Status == cond.Status && cur.Reason == cond.Reason {
		return
	}
	if !created {
		logger.Info("Node has not all its routes; setting NetworkUnavailable", "node", klog.KObj(n))
	}
	err := retry.RetryOnConflict(conditionBackoff, func() error {
		now := metav1.Now()
		cond.LastTransitionTime, cond.LastHeartbeatTime = now, now
		body, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []v1.NodeCondition{cond}}})
		if err != nil {
			return err
		}
		_, err = c.client.CoreV1().Nodes().Patch(ctx, n.Name, types.StrategicMergePatchType, body, metav1.PatchOptions{}, "status")
		return err
	})
	if err != nil {
		logger.Error(err, "Error updating the NetworkUnavailable condition", "node", klog.KObj(n))
	}
}
