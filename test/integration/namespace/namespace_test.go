// Package namespace tests the namespace-controller against a real
// kube-apiserver. No kubelet runs there: an unscheduled pod is deleted at
// once, but a pod bound to a node stays terminating until the test
// force-deletes it, as a kubelet would after the grace period. No garbage
// collector runs either; the deleter does not need one.
package namespace

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/pkg/controller/namespace"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const timeout = 60 * time.Second

var widgets = schema.GroupVersionResource{Group: "nsctl.example.com", Version: "v1", Resource: "widgets"}

func setup(t *testing.T) (*rest.Config, kubernetes.Interface) {
	t.Helper()
	cfg := framework.StartEnv(t)
	cc := framework.NewControllerContext(t, cfg)
	cc.Config.NamespaceController.ConcurrentNamespaceSyncs = 2
	cc.Config.NamespaceController.NamespaceSyncPeriod = metav1.Duration{Duration: 5 * time.Minute}
	c, err := namespace.New(context.Background(), cc, names.Namespace)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if c.Name() != names.Namespace {
		t.Errorf("Name() = %q", c.Name())
	}
	framework.StartController(t, cc, c)
	return cfg, kubernetes.NewForConfigOrDie(cfg)
}

func createNamespace(t *testing.T, client kubernetes.Interface, prefix string) string {
	t.Helper()
	ns, err := client.CoreV1().Namespaces().Create(context.Background(),
		&v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

func condition(ns *v1.Namespace, t v1.NamespaceConditionType) *v1.NamespaceCondition {
	for i := range ns.Status.Conditions {
		if ns.Status.Conditions[i].Type == t {
			return &ns.Status.Conditions[i]
		}
	}
	return nil
}

// waitForCondition waits until the namespace has condition t True with a
// message containing msg.
func waitForCondition(t *testing.T, client kubernetes.Interface, name string, ct v1.NamespaceConditionType, msg string) *v1.Namespace {
	t.Helper()
	var got *v1.Namespace
	framework.Eventually(t, timeout, func() (bool, error) {
		ns, err := client.CoreV1().Namespaces().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		c := condition(ns, ct)
		if c == nil || c.Status != v1.ConditionTrue || !strings.Contains(c.Message, msg) {
			return false, nil
		}
		got = ns
		return true, nil
	})
	return got
}

func waitForNamespaceGone(t *testing.T, client kubernetes.Interface, name string) {
	t.Helper()
	framework.Eventually(t, timeout, func() (bool, error) {
		_, err := client.CoreV1().Namespaces().Get(context.Background(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

func deleteNamespace(t *testing.T, client kubernetes.Interface, name string) {
	t.Helper()
	if err := client.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

func pod(name, node string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PodSpec{
			NodeName:                      node,
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers:                    []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
}

func TestNamespaceContentIsDeleted(t *testing.T) {
	cfg, client := setup(t)
	dyn := dynamic.NewForConfigOrDie(cfg)
	framework.CreateWidgetCRD(t, dyn, widgets, timeout)
	ctx := context.Background()
	ns := createNamespace(t, client, "nsdel-")

	core := client.CoreV1()
	mustCreate := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err := core.ConfigMaps(ns).Create(ctx, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{})
	mustCreate(err)
	_, err = core.Secrets(ns).Create(ctx, &v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}, metav1.CreateOptions{})
	mustCreate(err)
	_, err = core.ServiceAccounts(ns).Create(ctx, &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "sa"}}, metav1.CreateOptions{})
	mustCreate(err)
	_, err = core.Services(ns).Create(ctx, &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "svc"},
		Spec: v1.ServiceSpec{Ports: []v1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
	mustCreate(err)
	_, err = core.Pods(ns).Create(ctx, pod("unscheduled", ""), metav1.CreateOptions{})
	mustCreate(err)
	// A pod bound to a node terminates gracefully: without a kubelet it
	// stays until force-deleted.
	_, err = core.Pods(ns).Create(ctx, pod("bound", "node-1"), metav1.CreateOptions{})
	mustCreate(err)
	_, err = dyn.Resource(widgets).Namespace(ns).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "nsctl.example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"},
	}}, metav1.CreateOptions{})
	mustCreate(err)

	deleteNamespace(t, client, ns)

	// Pods go first: while the bound pod remains, nothing else is deleted.
	got := waitForCondition(t, client, ns, v1.NamespaceDeletionContentFailure,
		"failed to delete pods for namespace: "+ns+", err: unexpected items still remain in namespace: "+ns+" for gvr: /v1, Resource=pods")
	if got.Status.Phase != v1.NamespaceTerminating {
		t.Errorf("phase = %q, want Terminating", got.Status.Phase)
	}
	if _, err := core.ConfigMaps(ns).Get(ctx, "cm", metav1.GetOptions{}); err != nil {
		t.Errorf("configmap deleted while pods remain: %v", err)
	}
	if _, err := core.Pods(ns).Get(ctx, "unscheduled", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("unscheduled pod: %v, want NotFound", err)
	}

	// The "kubelet" finishes the bound pod.
	if err := core.Pods(ns).Delete(ctx, "bound", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	waitForNamespaceGone(t, client, ns)
	if l, err := dyn.Resource(widgets).Namespace(ns).List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
		t.Errorf("widgets left: %v, %v", l, err)
	}
}

func TestFinalizerKeepsNamespaceUntilRemoved(t *testing.T) {
	_, client := setup(t)
	ctx := context.Background()
	ns := createNamespace(t, client, "nsfin-")
	cms := client.CoreV1().ConfigMaps(ns)
	if _, err := cms.Create(ctx, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "held", Finalizers: []string{"example.com/x"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Create(ctx, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "free"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deleteNamespace(t, client, ns)

	got := waitForCondition(t, client, ns, v1.NamespaceFinalizersRemaining,
		"Some content in the namespace has finalizers remaining: example.com/x in 1 resource instances")
	if c := condition(got, v1.NamespaceFinalizersRemaining); c.Reason != "SomeFinalizersRemain" {
		t.Errorf("FinalizersRemaining reason = %q", c.Reason)
	}
	c := condition(got, v1.NamespaceContentRemaining)
	if c == nil || c.Status != v1.ConditionTrue || c.Reason != "SomeResourcesRemain" ||
		c.Message != "Some resources are remaining: configmaps. has 1 resource instances" {
		t.Errorf("ContentRemaining = %+v", c)
	}
	if c := condition(got, v1.NamespaceDeletionDiscoveryFailure); c == nil || c.Status != v1.ConditionFalse || c.Reason != "ResourcesDiscovered" {
		t.Errorf("DiscoveryFailure = %+v", c)
	}
	if _, err := cms.Get(ctx, "free", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("configmap without finalizer: %v, want NotFound", err)
	}

	if _, err := cms.Patch(ctx, "held", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForNamespaceGone(t, client, ns)
}
