package node

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"strings"
	"text/template"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

//go:embed manifests/*.yaml
var manifests embed.FS

// resources maps the kinds the manifests hold to their resources.
var resources = map[string]schema.GroupVersionResource{
	"ServiceAccount":     {Version: "v1", Resource: "serviceaccounts"},
	"ConfigMap":          {Version: "v1", Resource: "configmaps"},
	"Service":            {Version: "v1", Resource: "services"},
	"Secret":             {Version: "v1", Resource: "secrets"},
	"DaemonSet":          {Group: "apps", Version: "v1", Resource: "daemonsets"},
	"Deployment":         {Group: "apps", Version: "v1", Resource: "deployments"},
	"ClusterRole":        {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
	"ClusterRoleBinding": {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"},
	"Role":               {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"},
	"RoleBinding":        {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
}

// Values fill the manifests' templates.
type Values struct {
	ControlPlaneEndpoint string
	ClusterCIDR          string
	DNSIP                string
	DNSDomain            string
	KubeProxyImage       string
	CoreDNSImage         string
}

// Apply creates every object of manifests/<name>.yaml, its template filled
// from v; objects that exist already are left as they are.
func Apply(ctx context.Context, dyn dynamic.Interface, name string, v Values) error {
	raw, err := manifests.ReadFile("manifests/" + name + ".yaml")
	if err != nil {
		return err
	}
	tmpl, err := template.New(name).Option("missingkey=error").Parse(string(raw))
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, v); err != nil {
		return err
	}
	for _, doc := range strings.Split(buf.String(), "\n---\n") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			return fmt.Errorf("node: %s: %w", name, err)
		}
		if len(obj) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: obj}
		gvr, ok := resources[u.GetKind()]
		if !ok {
			return fmt.Errorf("node: %s: kind %s not known", name, u.GetKind())
		}
		var ri dynamic.ResourceInterface = dyn.Resource(gvr)
		if ns := u.GetNamespace(); ns != "" {
			ri = dyn.Resource(gvr).Namespace(ns)
		}
		if _, err := ri.Create(ctx, u, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("node: create %s %s: %w", u.GetKind(), u.GetName(), err)
		}
	}
	return nil
}
