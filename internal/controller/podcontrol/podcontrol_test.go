package podcontrol

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
)

var owner = &v1.ObjectReference{Kind: "ReplicaSet", APIVersion: "apps/v1", Namespace: "ns", Name: "web", UID: "uid-1"}

func controllerRef() *metav1.OwnerReference {
	return &metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "uid-1",
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
}

func template() *v1.PodTemplateSpec {
	return &v1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{
			Name:        "ignored",
			Labels:      map[string]string{"app": "web"},
			Annotations: map[string]string{"a": "b"},
			Finalizers:  []string{"example.com/f"},
		},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "i"}}},
	}
}

// newReal returns a Real over a fake clientset whose pod creates and
// deletes fail with failErr (if set), and the pods OnWrite saw.
func newReal(failErr error) (Real, *fake.Clientset, *record.FakeRecorder, *[]*v1.Pod) {
	client := fake.NewClientset()
	if failErr != nil {
		client.PrependReactor("*", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
			if a.GetVerb() == "create" || a.GetVerb() == "delete" {
				return true, nil, failErr
			}
			return false, nil, nil
		})
	}
	// The fake clientset does not implement generateName.
	client.PrependReactor("create", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		p := a.(clienttesting.CreateAction).GetObject().(*v1.Pod)
		if p.Name == "" {
			p.Name = p.GenerateName + "abcde"
		}
		return false, nil, nil
	})
	rec := record.NewFakeRecorder(10)
	var written []*v1.Pod
	r := Real{Client: client, Recorder: rec, OnWrite: func(p *v1.Pod, ref *metav1.OwnerReference) {
		if ref != nil {
			written = append(written, p)
		}
	}}
	return r, client, rec, &written
}

func events(rec *record.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func TestCreatePods(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "web-x", errors.New("exceeded quota"))
	terminating := &apierrors.StatusError{ErrStatus: metav1.Status{Code: 403, Reason: metav1.StatusReasonForbidden,
		Message: "namespace ns is being terminated",
		Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: v1.NamespaceTerminatingCause}}}}}
	tests := []struct {
		name       string
		failErr    error
		mutate     func(*v1.PodTemplateSpec, *metav1.OwnerReference) *metav1.OwnerReference
		wantErr    string
		wantEvents []string
	}{
		{name: "created", wantEvents: []string{"Normal SuccessfulCreate Created pod: web-abcde"}},
		{name: "quota", failErr: forbidden, wantErr: "exceeded quota",
			wantEvents: []string{`Warning FailedCreate Error creating: pods "web-x" is forbidden: exceeded quota`}},
		{name: "namespace terminating", failErr: terminating, wantErr: "being terminated"},
		{name: "no labels", wantErr: "no labels", mutate: func(t *v1.PodTemplateSpec, r *metav1.OwnerReference) *metav1.OwnerReference {
			t.Labels = nil
			return r
		}},
		{name: "nil controllerRef", wantErr: "controllerRef is nil", mutate: func(*v1.PodTemplateSpec, *metav1.OwnerReference) *metav1.OwnerReference { return nil }},
		{name: "not controller", wantErr: "Controller is not set", mutate: func(_ *v1.PodTemplateSpec, r *metav1.OwnerReference) *metav1.OwnerReference {
			r.Controller = nil
			return r
		}},
		{name: "no blockOwnerDeletion", wantErr: "BlockOwnerDeletion", mutate: func(_ *v1.PodTemplateSpec, r *metav1.OwnerReference) *metav1.OwnerReference {
			r.BlockOwnerDeletion = ptr.To(false)
			return r
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, client, rec, written := newReal(tc.failErr)
			tmpl, ref := template(), controllerRef()
			if tc.mutate != nil {
				ref = tc.mutate(tmpl, ref)
			}
			err := r.CreatePods(context.Background(), "ns", tmpl, owner, ref)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if got := events(rec); !reflect.DeepEqual(got, tc.wantEvents) {
				t.Errorf("events = %q, want %q", got, tc.wantEvents)
			}
			if tc.wantErr != "" {
				if len(*written) != 0 {
					t.Error("OnWrite called for a failed create")
				}
				return
			}
			pods, _ := client.CoreV1().Pods("ns").List(context.Background(), metav1.ListOptions{})
			if len(pods.Items) != 1 || len(*written) != 1 {
				t.Fatalf("%d pods, %d observed writes; want 1", len(pods.Items), len(*written))
			}
			p := pods.Items[0]
			p.ManagedFields = nil
			want := metav1.ObjectMeta{Name: "web-abcde", Namespace: "ns", GenerateName: "web-",
				Labels: tmpl.Labels, Annotations: tmpl.Annotations, Finalizers: tmpl.Finalizers,
				OwnerReferences: []metav1.OwnerReference{*controllerRef()}}
			if !reflect.DeepEqual(p.ObjectMeta, want) {
				t.Errorf("pod meta = %+v\nwant %+v", p.ObjectMeta, want)
			}
			if !reflect.DeepEqual(p.Spec, tmpl.Spec) {
				t.Errorf("pod spec = %+v", p.Spec)
			}
		})
	}
}

func TestCreatePodsWithGenerateName(t *testing.T) {
	r, client, _, _ := newReal(nil)
	if err := r.CreatePodsWithGenerateName(context.Background(), "ns", template(), owner, controllerRef(), "custom-"); err != nil {
		t.Fatal(err)
	}
	pods, _ := client.CoreV1().Pods("ns").List(context.Background(), metav1.ListOptions{})
	if len(pods.Items) != 1 || pods.Items[0].GenerateName != "custom-" {
		t.Fatalf("pods = %+v", pods.Items)
	}
}

func TestPodFromTemplateDoesNotShareMemory(t *testing.T) {
	tmpl := template()
	p := PodFromTemplate(tmpl, "web", nil)
	p.Labels["x"] = "y"
	p.Annotations["x"] = "y"
	p.Finalizers[0] = "changed"
	p.Spec.Containers[0].Name = "changed"
	if tmpl.Labels["x"] != "" || tmpl.Annotations["x"] != "" || tmpl.Finalizers[0] != "example.com/f" || tmpl.Spec.Containers[0].Name != "c" {
		t.Error("the pod shares memory with the template")
	}
	if p.OwnerReferences != nil {
		t.Error("ownerReferences without a controllerRef")
	}
}

func TestGenerateNamePrefix(t *testing.T) {
	// The API server accepts prefixes that are valid names once a trailing
	// dash is masked; only a name that is too long already loses the dash.
	long, tooLong := strings.Repeat("a", 253), strings.Repeat("a", 254)
	for name, want := range map[string]string{"web": "web-", long: long + "-", tooLong: tooLong} {
		if got := GenerateNamePrefix(name); got != want {
			t.Errorf("GenerateNamePrefix(%d chars) = %d chars", len(name), len(got))
		}
	}
}

func TestDeletePod(t *testing.T) {
	tests := []struct {
		name       string
		failErr    error
		wantErr    string
		notFound   bool
		wantEvents []string
	}{
		{name: "deleted", wantEvents: []string{"Normal SuccessfulDelete Deleted pod: web-1"}},
		{name: "gone", failErr: apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "web-1"), notFound: true},
		{name: "failed", failErr: apierrors.NewInternalError(errors.New("boom")),
			wantErr:    "unable to delete pods: Internal error occurred: boom",
			wantEvents: []string{"Warning FailedDelete Error deleting: Internal error occurred: boom"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, client, rec, _ := newReal(tc.failErr)
			_, _ = client.CoreV1().Pods("ns").Create(context.Background(), &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "ns"}}, metav1.CreateOptions{})
			err := r.DeletePod(context.Background(), "ns", "web-1", owner)
			switch {
			case tc.notFound:
				if !apierrors.IsNotFound(err) {
					t.Fatalf("err = %v, want NotFound", err)
				}
			case tc.wantErr != "":
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
			case err != nil && !apierrors.IsNotFound(err):
				t.Fatal(err)
			}
			if got := events(rec); !reflect.DeepEqual(got, tc.wantEvents) {
				t.Errorf("events = %q, want %q", got, tc.wantEvents)
			}
		})
	}
}

func TestPatchPodObservesWrite(t *testing.T) {
	r, client, _, written := newReal(nil)
	_, _ = client.CoreV1().Pods("ns").Create(context.Background(), &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}}, metav1.CreateOptions{})
	patch := `{"metadata":{"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web","uid":"uid-1","controller":true,"blockOwnerDeletion":true}]}}`
	if err := r.PatchPod(context.Background(), "ns", "p", []byte(patch)); err != nil {
		t.Fatal(err)
	}
	if len(*written) != 1 {
		t.Fatalf("OnWrite saw %d writes, want 1", len(*written))
	}
}

func TestFake(t *testing.T) {
	f := &Fake{CreateLimit: 1}
	ctx := context.Background()
	if err := f.CreatePods(ctx, "ns", template(), owner, controllerRef()); err != nil {
		t.Fatal(err)
	}
	if err := f.CreatePods(ctx, "ns", template(), owner, controllerRef()); err == nil {
		t.Error("create past the limit succeeded")
	}
	f.DeleteErr = func(name string) error {
		if name == "bad" {
			return errors.New("no")
		}
		return nil
	}
	if err := f.DeletePod(ctx, "ns", "bad", owner); err == nil {
		t.Error("DeleteErr ignored")
	}
	_ = f.PatchPod(ctx, "ns", "p", []byte("{}"))
	if f.CreateCalls() != 2 || len(f.Templates) != 1 || len(f.Deleted) != 1 || len(f.Patches) != 1 {
		t.Errorf("recorded %d creates (%d kept), %d deletes, %d patches", f.CreateCalls(), len(f.Templates), len(f.Deleted), len(f.Patches))
	}
}

func TestSlowStartBatch(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name          string
		count         int
		failFrom      int // calls numbered from 1; 0 never fails
		wantCalls     int
		wantSuccesses int
	}{
		{name: "none", count: 0},
		{name: "all succeed", count: 10, wantCalls: 10, wantSuccesses: 10},
		{name: "first call fails", count: 10, failFrom: 1, wantCalls: 1},
		// Batches 1, 2, 4: the third batch (calls 4-7) has failures.
		{name: "fails in the third batch", count: 10, failFrom: 6, wantCalls: 7, wantSuccesses: 5},
		{name: "fails in the last batch", count: 500, failFrom: 500, wantCalls: 500, wantSuccesses: 499},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			calls := 0
			got, err := SlowStartBatch(tc.count, SlowStartInitialBatchSize, func() error {
				mu.Lock()
				defer mu.Unlock()
				calls++
				if tc.failFrom > 0 && calls >= tc.failFrom {
					return boom
				}
				return nil
			})
			if calls != tc.wantCalls || got != tc.wantSuccesses {
				t.Errorf("calls = %d, successes = %d; want %d, %d", calls, got, tc.wantCalls, tc.wantSuccesses)
			}
			if (err != nil) != (tc.failFrom > 0 && tc.failFrom <= tc.count) {
				t.Errorf("err = %v", err)
			}
		})
	}
}
