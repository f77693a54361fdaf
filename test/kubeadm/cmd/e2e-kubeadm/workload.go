package main

import (
	"fmt"
	"path/filepath"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/test/kubeadm"
	"github.com/kcm-dev/kcm/test/node"
)

const (
	swapNS        = "swap"
	terminatingNS = "swap-terminating"
	holdFinalizer = "e2e-kubeadm/hold"
	storageClass  = "e2e-kubeadm-manual"
)

// podSpec is a pod of the workload: agnhost's pause, a small CPU request
// (the namespace has a quota), tolerating the control plane's taint.
func (e *env) podSpec(cmd ...string) corev1.PodSpec {
	c := corev1.Container{
		Name: "main", Image: node.AgnhostImage, Args: []string{"pause"},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("5m"), corev1.ResourceMemory: resource.MustParse("8Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
		},
	}
	if len(cmd) > 0 {
		c.Image, c.Command, c.Args = node.BusyBoxImage, cmd, nil
	}
	return corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](1), Tolerations: e.Tolerations, Containers: []corev1.Container{c}}
}

func template(app string, spec corev1.PodSpec) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}}, Spec: spec}
}

func selector(app string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
}

// createWorkload makes the mix the swap runs under: Deployments, a
// DaemonSet, a StatefulSet with claims on static PersistentVolumes, a
// finished and a running Job, a CronJob, Services, a PDB, a quota, an HPA,
// and a namespace held in deletion by a finalizer; then waits for it to
// settle.
func (e *env) createWorkload() error {
	cs := e.c.Client
	for _, n := range []string{swapNS, terminatingNS} {
		if _, err := cs.CoreV1().Namespaces().Create(e.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	if _, err := cs.CoreV1().ResourceQuotas(swapNS).Create(e.ctx, &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "quota"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
			corev1.ResourcePods: resource.MustParse("40"), corev1.ResourceRequestsCPU: resource.MustParse("2"),
			corev1.ResourcePersistentVolumeClaims: resource.MustParse("5"), "count/deployments.apps": resource.MustParse("5"),
		}},
	}, metav1.CreateOptions{}); err != nil {
		return err
	}
	for _, d := range []string{"app", "web"} {
		if _, err := cs.AppsV1().Deployments(swapNS).Create(e.ctx, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: d},
			Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Selector: selector(d), Template: template(d, e.podSpec())},
		}, metav1.CreateOptions{}); err != nil {
			return err
		}
		if _, err := cs.CoreV1().Services(swapNS).Create(e.ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: d},
			Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": d}, Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}},
		}, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	if _, err := cs.AppsV1().DaemonSets(swapNS).Create(e.ctx, &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "ds"},
		Spec:       appsv1.DaemonSetSpec{Selector: selector("ds"), Template: template("ds", e.podSpec())},
	}, metav1.CreateOptions{}); err != nil {
		return err
	}
	// Static volumes for the StatefulSet's claims: hostPath under the
	// run's directory (seen by both nodes), bound by the PV binder.
	for i := range 2 {
		if _, err := cs.CoreV1().PersistentVolumes().Create(e.ctx, &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("swap-pv-%d", i)},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
				AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				StorageClassName:              storageClass,
				PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{
					Path: filepath.Join(kubeadm.DefaultDir, "volumes", fmt.Sprint(i)), Type: ptr.To(corev1.HostPathDirectoryOrCreate)}},
			},
		}, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	if _, err := cs.CoreV1().Services(swapNS).Create(e.ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec:       corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"app": "db"}, Ports: []corev1.ServicePort{{Port: 80}}},
	}, metav1.CreateOptions{}); err != nil {
		return err
	}
	sts := e.podSpec()
	sts.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	if _, err := cs.AppsV1().StatefulSets(swapNS).Create(e.ctx, &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To[int32](2), ServiceName: "db", Selector: selector("db"), Template: template("db", sts),
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, StorageClassName: ptr.To(storageClass),
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
				},
			}},
		},
	}, metav1.CreateOptions{}); err != nil {
		return err
	}
	job := func(name string, cmd ...string) *batchv1.Job {
		spec := e.podSpec(cmd...)
		spec.RestartPolicy = corev1.RestartPolicyNever
		return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](2), Template: corev1.PodTemplateSpec{Spec: spec}}}
	}
	for _, j := range []*batchv1.Job{job("done", "true"), job("running", "sleep", "3600")} {
		if _, err := cs.BatchV1().Jobs(swapNS).Create(e.ctx, j, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	if _, err := cs.BatchV1().CronJobs(swapNS).Create(e.ctx, &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "yearly"},
		Spec: batchv1.CronJobSpec{Schedule: "0 0 1 1 *", ConcurrencyPolicy: batchv1.ReplaceConcurrent,
			JobTemplate: batchv1.JobTemplateSpec{Spec: job("x", "true").Spec}},
	}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if _, err := cs.PolicyV1().PodDisruptionBudgets(swapNS).Create(e.ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "app"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1)), Selector: selector("app")},
	}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if _, err := cs.AutoscalingV2().HorizontalPodAutoscalers(swapNS).Create(e.ctx, &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    ptr.To[int32](2), MaxReplicas: 3,
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
				Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](80)}}}},
		},
	}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if _, err := cs.CoreV1().ConfigMaps(terminatingNS).Create(e.ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "held", Finalizers: []string{holdFinalizer}},
	}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if err := cs.CoreV1().Namespaces().Delete(e.ctx, terminatingNS, metav1.DeleteOptions{}); err != nil {
		return err
	}
	return e.workloadSettled()
}

// workloadSettled waits until every part of the workload reached its
// steady state.
func (e *env) workloadSettled() error {
	cs := e.c.Client
	for _, d := range []string{"app", "web"} {
		if err := e.DeploymentReady(swapNS, d, 3*time.Minute); err != nil {
			return err
		}
	}
	return e.Poll(4*time.Minute, "the workload settled", func() (bool, string, error) {
		ds, err := cs.AppsV1().DaemonSets(swapNS).Get(e.ctx, "ds", metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		if n := int32(len(e.c.Nodes())); ds.Status.NumberReady != n || ds.Status.UpdatedNumberScheduled != n {
			return false, fmt.Sprintf("DaemonSet %+v", ds.Status), nil
		}
		sts, err := cs.AppsV1().StatefulSets(swapNS).Get(e.ctx, "db", metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		if sts.Status.ReadyReplicas != 2 || sts.Status.ObservedGeneration < sts.Generation {
			return false, fmt.Sprintf("StatefulSet %+v", sts.Status), nil
		}
		for _, j := range []struct {
			name     string
			done     bool
			wantPods int32
		}{{"done", true, 0}, {"running", false, 1}} {
			job, err := cs.BatchV1().Jobs(swapNS).Get(e.ctx, j.name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error(), nil
			}
			if (job.Status.CompletionTime != nil) != j.done || (!j.done && ptr.Deref(job.Status.Ready, 0) != j.wantPods) {
				return false, fmt.Sprintf("Job %s %+v", j.name, job.Status), nil
			}
		}
		q, err := cs.CoreV1().ResourceQuotas(swapNS).Get(e.ctx, "quota", metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		if used := q.Status.Used[corev1.ResourcePods]; used.Value() != 2+2+2+int64(len(e.c.Nodes()))+1 {
			return false, fmt.Sprintf("quota used %v", q.Status.Used), nil
		}
		pdb, err := cs.PolicyV1().PodDisruptionBudgets(swapNS).Get(e.ctx, "app", metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		if pdb.Status.CurrentHealthy != 2 || pdb.Status.DisruptionsAllowed != 1 {
			return false, fmt.Sprintf("PDB %+v", pdb.Status), nil
		}
		hpa, err := cs.AutoscalingV2().HorizontalPodAutoscalers(swapNS).Get(e.ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		if len(hpa.Status.Conditions) == 0 {
			return false, "HPA without conditions", nil
		}
		n, err := cs.CoreV1().Namespaces().Get(e.ctx, terminatingNS, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		if n.Status.Phase != corev1.NamespaceTerminating || len(n.Status.Conditions) == 0 {
			return false, fmt.Sprintf("namespace %s %+v", terminatingNS, n.Status), nil
		}
		return true, "", nil
	})
}

// releaseTerminating lets the held namespace go.
func (e *env) releaseTerminating() error {
	_, err := e.c.Client.CoreV1().ConfigMaps(terminatingNS).Patch(e.ctx, "held", "application/merge-patch+json",
		[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	return err
}
