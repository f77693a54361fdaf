// Package garbagecollector tests the garbage-collector-controller against a
// real kube-apiserver: objects get ownerReferences by hand (ConfigMaps
// owning ConfigMaps, a ReplicaSet owning a pod, a custom resource) and the
// tests watch the collector delete, orphan and finalize them. No kubelet
// runs: unscheduled pods are deleted at once.
package garbagecollector

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "k8s.io/controller-manager/controller"
	kcmv1alpha1 "k8s.io/kube-controller-manager/config/v1alpha1"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/pkg/controller/garbagecollector"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const timeout = 60 * time.Second

var widgets = schema.GroupVersionResource{Group: "gc.example.com", Version: "v1", Resource: "widgets"}

type env struct {
	client kubernetes.Interface
	dyn    dynamic.Interface
	ctrl   any
	// gets counts the controller's GETs by URL path.
	gets *requestCounter
}

// requestCounter counts GET requests by URL path.
type requestCounter struct {
	mu     sync.Mutex
	byPath map[string]int
}

func (c *requestCounter) RoundTrip(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method == http.MethodGet {
			c.mu.Lock()
			c.byPath[req.URL.Path]++
			c.mu.Unlock()
		}
		return rt.RoundTrip(req)
	})
}

// count returns the GETs of paths starting with prefix.
func (c *requestCounter) count(prefix string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for p, k := range c.byPath {
		if strings.HasPrefix(p, prefix) {
			n += k
		}
	}
	return n
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

func setup(t *testing.T) *env {
	t.Helper()
	cfg := framework.StartEnv(t)
	e := &env{client: kubernetes.NewForConfigOrDie(cfg), dyn: dynamic.NewForConfigOrDie(cfg)}
	// The CRD exists before the collector's first discovery.
	framework.CreateWidgetCRD(t, e.dyn, widgets, timeout)
	e.gets = &requestCounter{byPath: map[string]int{}}
	ccCfg := rest.CopyConfig(cfg)
	ccCfg.Wrap(e.gets.RoundTrip)
	cc := framework.NewControllerContext(t, ccCfg)
	cc.Config.GarbageCollectorController.EnableGarbageCollector = true
	cc.Config.GarbageCollectorController.ConcurrentGCSyncs = 5
	cc.Config.GarbageCollectorController.GCIgnoredResources = []kcmv1alpha1.GroupResource{{Group: "", Resource: "events"}, {Group: "events.k8s.io", Resource: "events"}}
	c, err := garbagecollector.New(context.Background(), cc, names.GarbageCollector)
	if err != nil || c == nil {
		t.Fatalf("New: %v, %v", c, err)
	}
	e.ctrl = c
	framework.StartController(t, cc, c)
	framework.Eventually(t, timeout, func() (bool, error) {
		return c.(controllermanager.ReadinessReporter).ReadinessCheck(nil) == nil, nil
	})
	return e
}

func TestDisabled(t *testing.T) {
	cc := framework.NewControllerContext(t, &rest.Config{Host: "http://127.0.0.1:1"})
	c, err := garbagecollector.New(context.Background(), cc, names.GarbageCollector)
	if c != nil || err != nil {
		t.Errorf("New with --enable-garbage-collector=false = %v, %v; want nil, nil", c, err)
	}
}

func namespace(t *testing.T, e *env) string {
	t.Helper()
	ns, err := e.client.CoreV1().Namespaces().Create(context.Background(),
		&v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "gc-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

func ownedBy(kind, apiVersion, name string, uid types.UID, block bool) metav1.OwnerReference {
	r := metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid}
	if block {
		r.BlockOwnerDeletion = ptr.To(true)
	}
	return r
}

func cmRef(cm *v1.ConfigMap, block bool) metav1.OwnerReference {
	return ownedBy("ConfigMap", "v1", cm.Name, cm.UID, block)
}

func configMap(t *testing.T, e *env, ns, name string, finalizers []string, owners ...metav1.OwnerReference) *v1.ConfigMap {
	t.Helper()
	cm, err := e.client.CoreV1().ConfigMaps(ns).Create(context.Background(), &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: name, OwnerReferences: owners, Finalizers: finalizers}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cm
}

func deleteCM(t *testing.T, e *env, cm *v1.ConfigMap, policy metav1.DeletionPropagation) {
	t.Helper()
	if err := e.client.CoreV1().ConfigMaps(cm.Namespace).Delete(context.Background(), cm.Name,
		metav1.DeleteOptions{PropagationPolicy: &policy}); err != nil {
		t.Fatal(err)
	}
}

func getCM(e *env, ns, name string) (*v1.ConfigMap, bool, error) {
	cm, err := e.client.CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	return cm, err == nil, err
}

func waitGone(t *testing.T, e *env, ns string, cmNames ...string) {
	t.Helper()
	framework.Eventually(t, timeout, func() (bool, error) {
		for _, n := range cmNames {
			if _, ok, err := getCM(e, ns, n); ok || err != nil {
				return false, err
			}
		}
		return true, nil
	})
}

// waitCollected proves the collector has caught up: a ConfigMap whose owner
// never existed is created and waited for until collected.
func waitCollected(t *testing.T, e *env, ns string) {
	t.Helper()
	s := configMap(t, e, ns, "sentinel-"+string(types.UID(time.Now().Format("150405.000000")))[7:], nil,
		ownedBy("ConfigMap", "v1", "never-existed", "00000000-0000-0000-0000-000000000001", false))
	waitGone(t, e, ns, s.Name)
}

func TestGarbageCollector(t *testing.T) {
	e := setup(t)

	t.Run("background deletion removes dependents", func(t *testing.T) {
		ns := namespace(t, e)
		parent := configMap(t, e, ns, "parent", nil)
		configMap(t, e, ns, "child", nil, cmRef(parent, false))
		rs, err := e.client.AppsV1().ReplicaSets(ns).Create(context.Background(), &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Name: "rs"},
			Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](0),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}},
				Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}},
					Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "busybox"}}}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.client.CoreV1().Pods(ns).Create(context.Background(), &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "pod", Labels: map[string]string{"app": "x"}, OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "busybox"}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		deleteCM(t, e, parent, metav1.DeletePropagationBackground)
		if err := e.client.AppsV1().ReplicaSets(ns).Delete(context.Background(), rs.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitGone(t, e, ns, "parent", "child")
		framework.Eventually(t, timeout, func() (bool, error) {
			_, err := e.client.CoreV1().Pods(ns).Get(context.Background(), "pod", metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
	})

	// Dependents the collector's informers already hold are deleted
	// without a read each (upstream GETs every one first): the deletion's
	// resourceVersion precondition stands in for the read.
	t.Run("cached dependents deleted without reading them", func(t *testing.T) {
		ns := namespace(t, e)
		parent := configMap(t, e, ns, "parent", nil)
		const children = 20
		for i := range children {
			configMap(t, e, ns, fmt.Sprintf("child-%d", i), nil, cmRef(parent, false))
		}
		deleteCM(t, e, parent, metav1.DeletePropagationBackground)
		framework.Eventually(t, timeout, func() (bool, error) {
			list, err := e.client.CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{})
			if err != nil {
				return false, err
			}
			for _, cm := range list.Items {
				if strings.HasPrefix(cm.Name, "child-") {
					return false, nil
				}
			}
			return true, nil
		})
		if n := e.gets.count("/api/v1/namespaces/" + ns + "/configmaps/child-"); n != 0 {
			t.Errorf("the collector read %d of the %d cached dependents it deleted, want none", n, children)
		}
	})

	t.Run("foreground deletion removes dependents first", func(t *testing.T) {
		ns := namespace(t, e)
		parent := configMap(t, e, ns, "parent", nil)
		configMap(t, e, ns, "child", []string{"example.com/hold"}, cmRef(parent, true))
		deleteCM(t, e, parent, metav1.DeletePropagationForeground)
		framework.Eventually(t, timeout, func() (bool, error) {
			child, ok, err := getCM(e, ns, "child")
			return ok && child.DeletionTimestamp != nil, err
		})
		p, ok, err := getCM(e, ns, "parent")
		if err != nil || !ok || !containsString(p.Finalizers, metav1.FinalizerDeleteDependents) {
			t.Fatalf("parent while its blocking dependent terminates = %v, %v, %v; want it kept with foregroundDeletion", p, ok, err)
		}
		if _, err := e.client.CoreV1().ConfigMaps(ns).Patch(context.Background(), "child", types.MergePatchType,
			[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		waitGone(t, e, ns, "child", "parent")
	})

	t.Run("orphan deletion keeps dependents without the reference", func(t *testing.T) {
		ns := namespace(t, e)
		parent := configMap(t, e, ns, "parent", nil)
		other := configMap(t, e, ns, "other", nil)
		configMap(t, e, ns, "child", nil, cmRef(parent, true), cmRef(other, false))
		deleteCM(t, e, parent, metav1.DeletePropagationOrphan)
		waitGone(t, e, ns, "parent")
		child, ok, err := getCM(e, ns, "child")
		if err != nil || !ok {
			t.Fatalf("orphaned child: %v, %v", ok, err)
		}
		if len(child.OwnerReferences) != 1 || child.OwnerReferences[0].UID != other.UID {
			t.Errorf("orphaned child's ownerReferences = %v, want only the other owner", child.OwnerReferences)
		}
	})

	t.Run("chain three deep", func(t *testing.T) {
		ns := namespace(t, e)
		a := configMap(t, e, ns, "a", nil)
		b := configMap(t, e, ns, "b", nil, cmRef(a, false))
		configMap(t, e, ns, "c", nil, cmRef(b, false))
		deleteCM(t, e, a, metav1.DeletePropagationBackground)
		waitGone(t, e, ns, "a", "b", "c")
	})

	t.Run("dependent with two owners survives until both are gone", func(t *testing.T) {
		ns := namespace(t, e)
		p1 := configMap(t, e, ns, "p1", nil)
		p2 := configMap(t, e, ns, "p2", nil)
		configMap(t, e, ns, "child", nil, cmRef(p1, false), cmRef(p2, false))
		deleteCM(t, e, p1, metav1.DeletePropagationBackground)
		waitGone(t, e, ns, "p1")
		waitCollected(t, e, ns)
		if _, ok, err := getCM(e, ns, "child"); !ok || err != nil {
			t.Fatalf("child with one remaining owner was collected: %v, %v", ok, err)
		}
		deleteCM(t, e, p2, metav1.DeletePropagationBackground)
		waitGone(t, e, ns, "p2", "child")
	})

	t.Run("dependent whose owner never existed is collected", func(t *testing.T) {
		ns := namespace(t, e)
		configMap(t, e, ns, "orphan", nil, ownedBy("ConfigMap", "v1", "ghost", "6b7c0a4e-0000-4000-8000-000000000000", false))
		waitGone(t, e, ns, "orphan")
	})

	t.Run("custom resources as owner and dependent", func(t *testing.T) {
		ns := namespace(t, e)
		w := e.dyn.Resource(widgets).Namespace(ns)
		owner := widget(t, w, "owner", nil)
		widget(t, w, "dep", []metav1.OwnerReference{ownedBy("Widget", "gc.example.com/v1", "owner", owner.GetUID(), false)})
		cm := configMap(t, e, ns, "cm-owner", nil)
		widget(t, w, "orphaned", []metav1.OwnerReference{cmRef(cm, false)})
		if err := w.Delete(context.Background(), "owner", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		framework.Eventually(t, timeout, func() (bool, error) {
			_, err := w.Get(context.Background(), "dep", metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		// Orphaning a custom resource takes the JSON merge patch path.
		deleteCM(t, e, cm, metav1.DeletePropagationOrphan)
		waitGone(t, e, ns, "cm-owner")
		got, err := w.Get(context.Background(), "orphaned", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if refs := got.GetOwnerReferences(); len(refs) != 0 {
			t.Errorf("orphaned widget's ownerReferences = %v, want none", refs)
		}
	})

	t.Run("owner in another namespace: OwnerRefInvalidNamespace", func(t *testing.T) {
		ns1, ns2 := namespace(t, e), namespace(t, e)
		parent := configMap(t, e, ns1, "parent", nil)
		waitCollected(t, e, ns1)
		child := configMap(t, e, ns2, "child", nil, cmRef(parent, false))
		framework.Eventually(t, timeout, func() (bool, error) {
			evs, err := e.client.CoreV1().Events(ns2).List(context.Background(), metav1.ListOptions{})
			if err != nil {
				return false, err
			}
			for _, ev := range evs.Items {
				if ev.Reason == "OwnerRefInvalidNamespace" && ev.InvolvedObject.UID == child.UID && ev.Type == v1.EventTypeWarning &&
					ev.Source.Component == "garbage-collector-controller" &&
					strings.Contains(ev.Message, `does not exist in namespace "`+ns2+`"`) {
					return true, nil
				}
			}
			return false, nil
		})
		// The owner does not exist in the dependent's namespace.
		waitGone(t, e, ns2, "child")
		if _, ok, _ := getCM(e, ns1, "parent"); !ok {
			t.Errorf("owner in the other namespace was deleted")
		}
	})

	t.Run("debug graph", func(t *testing.T) {
		ns := namespace(t, e)
		parent := configMap(t, e, ns, "parent", nil)
		child := configMap(t, e, ns, "child", nil, cmRef(parent, false))
		srv := httptest.NewServer(e.ctrl.(ctrl.Debuggable).DebuggingHandler())
		defer srv.Close()
		framework.Eventually(t, timeout, func() (bool, error) {
			resp, err := http.Get(srv.URL + "/graph?uid=" + string(child.UID))
			if err != nil {
				return false, err
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return strings.Contains(string(b), `"`+string(child.UID)+`" -> "`+string(parent.UID)+`";`), nil
		})
	})
}

func widget(t *testing.T, w dynamic.ResourceInterface, name string, owners []metav1.OwnerReference) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "gc.example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": name}}}
	u.SetOwnerReferences(owners)
	got, err := w.Create(context.Background(), u, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
