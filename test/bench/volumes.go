package bench

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
)

// ScenarioVolumes is the volumes phase set: benchVolumes PersistentVolumes
// created, as many claims bound to them, then the claims deleted and the
// volumes reclaimed (Delete: the controller manager's hostPath deleter
// removes each volume, whose path under /tmp does not exist).
const ScenarioVolumes = "volumes"

const (
	benchVolumes      = 500
	volumeNameFormat  = "bench-pv-%04d"
	claimNameFormat   = "bench-pvc-%04d"
	volumeLabel       = "bench.kcm.dev/volume"
	benchHostPathRoot = "/tmp/kcm-bench-pv-absent"
)

func volumesScenario() Scenario {
	static := func(n ...string) func([]string) []string { return func([]string) []string { return n } }
	return Scenario{
		Name:          ScenarioVolumes,
		SetupRequires: []string{names.ServiceAccount},
		Setup: func(ctx context.Context, env *Env) error {
			return setupNamespaceAndNodes(ctx, env, 0)
		},
		Phases: []Phase{
			{Name: "volumes", Description: fmt.Sprintf("create %d PersistentVolumes (hostPath, Delete, no class), wait until all are Available", benchVolumes),
				Requires: static(names.PersistentVolumeBinder), Run: createVolumes},
			{Name: "bind", Description: fmt.Sprintf("create %d claims that fit them, wait until every claim and volume is Bound", benchVolumes),
				Requires: static(names.PersistentVolumeBinder), Run: bindClaims},
			{Name: "reclaim", Description: "delete every claim, wait until every volume is released and deleted",
				Requires: static(names.PersistentVolumeBinder, names.PersistentVolumeClaimProtection, names.PersistentVolumeProtection), Run: reclaimVolumes},
		},
	}
}

// volumeListers starts informers of the benchmark's volumes and the bench
// namespace's claims (the load generator's own, not audited).
func (env *Env) volumeListers(ctx context.Context) (corelisters.PersistentVolumeLister, corelisters.PersistentVolumeClaimLister, func(), error) {
	ictx, cancel := context.WithCancel(ctx)
	f := informers.NewSharedInformerFactoryWithOptions(env.Client, 0, informers.WithNamespace(env.Namespace))
	pvs := f.Core().V1().PersistentVolumes()
	pvcs := f.Core().V1().PersistentVolumeClaims()
	pvLister, pvcLister := pvs.Lister(), pvcs.Lister()
	f.Start(ictx.Done())
	stop := func() { cancel(); f.Shutdown() }
	if !cache.WaitForCacheSync(ictx.Done(), pvs.Informer().HasSynced, pvcs.Informer().HasSynced) {
		stop()
		return nil, nil, nil, fmt.Errorf("volume informers: %w", ctx.Err())
	}
	return pvLister, pvcLister, stop, nil
}

var volumeSelector = labels.SelectorFromSet(labels.Set{volumeLabel: "true"})

func createVolumes(ctx context.Context, env *Env) error {
	pvs, _, stop, err := env.volumeListers(ctx)
	if err != nil {
		return err
	}
	defer stop()
	err = env.forEach(ctx, benchVolumes, func(ctx context.Context, i int) error {
		name := fmt.Sprintf(volumeNameFormat, i)
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{volumeLabel: "true"}},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
				AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
				PersistentVolumeSource: corev1.PersistentVolumeSource{
					HostPath: &corev1.HostPathVolumeSource{Path: fmt.Sprintf("%s/%04d", benchHostPathRoot, i)},
				},
			},
		}
		if _, err := env.Client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create volume %s: %w", name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return env.waitFor(ctx, fmt.Sprintf("%d volumes Available", benchVolumes), func() (bool, string) {
		n := countVolumes(pvs, corev1.VolumeAvailable)
		return n == benchVolumes, fmt.Sprintf("%d/%d Available", n, benchVolumes)
	})
}

func countVolumes(pvs corelisters.PersistentVolumeLister, phase corev1.PersistentVolumePhase) int {
	list, _ := pvs.List(volumeSelector)
	n := 0
	for _, pv := range list {
		if pv.Status.Phase == phase {
			n++
		}
	}
	return n
}

func bindClaims(ctx context.Context, env *Env) error {
	pvs, pvcs, stop, err := env.volumeListers(ctx)
	if err != nil {
		return err
	}
	defer stop()
	err = env.forEach(ctx, benchVolumes, func(ctx context.Context, i int) error {
		name := fmt.Sprintf(claimNameFormat, i)
		claim := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
				StorageClassName: ptr.To(""),
			},
		}
		if _, err := env.Client.CoreV1().PersistentVolumeClaims(env.Namespace).Create(ctx, claim, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create claim %s: %w", name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return env.waitFor(ctx, fmt.Sprintf("%d claims and volumes Bound", benchVolumes), func() (bool, string) {
		list, _ := pvcs.PersistentVolumeClaims(env.Namespace).List(labels.Everything())
		claims := 0
		for _, c := range list {
			if c.Status.Phase == corev1.ClaimBound {
				claims++
			}
		}
		volumes := countVolumes(pvs, corev1.VolumeBound)
		return claims == benchVolumes && volumes == benchVolumes, fmt.Sprintf("%d claims, %d volumes Bound", claims, volumes)
	})
}

func reclaimVolumes(ctx context.Context, env *Env) error {
	pvs, _, stop, err := env.volumeListers(ctx)
	if err != nil {
		return err
	}
	defer stop()
	err = env.forEach(ctx, benchVolumes, func(ctx context.Context, i int) error {
		name := fmt.Sprintf(claimNameFormat, i)
		if err := env.Client.CoreV1().PersistentVolumeClaims(env.Namespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete claim %s: %w", name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return env.waitFor(ctx, "every volume deleted", func() (bool, string) {
		list, _ := pvs.List(volumeSelector)
		return len(list) == 0, fmt.Sprintf("%d volumes left", len(list))
	})
}
