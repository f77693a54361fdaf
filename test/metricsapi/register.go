package metricsapi

import (
	"context"
	stdbase64 "encoding/base64"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

var apiServiceGVR = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// GroupVersions are the group versions the server serves, each registered
// by an APIService named <version>.<group>.
var GroupVersions = []schema.GroupVersion{resourceGV, customGV, externalGV}

// APIServiceName is the name of the APIService of gv.
func APIServiceName(gv schema.GroupVersion) string { return gv.Version + "." + gv.Group }

// RegisterTimeout bounds how long Register waits for the APIServices to
// become Available.
const RegisterTimeout = 60 * time.Second

// Register creates the server's Service (ExternalName localhost: the
// kube-apiserver runs on the same host and dials the port) and an
// APIService per group version (with the serving certificate as CA
// bundle), replacing existing ones, and waits until the aggregator finds
// them Available.
func (s *Server) Register(ctx context.Context, cfg *rest.Config) error {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	svc := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.opts.ServiceNamespace, Name: s.opts.ServiceName},
		Spec: v1.ServiceSpec{Type: v1.ServiceTypeExternalName, ExternalName: "localhost",
			Ports: []v1.ServicePort{{Name: "https", Port: int32(s.port)}}},
	}
	services := client.CoreV1().Services(svc.Namespace)
	if err := services.Delete(ctx, svc.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("metricsapi: %w", err)
	}
	if _, err := services.Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("metricsapi: %w", err)
	}
	for _, gv := range GroupVersions {
		if err := s.registerAPIService(ctx, dyn, gv); err != nil {
			return err
		}
	}
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, RegisterTimeout, true, func(ctx context.Context) (bool, error) {
		for _, gv := range GroupVersions {
			if ok, err := available(ctx, dyn, APIServiceName(gv)); err != nil || !ok {
				return false, nil //nolint:nilerr // keep polling until the deadline
			}
		}
		return true, nil
	})
}

func (s *Server) registerAPIService(ctx context.Context, dyn dynamic.Interface, gv schema.GroupVersion) error {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1",
		"kind":       "APIService",
		"metadata":   map[string]any{"name": APIServiceName(gv)},
		"spec": map[string]any{
			"group":                gv.Group,
			"version":              gv.Version,
			"groupPriorityMinimum": int64(100),
			"versionPriority":      int64(100),
			"caBundle":             stdbase64.StdEncoding.EncodeToString(s.caPEM),
			"service": map[string]any{
				"namespace": s.opts.ServiceNamespace, "name": s.opts.ServiceName, "port": int64(s.port),
			},
		},
	}}
	apiServices := dyn.Resource(apiServiceGVR)
	if err := apiServices.Delete(ctx, APIServiceName(gv), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("metricsapi: %w", err)
	}
	if _, err := apiServices.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("metricsapi: APIService %s: %w", APIServiceName(gv), err)
	}
	return nil
}

// available reports whether the APIService's Available condition is True.
func available(ctx context.Context, dyn dynamic.Interface, name string) (bool, error) {
	obj, err := dyn.Resource(apiServiceGVR).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Available" {
			return m["status"] == "True", nil
		}
	}
	return false, nil
}

// Unregister deletes the APIServices and the Service: the metrics APIs
// disappear from the cluster (requests to them get 404).
func (s *Server) Unregister(ctx context.Context, cfg *rest.Config) error {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	for _, gv := range GroupVersions {
		if err := dyn.Resource(apiServiceGVR).Delete(ctx, APIServiceName(gv), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("metricsapi: %w", err)
		}
	}
	err = client.CoreV1().Services(s.opts.ServiceNamespace).Delete(ctx, s.opts.ServiceName, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("metricsapi: %w", err)
	}
	return nil
}
