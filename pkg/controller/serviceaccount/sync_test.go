package serviceaccount

import (
	"errors"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2/ktesting"
)

func namespace(name string, phase v1.NamespacePhase) *v1.Namespace {
	return &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1.NamespaceStatus{Phase: phase}}
}

func serviceAccount(ns, name string) *v1.ServiceAccount {
	return &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

func terminatingErr() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: 403, Reason: metav1.StatusReasonForbidden,
		Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: v1.NamespaceTerminatingCause}}},
	}}
}

// newTestController returns a controller whose caches hold objs, and the
// fake client behind it, which holds them too.
func newTestController(t *testing.T, objs ...runtime.Object) (*Controller, *fake.Clientset) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	c, err := newController(ctx, "serviceaccount-controller", client,
		factory.Core().V1().ServiceAccounts(), factory.Core().V1().Namespaces())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.queue.ShutDown)
	for _, o := range objs {
		var err error
		switch o := o.(type) {
		case *v1.Namespace:
			err = factory.Core().V1().Namespaces().Informer().GetIndexer().Add(o)
		case *v1.ServiceAccount:
			err = factory.Core().V1().ServiceAccounts().Informer().GetIndexer().Add(o)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return c, client
}

func TestSyncNamespace(t *testing.T) {
	tests := []struct {
		name       string
		objs       []runtime.Object
		createErr  error
		wantCreate bool
		wantErr    bool
	}{
		{name: "active namespace without default", objs: []runtime.Object{namespace("ns", v1.NamespaceActive)}, wantCreate: true},
		{name: "default exists", objs: []runtime.Object{namespace("ns", v1.NamespaceActive), serviceAccount("ns", "default")}},
		{name: "other ServiceAccounts only", objs: []runtime.Object{namespace("ns", v1.NamespaceActive), serviceAccount("ns", "builder")}, wantCreate: true},
		{name: "terminating namespace", objs: []runtime.Object{namespace("ns", v1.NamespaceTerminating)}},
		{name: "namespace without phase", objs: []runtime.Object{namespace("ns", "")}},
		{name: "namespace gone"},
		{name: "already exists", objs: []runtime.Object{namespace("ns", v1.NamespaceActive)}, wantCreate: true,
			createErr: apierrors.NewAlreadyExists(schema.GroupResource{Resource: "serviceaccounts"}, "default")},
		{name: "namespace started terminating", objs: []runtime.Object{namespace("ns", v1.NamespaceActive)}, wantCreate: true,
			createErr: terminatingErr()},
		{name: "create fails", objs: []runtime.Object{namespace("ns", v1.NamespaceActive)}, wantCreate: true,
			createErr: apierrors.NewInternalError(errors.New("boom")), wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			c, client := newTestController(t, tc.objs...)
			if tc.createErr != nil {
				client.PrependReactor("create", "serviceaccounts", func(clienttesting.Action) (bool, runtime.Object, error) {
					return true, nil, tc.createErr
				})
			}

			err := c.syncNamespace(ctx, "ns")
			if (err != nil) != tc.wantErr {
				t.Fatalf("syncNamespace() error = %v, wantErr %v", err, tc.wantErr)
			}
			if tc.wantErr && !apierrors.IsInternalError(err) {
				t.Errorf("error %v does not wrap the API error", err)
			}

			var created []*v1.ServiceAccount
			for _, a := range client.Actions() {
				if a.Matches("create", "serviceaccounts") {
					created = append(created, a.(clienttesting.CreateAction).GetObject().(*v1.ServiceAccount))
				} else {
					t.Errorf("unexpected action %s %s", a.GetVerb(), a.GetResource().Resource)
				}
			}
			if !tc.wantCreate {
				if len(created) != 0 {
					t.Fatalf("created %d ServiceAccounts, want none", len(created))
				}
				return
			}
			if len(created) != 1 {
				t.Fatalf("created %d ServiceAccounts, want 1", len(created))
			}
			want := serviceAccount("ns", "default")
			if got := created[0]; got.Namespace != want.Namespace || got.Name != want.Name ||
				len(got.Labels)+len(got.Annotations)+len(got.Secrets)+len(got.ImagePullSecrets) != 0 || got.AutomountServiceAccountToken != nil {
				t.Errorf("created %+v, want a bare %s/%s", got, want.Namespace, want.Name)
			}
		})
	}
}

// TestSyncDoesNotMutateEnsureList guards against the created object sharing
// state with the template list.
func TestSyncDoesNotMutateEnsureList(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	c, _ := newTestController(t, namespace("ns", v1.NamespaceActive))
	if err := c.syncNamespace(ctx, "ns"); err != nil {
		t.Fatal(err)
	}
	if ns := c.ensure[0].Namespace; ns != "" {
		t.Errorf("template ServiceAccount got namespace %q", ns)
	}
}
