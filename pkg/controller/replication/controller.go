package replication

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/kcm-dev/kcm/pkg/controller/replicaset"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
	"github.com/kcm-dev/kcm/pkg/features"
)

const (
	// ClientName is the client (and ServiceAccount) identity, and the Event
	// source component, of the replicationcontroller-controller.
	ClientName = "replication-controller"
	// BurstReplicas bounds the pods created or deleted by one sync.
	BurstReplicas = replicaset.BurstReplicas

	queueName = "replicationmanager"
)

// New is the controllermanager.Constructor of the
// replicationcontroller-controller.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	c, err := replicaset.NewController(ctx, replicaset.Config{
		Name:           name,
		EventComponent: ClientName,
		QueueName:      queueName,
		Kind:           v1.SchemeGroupVersion.WithKind("ReplicationController"),
		Resource:       v1.SchemeGroupVersion.WithResource("replicationcontrollers").GroupResource(),
		Client:         client,
		Owners:         newOwners(cc.InformerFactory.Core().V1().ReplicationControllers(), client),
		Pods:           cc.InformerFactory.Core().V1().Pods(),
		Clock:          cc.Clock,
		Workers:        int(cc.Config.ReplicationController.ConcurrentRCSyncs),
		BurstReplicas:  BurstReplicas,
		// The ReplicationController API has no status.terminatingReplicas,
		// and upstream has no consistency check for it.
		TerminatingReplicas: false,
		ConsistencyCheck:    false,
		PodDeletionCost:     features.Enabled(cc.FeatureGate, features.PodDeletionCost),
		StatusSpacing:       cc.Paced(replicaset.StatusSpacing),
	})
	if err != nil {
		return nil, fmt.Errorf("error creating ReplicationController controller: %w", err)
	}
	return c, nil
}
