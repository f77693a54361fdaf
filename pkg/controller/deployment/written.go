package deployment

import (
	apps "k8s.io/api/apps/v1"

	"github.com/kcm-dev/kcm/internal/controller"
)

// writtenDeployments holds the Deployment as the controller's last write
// returned it while the cache lags: a sync a ReplicaSet event wakes right
// after the write starts from it, rather than computing a status the API
// server would refuse with a conflict.
type writtenDeployments = controller.Written[apps.Deployment, *apps.Deployment]
