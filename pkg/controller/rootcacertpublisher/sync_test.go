package rootcacertpublisher

import (
	"errors"
	"maps"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2/ktesting"
)

const testCA = "-----BEGIN CERTIFICATE-----\nfake\n-----END CERTIFICATE-----\n"

func configMap(ns string, data, annotations map[string]string) *v1.ConfigMap {
	return &v1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ConfigMapName, Annotations: annotations},
		Data:       data,
	}
}

func described() map[string]string { return map[string]string{DescriptionAnnotation: Description} }

func correctData() map[string]string { return map[string]string{DataKey: testCA} }

// newTestController returns a controller whose ConfigMap cache holds cms,
// and the fake client behind it, which holds them too.
func newTestController(t *testing.T, cms ...*v1.ConfigMap) (*Controller, *fake.Clientset) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	objs := make([]runtime.Object, 0, len(cms))
	for _, cm := range cms {
		objs = append(objs, cm)
	}
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	c, err := newController(ctx, "root-ca-certificate-publisher-controller", client,
		factory.Core().V1().ConfigMaps(), factory.Core().V1().Namespaces(), []byte(testCA))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.queue.ShutDown)
	for _, cm := range cms {
		if err := factory.Core().V1().ConfigMaps().Informer().GetIndexer().Add(cm); err != nil {
			t.Fatal(err)
		}
	}
	return c, client
}

func terminatingErr() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: 403, Reason: metav1.StatusReasonForbidden,
		Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: v1.NamespaceTerminatingCause}}},
	}}
}

func TestSyncNamespace(t *testing.T) {
	tests := []struct {
		name     string
		existing *v1.ConfigMap
		apiErr   error
		// want is the ConfigMap written, nil for no write.
		want    *v1.ConfigMap
		wantErr bool
	}{
		{name: "missing", want: configMap("ns", correctData(), described())},
		{name: "up to date", existing: configMap("ns", correctData(), described())},
		{name: "custom description kept", existing: configMap("ns", correctData(), map[string]string{DescriptionAnnotation: "mine"})},
		{name: "data edited",
			existing: configMap("ns", map[string]string{DataKey: "junk"}, described()),
			want:     configMap("ns", correctData(), described())},
		{name: "extra key removed, other annotations kept",
			existing: configMap("ns", map[string]string{DataKey: testCA, "x": "y"}, map[string]string{"a": "b"}),
			want:     configMap("ns", correctData(), map[string]string{"a": "b", DescriptionAnnotation: Description})},
		{name: "annotation missing",
			existing: configMap("ns", correctData(), nil),
			want:     configMap("ns", correctData(), described())},
		{name: "namespace gone", apiErr: apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "ns"),
			want: configMap("ns", correctData(), described())},
		{name: "namespace terminating", apiErr: terminatingErr(), want: configMap("ns", correctData(), described())},
		{name: "create fails", apiErr: apierrors.NewInternalError(errors.New("boom")),
			want: configMap("ns", correctData(), described()), wantErr: true},
		{name: "update fails", apiErr: apierrors.NewInternalError(errors.New("boom")),
			existing: configMap("ns", nil, described()),
			want:     configMap("ns", correctData(), described()), wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			var cms []*v1.ConfigMap
			before := tc.existing.DeepCopy()
			if tc.existing != nil {
				cms = append(cms, tc.existing)
			}
			c, client := newTestController(t, cms...)
			if tc.apiErr != nil {
				client.PrependReactor("*", "configmaps", func(clienttesting.Action) (bool, runtime.Object, error) {
					return true, nil, tc.apiErr
				})
			}

			err := c.syncNamespace(ctx, "ns")
			if (err != nil) != tc.wantErr {
				t.Fatalf("syncNamespace() error = %v, wantErr %v", err, tc.wantErr)
			}
			if tc.wantErr && !apierrors.IsInternalError(err) {
				t.Errorf("error %v does not wrap the API error", err)
			}

			var written []*v1.ConfigMap
			for _, a := range client.Actions() {
				switch {
				case a.Matches("create", "configmaps"), a.Matches("update", "configmaps"):
					if a.GetNamespace() != "ns" {
						t.Errorf("%s in namespace %q", a.GetVerb(), a.GetNamespace())
					}
					if wantVerb := map[bool]string{true: "update", false: "create"}[tc.existing != nil]; a.GetVerb() != wantVerb {
						t.Errorf("verb %s, want %s", a.GetVerb(), wantVerb)
					}
					written = append(written, a.(clienttesting.CreateAction).GetObject().(*v1.ConfigMap))
				default:
					t.Errorf("unexpected action %s %s", a.GetVerb(), a.GetResource().Resource)
				}
			}
			if tc.want == nil {
				if len(written) != 0 {
					t.Fatalf("wrote %d ConfigMaps, want none", len(written))
				}
				return
			}
			if len(written) != 1 {
				t.Fatalf("wrote %d ConfigMaps, want 1", len(written))
			}
			got := written[0]
			if got.Name != ConfigMapName || !maps.Equal(got.Data, tc.want.Data) || !maps.Equal(got.Annotations, tc.want.Annotations) {
				t.Errorf("wrote name=%q data=%v annotations=%v, want name=%q data=%v annotations=%v",
					got.Name, got.Data, got.Annotations, ConfigMapName, tc.want.Data, tc.want.Annotations)
			}
			if tc.existing != nil && !equality.Semantic.DeepEqual(before, tc.existing) {
				t.Errorf("cached ConfigMap was modified: %+v", tc.existing)
			}
		})
	}
}
