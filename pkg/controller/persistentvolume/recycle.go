package persistentvolume

import (
	"context"
	"errors"
	"fmt"
	"os"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
)

// RecyclerConfig is the --pv-recycler-* flags: the pod templates (nil:
// upstream's default) and the ActiveDeadlineSeconds of recycler pods.
type RecyclerConfig struct {
	HostPathTemplate       *v1.Pod
	HostPathMinimumTimeout int
	HostPathIncrement      int
	NFSTemplate            *v1.Pod
	NFSMinimumTimeout      int
	NFSIncrement           int
}

type recycler struct {
	config RecyclerConfig
	client kubernetes.Interface
}

// defaultRecyclerPod is upstream's recycler pod template.
func defaultRecyclerPod() *v1.Pod {
	timeout := int64(60)
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "pv-recycler-", Namespace: metav1.NamespaceDefault},
		Spec: v1.PodSpec{
			ActiveDeadlineSeconds: &timeout,
			RestartPolicy:         v1.RestartPolicyNever,
			Volumes:               []v1.Volume{{Name: "vol"}},
			Containers: []v1.Container{{
				Name:         "pv-recycler",
				Image:        "registry.k8s.io/build-image/debian-base:bookworm-v1.0.6",
				Command:      []string{"/bin/sh"},
				Args:         []string{"-c", "test -e /scrub && find /scrub -mindepth 1 -delete && test -z \"$(ls -A /scrub)\" || exit 1"},
				VolumeMounts: []v1.VolumeMount{{Name: "vol", MountPath: "/scrub"}},
			}},
		},
	}
}

// loadRecyclerTemplate reads a --pv-recycler-pod-template-filepath-* pod;
// "" means the default template.
func loadRecyclerTemplate(path string) (*v1.Pod, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("failed to read file path %s: %w", path, err)
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("file was empty: %s", path)
	}
	pod := &v1.Pod{}
	if err := runtime.DecodeInto(scheme.Codecs.UniversalDecoder(), data, pod); err != nil {
		return nil, fmt.Errorf("failed decoding file: %w", err)
	}
	if len(pod.Spec.Volumes) < 1 {
		return nil, fmt.Errorf("pod specification (%v): does not contain any volume(s)", path)
	}
	return pod, nil
}

// recyclerTimeout is the larger of the minimum and increment seconds per
// whole GiB of the volume.
func recyclerTimeout(minimum, increment int, pv *v1.PersistentVolume) int64 {
	size := pv.Spec.Capacity[v1.ResourceStorage]
	gi := resource.MustParse("1Gi")
	timeout := (size.Value() / gi.Value()) * int64(increment)
	if timeout < int64(minimum) {
		return int64(minimum)
	}
	return timeout
}

// recyclerPod is the pod that scrubs the volume, named recycler-for-<pv>.
func (r recycler) recyclerPod(pv *v1.PersistentVolume) (*v1.Pod, error) {
	var pod *v1.Pod
	var timeout int64
	switch {
	case pv.Spec.HostPath != nil:
		pod = r.config.HostPathTemplate
		timeout = recyclerTimeout(r.config.HostPathMinimumTimeout, r.config.HostPathIncrement, pv)
	case pv.Spec.NFS != nil:
		pod = r.config.NFSTemplate
		timeout = recyclerTimeout(r.config.NFSMinimumTimeout, r.config.NFSIncrement, pv)
	default:
		return nil, errors.New("no recyclable volume plugin matched")
	}
	if pod == nil {
		pod = defaultRecyclerPod()
	}
	pod = pod.DeepCopy()
	pod.Spec.ActiveDeadlineSeconds = &timeout
	if pv.Spec.HostPath != nil {
		pod.Spec.Volumes[0].VolumeSource = v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: pv.Spec.HostPath.Path}}
	} else {
		pod.Spec.Volumes[0].VolumeSource = v1.VolumeSource{NFS: &v1.NFSVolumeSource{Server: pv.Spec.NFS.Server, Path: pv.Spec.NFS.Path}}
	}
	pod.Name = "recycler-for-" + pv.Name
	pod.GenerateName = ""
	return pod, nil
}

// recycle runs the recycler pod to completion, forwarding its Events, and
// deletes it. A leftover pod of an earlier attempt is deleted and the
// attempt fails (the back-off retries).
func (r recycler) recycle(ctx context.Context, pv *v1.PersistentVolume, record func(eventType, message string)) error {
	pod, err := r.recyclerPod(pv)
	if err != nil {
		return err
	}
	pods := r.client.CoreV1().Pods(pod.Namespace)
	podWatch, err := pods.Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", pod.Name).String()})
	if err != nil {
		return err
	}
	defer podWatch.Stop()
	eventWatch, err := r.client.CoreV1().Events(pod.Namespace).Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("involvedObject.name", pod.Name).String()})
	if err != nil {
		return err
	}
	defer eventWatch.Stop()

	if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		if apierrors.IsAlreadyExists(err) {
			if err := pods.Delete(ctx, pod.Name, metav1.DeleteOptions{}); err != nil {
				return fmt.Errorf("failed to delete old recycler pod %s/%s: %s", pod.Namespace, pod.Name, err)
			}
			return fmt.Errorf("old recycler pod found, will retry later")
		}
		return fmt.Errorf("unexpected error creating recycler pod:  %+v", err)
	}
	err = waitForRecycler(ctx, pod.Name, podWatch.ResultChan(), eventWatch.ResultChan(), record)
	deleteErr := pods.Delete(context.WithoutCancel(ctx), pod.Name, metav1.DeleteOptions{})
	if err != nil {
		return fmt.Errorf("failed to recycle volume: %s", err)
	}
	if deleteErr != nil {
		return fmt.Errorf("failed to delete recycler pod: %s", deleteErr)
	}
	return nil
}

func waitForRecycler(ctx context.Context, name string, podEvents, events <-chan watch.Event, record func(string, string)) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if ev, isEvent := e.Object.(*v1.Event); isEvent && e.Type == watch.Added {
				record(ev.Type, ev.Message)
			}
		case e, ok := <-podEvents:
			if !ok {
				return fmt.Errorf("recycler pod %q watch channel had been closed", name)
			}
			switch e.Type {
			case watch.Deleted:
				return fmt.Errorf("recycler pod was deleted")
			case watch.Error:
				return fmt.Errorf("recycler pod watcher failed")
			}
			pod, isPod := e.Object.(*v1.Pod)
			if !isPod {
				continue
			}
			switch pod.Status.Phase {
			case v1.PodSucceeded:
				return nil
			case v1.PodFailed:
				if pod.Status.Message != "" {
					return errors.New(pod.Status.Message)
				}
				return fmt.Errorf("pod failed, pod.Status.Message unknown")
			}
		}
	}
}
