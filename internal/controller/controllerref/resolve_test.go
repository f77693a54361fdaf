package controllerref

import (
	"errors"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestResolve(t *testing.T) {
	cached := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "rs-uid"}}
	var asked []string
	get := func(name string) (*appsv1.ReplicaSet, error) {
		asked = append(asked, name)
		switch name {
		case "web":
			return cached, nil
		case "broken":
			return nil, errors.New("lister failed")
		}
		return nil, apierrors.NewNotFound(appsv1.Resource("replicasets"), name)
	}
	owner := func(kind, name string, uid types.UID) *metav1.OwnerReference {
		return &metav1.OwnerReference{APIVersion: "apps/v1", Kind: kind, Name: name, UID: uid}
	}
	for _, tc := range []struct {
		name    string
		ref     *metav1.OwnerReference
		want    *appsv1.ReplicaSet
		wantGet bool
	}{
		{"same object", owner("ReplicaSet", "web", "rs-uid"), cached, true},
		{"other kind, not looked up", owner("Deployment", "web", "rs-uid"), nil, false},
		{"nil ref", nil, nil, false},
		{"recreated under the name", owner("ReplicaSet", "web", "old-uid"), nil, true},
		{"not cached", owner("ReplicaSet", "gone", "rs-uid"), nil, true},
		{"lister error", owner("ReplicaSet", "broken", "rs-uid"), nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked = nil
			if got := Resolve(tc.ref, "ReplicaSet", get); got != tc.want {
				t.Errorf("Resolve = %v, want %v", got, tc.want)
			}
			if gotGet := len(asked) > 0; gotGet != tc.wantGet {
				t.Errorf("get called %v (%v), want called %v", gotGet, asked, tc.wantGet)
			}
		})
	}
}
