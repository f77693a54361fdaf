package disruption

import (
	"testing"
	"time"

	apps "k8s.io/api/apps/v1"
	batch "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	policy "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/test/integration/framework"
)

var web = map[string]string{"app": "web"}

// A Deployment's budget allows one eviction through the eviction API; the
// evicted pod is then counted out and the next eviction is refused.
func TestEvictionAllowedThenRefused(t *testing.T) {
	e := setup(t)
	d, err := e.client.AppsV1().Deployments(e.ns).Create(e.ctx, &apps.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       apps.DeploymentSpec{Replicas: ptr.To[int32](3), Selector: &metav1.LabelSelector{MatchLabels: web}, Template: podTemplate(web)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rs := e.createReplicaSet("web-1", 3, web, controllerRef("apps/v1", "Deployment", d))
	pods := e.runningPods("web-1", 3, web, true, controllerRef("apps/v1", "ReplicaSet", rs))
	e.createPDB("web", web, nil, ptr.To(intstr.FromInt32(1)))
	e.waitPDB("web", budget{expected: 3, desired: 2, healthy: 3, allowed: 1, reason: policy.SufficientPodsReason})

	if err := e.evict(pods[0]); err != nil {
		t.Fatalf("eviction of %s refused: %v", pods[0], err)
	}
	if e.getPod(pods[0]).DeletionTimestamp == nil {
		t.Fatalf("evicted pod %s is not being deleted", pods[0])
	}
	e.waitPDB("web", budget{expected: 3, desired: 2, healthy: 2, allowed: 0, reason: policy.InsufficientPodsReason})
	// The eviction API recorded the pod in disruptedPods; the controller
	// drops it once it sees the pod deleting.
	framework.Eventually(t, timeout, func() (bool, error) {
		pdb, err := e.client.PolicyV1().PodDisruptionBudgets(e.ns).Get(e.ctx, "web", metav1.GetOptions{})
		return err == nil && len(pdb.Status.DisruptedPods) == 0, err
	})
	err = e.evict(pods[1])
	if !apierrors.IsTooManyRequests(err) || !apierrors.HasStatusCause(err, policy.DisruptionBudgetCause) {
		t.Fatalf("second eviction: %v, want 429 with cause %s", err, policy.DisruptionBudgetCause)
	}
	if e.getPod(pods[1]).DeletionTimestamp != nil {
		t.Errorf("refused eviction deleted %s", pods[1])
	}
}

// Percentages are of the controller's scale: a StatefulSet's replicas and
// a custom resource's scale subresource.
func TestPercentagesOfScale(t *testing.T) {
	e := setup(t)
	set, err := e.client.AppsV1().StatefulSets(e.ns).Create(e.ctx, &apps.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec: apps.StatefulSetSpec{Replicas: ptr.To[int32](3), ServiceName: "db",
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}, Template: podTemplate(map[string]string{"app": "db"})},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.runningPods("db", 3, map[string]string{"app": "db"}, true, controllerRef("apps/v1", "StatefulSet", set))
	// maxUnavailable 50% of 3 is 2 (rounded up): one must stay.
	e.createPDB("db", map[string]string{"app": "db"}, nil, ptr.To(intstr.FromString("50%")))
	e.waitPDB("db", budget{expected: 3, desired: 1, healthy: 3, allowed: 2, reason: policy.SufficientPodsReason})

	gvr := schema.GroupVersionResource{Group: "disruption.example.com", Version: "v1", Resource: "gizmos"}
	e.createScalableCRD(gvr)
	g, err := e.dyn.Resource(gvr).Namespace(e.ns).Create(e.ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "disruption.example.com/v1", "kind": "Gizmo",
		"metadata": map[string]any{"name": "g"},
		"spec":     map[string]any{"replicas": int64(4)},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.runningPods("g", 2, map[string]string{"app": "gizmo"}, true, controllerRef("disruption.example.com/v1", "Gizmo", g))
	// minAvailable 50% of 4 is 2: the two pods there are, none to spare.
	e.createPDB("gizmo", map[string]string{"app": "gizmo"}, ptr.To(intstr.FromString("50%")), nil)
	e.waitPDB("gizmo", budget{expected: 4, desired: 2, healthy: 2, allowed: 0, reason: policy.InsufficientPodsReason})
}

// Budgets the controller cannot compute get SyncFailed and an Event,
// are not retried in a loop, and do not hold up other budgets; pods of
// two controllers are counted by both controllers' scale.
func TestBadInput(t *testing.T) {
	e := setup(t, "job")
	job, err := e.client.BatchV1().Jobs(e.ns).Create(e.ctx, &batch.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "j"},
		Spec: batch.JobSpec{Template: v1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "job"}},
			Spec:       v1.PodSpec{RestartPolicy: v1.RestartPolicyNever, Containers: []v1.Container{{Name: "c", Image: "registry.example/job:1"}}},
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.runningPods("j", 1, map[string]string{"app": "job"}, true, controllerRef("batch/v1", "Job", job))
	e.createPDB("job", map[string]string{"app": "job"}, nil, ptr.To(intstr.FromInt32(1)))

	rs := e.createReplicaSet("two", 2, web, nil)
	set, err := e.client.AppsV1().StatefulSets(e.ns).Create(e.ctx, &apps.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "two"},
		Spec:       apps.StatefulSetSpec{Replicas: ptr.To[int32](3), Selector: &metav1.LabelSelector{MatchLabels: web}, Template: podTemplate(web)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.runningPods("rs", 2, web, true, controllerRef("apps/v1", "ReplicaSet", rs))
	e.runningPods("set", 3, web, true, controllerRef("apps/v1", "StatefulSet", set))
	e.createPDB("two", web, nil, ptr.To(intstr.FromInt32(1)))

	const msg = "jobs.batch does not implement the scale subresource"
	pdb := e.waitPDB("job", budget{reason: policy.SyncFailedReason})
	for _, c := range pdb.Status.Conditions {
		if c.Type == policy.DisruptionAllowedCondition && (c.Status != metav1.ConditionFalse || c.Message != msg) {
			t.Errorf("condition %+v, want False with message %q", c, msg)
		}
	}
	ev := e.namespace().WaitEvents("PodDisruptionBudget", "job", "CalculateExpectedPodCountFailed", 1, timeout)
	if ev[0].Message != "Failed to calculate the number of expected pods: "+msg || ev[0].Type != v1.EventTypeWarning || ev[0].Source.Component != "controllermanager" {
		t.Errorf("Event %s %q from %q", ev[0].Type, ev[0].Message, ev[0].Source.Component)
	}
	e.waitPDB("two", budget{expected: 5, desired: 4, healthy: 5, allowed: 1, reason: policy.SufficientPodsReason})

	// The failed budget is written once (twice if its first write raced
	// its creation's sync), not retried.
	framework.Consistently(t, 3*time.Second, "status writes of the failed budget", func() bool {
		return e.statusWrites["job"].Load() <= 2
	})
}

// Entries of disruptedPods are dropped when overdue (with a NotDeleted
// Event on the pod) and kept, the pod not counted healthy, until then.
func TestDisruptedPodsExpire(t *testing.T) {
	e := setup(t)
	pods := e.runningPods("p", 2, web, true, nil)
	e.createPDB("web", web, ptr.To(intstr.FromInt32(1)), nil)
	e.waitPDB("web", budget{expected: 2, desired: 1, healthy: 2, allowed: 1, reason: policy.SufficientPodsReason})

	now := time.Now()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pdb, err := e.client.PolicyV1().PodDisruptionBudgets(e.ns).Get(e.ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		pdb.Status.DisruptedPods = map[string]metav1.Time{
			pods[0]: metav1.NewTime(now.Add(-3 * time.Minute)),
			pods[1]: metav1.NewTime(now.Add(-2*time.Minute + 10*time.Second)),
		}
		_, err = e.client.PolicyV1().PodDisruptionBudgets(e.ns).UpdateStatus(e.ctx, pdb, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	pdb := e.waitPDB("web", budget{expected: 2, desired: 1, healthy: 1, allowed: 0, reason: policy.InsufficientPodsReason})
	if _, ok := pdb.Status.DisruptedPods[pods[1]]; !ok || len(pdb.Status.DisruptedPods) != 1 {
		t.Errorf("disruptedPods %v, want only %s", pdb.Status.DisruptedPods, pods[1])
	}
	ev := e.namespace().WaitEvents("Pod", pods[0], "NotDeleted", 1, timeout)
	if want := "Pod was expected by PDB " + e.ns + "/" + e.ns + " to be deleted but it wasn't"; ev[0].Message != want {
		t.Errorf("Event %q, want %q", ev[0].Message, want)
	}
	// Then the second entry expires on its own.
	pdb = e.waitPDB("web", budget{expected: 2, desired: 1, healthy: 2, allowed: 1, reason: policy.SufficientPodsReason})
	if len(pdb.Status.DisruptedPods) != 0 {
		t.Errorf("disruptedPods %v, want none", pdb.Status.DisruptedPods)
	}
}

// A DisruptionTarget condition that has been True for two minutes on a
// pod that is not being deleted is set to False.
func TestStaleDisruptionTarget(t *testing.T) {
	e := setup(t)
	pods := e.runningPods("p", 2, web, true, nil)
	for i, age := range []time.Duration{3 * time.Minute, 0} {
		p := e.getPod(pods[i])
		p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{
			Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting",
			LastTransitionTime: metav1.NewTime(time.Now().Add(-age)),
		})
		if _, err := e.client.CoreV1().Pods(e.ns).UpdateStatus(e.ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	target := func(name string) *v1.PodCondition {
		for _, c := range e.getPod(name).Status.Conditions {
			if c.Type == v1.DisruptionTarget {
				return &c
			}
		}
		return nil
	}
	framework.Eventually(t, timeout, func() (bool, error) {
		c := target(pods[0])
		return c != nil && c.Status == v1.ConditionFalse && c.Reason == "" && c.Message == "", nil
	})
	if c := target(pods[1]); c == nil || c.Status != v1.ConditionTrue {
		t.Errorf("fresh condition %+v changed", c)
	}
}
