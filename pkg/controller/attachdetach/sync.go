package attachdetach

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	nodeutil "k8s.io/component-helpers/node/util"
	"k8s.io/klog/v2"
)

// Upstream's event reasons (pkg/kubelet/events).
const (
	reasonSuccessfulAttach = "SuccessfulAttachVolume"
	reasonFailedAttach     = "FailedAttachVolume"
)

// nodeSync is one sync of one node: detaches first (so that a volume moving
// between nodes is freed), then attaches, then the node's status.
type nodeSync struct {
	c    *Controller
	name string
	node *v1.Node // nil when the node is gone
	ns   *nodeState
	now  time.Time
	next time.Duration // the soonest the node must be synced again
}

func (s *nodeSync) after(d time.Duration) {
	if d <= 0 {
		d = time.Millisecond
	}
	if s.next == 0 || d < s.next {
		s.next = d
	}
}

func (c *Controller) syncNode(ctx context.Context, name string) error {
	logger := klog.FromContext(ctx)
	node, err := c.nodeLister.Get(name)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if apierrors.IsNotFound(err) {
		node = nil
	}
	ns := c.state.node(name)
	if node != nil {
		if _, ok := node.Annotations[managedAnnotation]; ok {
			ns.managed = true
		}
		if ns.nodeUID != node.UID {
			// A (re)created node: its volumesAttached may have been wiped.
			ns.nodeUID, ns.statusNeeded, ns.written = node.UID, len(ns.volumes) > 0, nil
		}
		ns.nodeRV, ns.inUse = node.ResourceVersion, node.Status.VolumesInUse
	}
	desired := map[v1.UniqueVolumeName]*wanted{}
	if ns.managed {
		if desired, err = c.desiredOn(logger, name); err != nil {
			return err
		}
	}
	s := &nodeSync{c: c, name: name, node: node, ns: ns, now: c.clock.Now()}
	var errs []error
	for _, vn := range sortedNames(ns.volumes) {
		if _, ok := desired[vn]; !ok {
			errs = append(errs, s.detach(ctx, vn, ns.volumes[vn]))
		}
	}
	for vn := range ns.multiAttachReported {
		if _, ok := desired[vn]; !ok {
			ns.multiAttachReported.Delete(vn)
		}
	}
	for _, vn := range sortedNames(desired) {
		errs = append(errs, s.attach(ctx, vn, desired[vn]))
	}
	errs = append(errs, s.updateStatus(ctx))
	if s.next > 0 {
		c.queue.AddAfter(name, s.next)
	}
	if node == nil && len(desired) == 0 && len(ns.volumes) == 0 {
		delete(c.state.nodes, name)
	}
	c.counts.record(name, ns, desired)
	return errors.Join(errs...)
}

// finishDetach checks a running detach; it reports whether the attachment
// is gone (the VolumeAttachment was deleted).
func (s *nodeSync) finishDetach(ctx context.Context, vn v1.UniqueVolumeName, a *attachment) bool {
	logger := klog.FromContext(ctx)
	va, err := s.c.vaLister.Get(attachmentName(a.handle, a.driver, s.name))
	switch {
	case apierrors.IsNotFound(err):
		logger.Info("DetachVolume.Detach succeeded", "volume", vn, "node", klog.KRef("", s.name))
		s.observe(a, opNameDetach, a.opStarted, nil)
		s.forget(vn)
		return true
	case err != nil:
		logger.Info("DetachVolume.Detach failed", "volume", vn, "node", klog.KRef("", s.name), "err", err)
		s.observe(a, opNameDetach, a.opStarted, err)
		a.failed(s.now)
		s.after(a.backoff)
	case va.Status.DetachError != nil:
		logger.Info("DetachVolume.Detach failed", "volume", vn, "node", klog.KRef("", s.name), "err", va.Status.DetachError.Message)
		s.observe(a, opNameDetach, a.opStarted, errors.New(va.Status.DetachError.Message))
		a.failed(s.now)
		s.after(a.backoff)
	case s.now.Sub(a.opStarted) >= opTimeout:
		logger.Info("DetachVolume.Detach failed", "volume", vn, "node", klog.KRef("", s.name),
			"err", fmt.Sprintf("timed out waiting for external-attacher of unknown CSI driver to detach volume %s", a.handle))
		s.observe(a, opNameDetach, a.opStarted, errors.New("timed out"))
		a.failed(s.now)
		s.after(a.backoff)
	default:
		s.after(opTimeout - s.now.Sub(a.opStarted))
	}
	return false
}

// forget drops a detached volume and wakes the nodes waiting for it.
func (s *nodeSync) forget(vn v1.UniqueVolumeName) {
	if a := s.ns.volumes[vn]; a != nil && a.reported {
		s.ns.statusNeeded = true
	}
	delete(s.ns.volumes, vn)
	for n := range s.c.state.waiters[vn] {
		s.c.queue.Add(n)
	}
	delete(s.c.state.waiters, vn)
}

// detach moves a volume no pod on the node needs towards detached.
func (s *nodeSync) detach(ctx context.Context, vn v1.UniqueVolumeName, a *attachment) error {
	logger := klog.FromContext(ctx)
	switch {
	case a.foreign:
		return nil
	case a.op == opDetach:
		s.finishDetach(ctx, vn, a)
		return nil
	case a.op == opAttach:
		// No pod wants it any more: stop waiting for the attacher and
		// detach what may have been attached.
		a.op, a.opPods, a.inASW = opNone, nil, true
	case !a.inASW:
		delete(s.ns.volumes, vn)
		return nil
	}
	if s.now.Before(a.retryAt) {
		s.after(a.retryAt.Sub(s.now))
		return nil
	}
	if a.detachRequested.IsZero() {
		a.detachRequested = s.now
	}
	elapsed := s.now.Sub(a.detachRequested)
	expired := elapsed > s.c.maxWaitForUnmount
	forceOnTimeout := expired && !s.c.disableForceDetachOnTimeout
	healthy := s.node != nil && nodeReady(s.node)
	outOfService := s.node != nil && slices.ContainsFunc(s.node.Spec.Taints, func(t v1.Taint) bool { return t.Key == v1.TaintNodeOutOfService })
	if s.ns.mounted(vn, a) && !(forceOnTimeout && !healthy) && !outOfService {
		logger.V(5).Info("Cannot detach volume because it is still mounted", "node", klog.KRef("", s.name), "volume", vn)
		if !expired {
			s.after(s.c.maxWaitForUnmount - elapsed + time.Millisecond)
		}
		return nil
	}
	// The node must stop reporting the volume before it is detached.
	if a.reported {
		a.reported, s.ns.statusNeeded = false, true
	}
	if err := s.updateStatus(ctx); err != nil {
		a.reported, s.ns.statusNeeded = true, true
		return err
	}
	if !forceOnTimeout && !outOfService {
		if err := s.verifySafeToDetach(ctx, vn); err != nil {
			logger.Info("DetachVolume failed", "volume", vn, "node", klog.KRef("", s.name), "err", err)
			s.observe(a, opNameDetach, s.now, err)
			a.failed(s.now)
			s.after(a.backoff)
			return nil
		}
	} else {
		logger.Info("Force detaching volume", "volume", vn, "node", klog.KRef("", s.name),
			"maxWaitForUnmountExpired", forceOnTimeout, "outOfService", outOfService)
		reason := forceDetachReasonOutOfService
		if forceOnTimeout {
			reason = forceDetachReasonTimeout
		}
		forcedDetaches.WithLabelValues(reason).Inc()
	}
	err := s.c.client.StorageV1().VolumeAttachments().Delete(ctx, attachmentName(a.handle, a.driver, s.name), metav1.DeleteOptions{})
	switch {
	case apierrors.IsNotFound(err):
		logger.Info("DetachVolume.Detach succeeded", "volume", vn, "node", klog.KRef("", s.name))
		s.observe(a, opNameDetach, s.now, nil)
		s.forget(vn)
	case err != nil:
		logger.Info("DetachVolume.Detach failed", "volume", vn, "node", klog.KRef("", s.name), "err", err)
		s.observe(a, opNameDetach, s.now, err)
		a.failed(s.now)
		s.after(a.backoff)
	default:
		logger.Info("attacherDetacher.DetachVolume started", "volume", vn, "node", klog.KRef("", s.name))
		a.op, a.opStarted = opDetach, s.now
		s.after(opTimeout)
	}
	return nil
}

// verifySafeToDetach reads the node live, as upstream does: a volume the
// kubelet still lists in volumesInUse is not detached.
func (s *nodeSync) verifySafeToDetach(ctx context.Context, vn v1.UniqueVolumeName) error {
	node, err := s.c.client.CoreV1().Nodes().Get(ctx, s.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("fetching node: %w", err)
	}
	if slices.Contains(node.Status.VolumesInUse, vn) {
		return errors.New("volume is still in use by node, according to Node status")
	}
	return nil
}

// attach moves a volume pods on the node need towards attached.
func (s *nodeSync) attach(ctx context.Context, vn v1.UniqueVolumeName, w *wanted) error {
	a := s.ns.volumes[vn]
	if a != nil && a.op == opDetach {
		// Upstream lets a running detach finish before attaching again.
		if !s.finishDetach(ctx, vn, a) {
			return nil
		}
		a = nil
	}
	if a != nil && a.confirmed {
		a.fromWanted(w)
		a.detachRequested = time.Time{}
		return nil
	}
	if !w.multiAttach && (a == nil || a.op != opAttach) {
		if others := s.c.state.attachedElsewhere(vn, s.name); len(others) > 0 {
			if !s.ns.multiAttachReported.Has(vn) {
				s.c.reportMultiAttach(ctx, w, s.name, others)
				s.ns.multiAttachReported.Insert(vn)
			}
			if s.c.state.waiters[vn] == nil {
				s.c.state.waiters[vn] = sets.New[string]()
			}
			s.c.state.waiters[vn].Insert(s.name)
			return nil
		}
	}
	if a == nil {
		a = &attachment{}
		s.ns.volumes[vn] = a
	}
	a.fromWanted(w)
	if a.op != opAttach {
		if s.now.Before(a.retryAt) {
			s.after(a.retryAt.Sub(s.now))
			return nil
		}
		if err := s.startAttach(ctx, a, w); err != nil {
			s.attachFailed(ctx, vn, a, fmt.Errorf("kubernetes.io/csi: attacher.Attach failed: %w", err))
			return nil
		}
	}
	va, err := s.c.vaLister.Get(attachmentName(a.handle, a.driver, s.name))
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	switch {
	case va == nil || err != nil:
		// Not in the informer yet (or deleted meanwhile): keep waiting.
	case va.DeletionTimestamp != nil:
		s.attachFailed(ctx, vn, a, errors.New("volume attachment is being deleted"))
		return nil
	case va.Status.Attached:
		s.attached(ctx, vn, a)
		return nil
	case va.Status.AttachError != nil:
		s.attachFailed(ctx, vn, a, errors.New(va.Status.AttachError.Message))
		return nil
	}
	if elapsed := s.now.Sub(a.opStarted); elapsed >= opTimeout {
		s.attachFailed(ctx, vn, a, fmt.Errorf("timed out waiting for external-attacher of %v CSI driver to attach volume %v", a.driver, a.handle))
	} else {
		s.after(opTimeout - elapsed)
	}
	return nil
}

// startAttach starts an attach: the VolumeAttachment is created unless the
// informer has it.
func (s *nodeSync) startAttach(ctx context.Context, a *attachment, w *wanted) error {
	a.op, a.opStarted, a.opPods = opAttach, s.now, w.pods
	name := attachmentName(a.handle, a.driver, s.name)
	if _, err := s.c.vaLister.Get(name); err == nil {
		return nil
	} else if !apierrors.IsNotFound(err) {
		return fmt.Errorf("failed to get volume attachment from lister: %w", err)
	}
	pvName := w.pvName
	va := &storagev1.VolumeAttachment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: storagev1.VolumeAttachmentSpec{
			NodeName: s.name,
			Attacher: a.driver,
			Source:   storagev1.VolumeAttachmentSource{PersistentVolumeName: &pvName},
		},
	}
	_, err := s.c.client.StorageV1().VolumeAttachments().Create(ctx, va, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	klog.FromContext(ctx).V(2).Info("attacherDetacher.AttachVolume started", "volume", klog.KObj(va), "node", klog.KRef("", s.name))
	return nil
}

// attached completes an attach: the volume is reported in the node's status
// and every pod it was attached for gets upstream's Event.
func (s *nodeSync) attached(ctx context.Context, vn v1.UniqueVolumeName, a *attachment) {
	if a.op == opAttach {
		s.observe(a, opNameAttach, a.opStarted, nil)
	}
	if !a.inASW {
		a.mountedUntilRV = s.ns.nodeRV
	}
	a.inASW, a.confirmed, a.op, a.backoff, a.retryAt, a.detachRequested = true, true, opNone, 0, time.Time{}, time.Time{}
	if !a.reported {
		a.reported, s.ns.statusNeeded = true, true
	}
	msg := fmt.Sprintf("AttachVolume.Attach succeeded for volume %q ", a.specName)
	for _, pod := range a.opPods {
		s.c.recorder.Event(pod, v1.EventTypeNormal, reasonSuccessfulAttach, msg)
	}
	a.opPods = nil
	klog.FromContext(ctx).Info("AttachVolume.Attach succeeded", "volume", vn, "node", klog.KRef("", s.name))
}

func (s *nodeSync) attachFailed(ctx context.Context, vn v1.UniqueVolumeName, a *attachment, err error) {
	if !a.inASW {
		a.mountedUntilRV = s.ns.nodeRV
	}
	pods := a.opPods
	if a.op == opAttach {
		s.observe(a, opNameAttach, a.opStarted, err)
	}
	a.failed(s.now)
	s.after(a.backoff)
	msg := fmt.Sprintf("AttachVolume.Attach failed for volume %q : %v", a.specName, err)
	for _, pod := range pods {
		s.c.recorder.Event(pod, v1.EventTypeWarning, reasonFailedAttach, msg)
	}
	klog.FromContext(ctx).Info("AttachVolume.Attach failed", "volume", vn, "node", klog.KRef("", s.name), "err", err)
}

// reportMultiAttach tells the pods waiting for an exclusive volume which pods
// hold it on other nodes, naming only pods of their own namespace.
func (c *Controller) reportMultiAttach(ctx context.Context, w *wanted, node string, others []string) {
	var holders []*v1.Pod
	for _, n := range others {
		desired, err := c.desiredOn(klog.FromContext(ctx), n)
		if err != nil {
			continue
		}
		if ow := desired[w.name]; ow != nil {
			holders = append(holders, ow.pods...)
		}
	}
	if len(holders) == 0 {
		msg := fmt.Sprintf("Waiting for detach for volume %q Volume is already exclusively attached to one node, waiting on detach before it can be attached to another node", w.specName)
		for _, pod := range w.pods {
			c.recorder.Event(pod, v1.EventTypeWarning, reasonFailedAttach, msg)
		}
		return
	}
	for _, pod := range w.pods {
		var local []string
		otherNS := 0
		for _, h := range holders {
			if h.Namespace == pod.Namespace {
				local = append(local, h.Name)
			} else {
				otherNS++
			}
		}
		var msg string
		switch {
		case len(local) > 0 && otherNS > 0:
			msg = fmt.Sprintf("Volume is already used by pod(s) %s and %d pod(s) in different namespaces", strings.Join(local, ", "), otherNS)
		case len(local) > 0:
			msg = fmt.Sprintf("Volume is already used by pod(s) %s", strings.Join(local, ", "))
		default:
			msg = fmt.Sprintf("Volume is already used by %d pod(s) in different namespaces", otherNS)
		}
		c.recorder.Event(pod, v1.EventTypeWarning, reasonFailedAttach, fmt.Sprintf("Waiting for detach for volume %q %s", w.specName, msg))
	}
}

// updateStatus writes the node's volumesAttached when the reported set
// changed and differs from what the node shows.
func (s *nodeSync) updateStatus(ctx context.Context) error {
	ns := s.ns
	if !ns.statusNeeded {
		return nil
	}
	if s.node == nil {
		ns.statusNeeded = false
		return nil
	}
	want := ns.reportedVolumes()
	have := slices.Clone(s.node.Status.VolumesAttached)
	sort.Slice(have, func(i, j int) bool { return have[i].Name < have[j].Name })
	if equalAttached(have, want) && (ns.written == nil || equalAttached(ns.written, want)) {
		ns.statusNeeded = false
		return nil
	}
	updated := s.node.DeepCopy()
	updated.Status.VolumesAttached = want
	_, patch, err := nodeutil.PatchNodeStatus(s.c.client.CoreV1(), types.NodeName(s.name), s.node, updated)
	if apierrors.IsNotFound(err) {
		ns.statusNeeded = false
		return nil
	}
	if err != nil {
		return err
	}
	klog.FromContext(ctx).V(4).Info("Updating status for node succeeded", "node", klog.KRef("", s.name), "patchBytes", string(patch), "attachedVolumes", want)
	ns.statusNeeded, ns.written = false, want
	if ns.written == nil {
		ns.written = []v1.AttachedVolume{}
	}
	return nil
}

func nodeReady(node *v1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == v1.NodeReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}
