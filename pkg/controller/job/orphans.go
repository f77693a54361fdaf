package job

import (
	"context"
	"fmt"
	"strings"

	batch "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/internal/controller/labelindex"
)

// Orphan keys: "pod/<namespace>/<name>" for one pod,
// "selector/<namespace>/<selector>" for every pod a (deleted or finished)
// Job's selector matches.
const (
	orphanPodPrefix      = "pod/"
	orphanSelectorPrefix = "selector/"
)

func (c *Controller) enqueueOrphanPod(pod *v1.Pod, backoff bool) {
	key := orphanPodPrefix + pod.Namespace + "/" + pod.Name
	if backoff {
		c.orphans.AddRateLimited(key)
		return
	}
	c.orphans.Add(key)
}

func (c *Controller) enqueueSelector(logger klog.Logger, job *batch.Job) {
	selector, err := metav1.LabelSelectorAsSelector(job.Spec.Selector)
	if err != nil {
		utilruntime.HandleErrorWithLogger(logger, err, "Job has an invalid label selector", "job", klog.KObj(job))
		return
	}
	c.orphans.Add(orphanSelectorPrefix + job.Namespace + "/" + selector.String())
}

// syncOrphan removes the tracking finalizer from the pods an orphan key
// names, unless a running Job still owns them.
func (c *Controller) syncOrphan(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)
	kind, rest, _ := strings.Cut(key, "/")
	namespace, value, ok := strings.Cut(rest, "/")
	if !ok {
		return controller.Permanent(fmt.Errorf("invalid orphan key %q", key))
	}
	switch kind + "/" {
	case orphanPodPrefix:
		pod, err := c.pods.Pods(namespace).Get(value)
		if apierrors.IsNotFound(err) {
			logger.V(4).Info("Orphan pod has been deleted", "pod", klog.KRef(namespace, value))
			return nil
		}
		if err != nil {
			return err
		}
		return c.releaseFinalizer(ctx, pod)
	case orphanSelectorPrefix:
		selector, err := labels.Parse(value)
		if err != nil {
			return controller.Permanent(fmt.Errorf("invalid label selector: %w", err))
		}
		pods, err := labelindex.Select[*v1.Pod](c.podIndexer, namespace, selector)
		if err != nil {
			return err
		}
		for _, pod := range pods {
			if err := c.releaseFinalizer(ctx, pod); err != nil {
				logger.Error(err, "syncing orphan pod failed", "pod", klog.KObj(pod))
				c.enqueueOrphanPod(pod, true)
			}
		}
		return nil
	}
	return controller.Permanent(fmt.Errorf("invalid orphan key %q", key))
}

// releaseFinalizer removes the pod's tracking finalizer unless a Job this
// controller runs still counts on it: pods controlled by something other
// than a batch/v1 Job, by a Job another controller manages or by a Job
// still running keep it.
func (c *Controller) releaseFinalizer(ctx context.Context, pod *v1.Pod) error {
	patch := removeFinalizerPatch(pod)
	if patch == nil {
		return nil
	}
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		if ref.Kind != jobKind.Kind || ref.APIVersion != batch.SchemeGroupVersion.String() {
			return nil
		}
		if job := c.resolveControllerRef(pod.Namespace, ref); job != nil {
			if m := managedByOther(job); m != "" {
				klog.FromContext(ctx).V(2).Info("Skip cleanup of the job finalizer for a pod owned by a job that is managed by an external controller",
					"pod", klog.KObj(pod), "podUID", pod.UID, "jobUID", job.UID, "controllerName", m)
				return nil
			}
			if !isFinished(job) {
				return nil // adopted, or still running
			}
			if c.finalizers.pending(jobKey(job), pod.UID) {
				// The Job's last sync removed it; the informer has not
				// shown that yet (upstream patches again here).
				return nil
			}
		}
	}
	if err := c.podControl.PatchPod(ctx, pod.Namespace, pod.Name, patch); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}
