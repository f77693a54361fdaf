package app

import (
	"context"
	"fmt"
	"sync"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	basecompatibility "k8s.io/component-base/compatibility"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/pkg/controllermanager"
	"github.com/kcm-dev/kcm/pkg/features"
)

// Candidacy is what a process announces in its LeaseCandidate when its
// leader election is coordinated by the apiserver (the
// CoordinatedLeaderElection gate): the apiserver's
// coordinated-leader-election controller makes the candidate with the
// oldest emulation version, then the oldest binary version, then the
// oldest LeaseCandidate, the Lease's holder.
type Candidacy struct {
	// BinaryVersion and EmulationVersion are major.minor.patch, without
	// pre-release or build parts ("1.37.1", "1.37.0").
	BinaryVersion, EmulationVersion string
}

// NewCandidacy returns the candidacy of a component with effective version
// ev (kube-controller-manager's, with its --emulated-version) when the
// CoordinatedLeaderElection gate is on in fg, and nil when it is off.
func NewCandidacy(fg featuregate.FeatureGate, ev basecompatibility.EffectiveVersion) (*Candidacy, error) {
	if !features.Enabled(fg, features.CoordinatedLeaderElection) {
		return nil, nil
	}
	if ev == nil || ev.BinaryVersion() == nil || ev.EmulationVersion() == nil {
		return nil, fmt.Errorf("coordinated leader election: no binary or emulation version")
	}
	return &Candidacy{
		BinaryVersion:    finalVersion(ev.BinaryVersion()),
		EmulationVersion: finalVersion(ev.EmulationVersion()),
	}, nil
}

// finalVersion is v as major.minor.patch, the form upstream announces.
func finalVersion(v *version.Version) string {
	return fmt.Sprintf("%d.%d.%d", v.Major(), v.Minor(), v.Patch())
}

// candidate keeps this process's LeaseCandidate for one Lease: it creates
// it, renews it when the apiserver pings it (and every five minutes), and
// deletes it on a clean shutdown. The LeaseCandidate is named after the
// process's identity and lives in the Lease's namespace.
type candidate struct {
	client    kubernetes.Interface
	namespace string
	name      string

	cancel context.CancelFunc
	done   sync.WaitGroup
}

// startCandidate starts publishing the LeaseCandidate of identity id for
// the Lease namespace/lease with client-go's LeaseCandidate controller, and
// adds upstream's informer-sync check for its informer to health.
func startCandidate(ctx context.Context, client kubernetes.Interface, namespace, lease, id string,
	cd *Candidacy, health *controllermanager.HealthHandler) (*candidate, error) {
	lc, synced, err := leaderelection.NewCandidate(client, namespace, id, lease,
		cd.BinaryVersion, cd.EmulationVersion, coordinationv1.OldestEmulationVersion)
	if err != nil {
		return nil, err
	}
	if health != nil {
		health.AddChecks(healthz.NewInformerSyncHealthz(synced))
	}
	klog.FromContext(ctx).Info("Announcing leader election candidate", "leaseCandidate", klog.KRef(namespace, id),
		"lease", lease, "binaryVersion", cd.BinaryVersion, "emulationVersion", cd.EmulationVersion)
	c := &candidate{client: client, namespace: namespace, name: id}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c.cancel = cancel
	c.done.Go(func() { lc.Run(runCtx) })
	return c, nil
}

// stop stops renewing the LeaseCandidate and deletes it, so that the
// apiserver does not wait for this process's answer before electing
// another holder. It returns once the renewals stopped.
func (c *candidate) stop(ctx context.Context) {
	c.cancel()
	c.done.Wait()
	err := c.client.CoordinationV1beta1().LeaseCandidates(c.namespace).Delete(ctx, c.name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		klog.FromContext(ctx).Error(err, "Could not delete the LeaseCandidate", "leaseCandidate", klog.KRef(c.namespace, c.name))
	}
}
