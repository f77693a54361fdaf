package validatingadmissionpolicystatus

import (
	"context"
	"fmt"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	validatingpolicy "k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

var deploymentGVK = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}

// schemas resolves a Deployment-like schema (spec.replicas is an integer)
// and nothing else.
type schemas struct{}

func (schemas) ResolveSchema(gvk schema.GroupVersionKind) (*spec.Schema, error) {
	if gvk != deploymentGVK {
		return nil, fmt.Errorf("%v: %w", gvk, resolver.ErrSchemaNotFound)
	}
	replicas := *spec.Int32Property()
	s := &spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: map[string]spec.Schema{
		"apiVersion": *spec.StringProperty(),
		"kind":       *spec.StringProperty(),
		"spec": {SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: map[string]spec.Schema{
			"replicas": replicas,
		}}},
	}}}
	return s, nil
}

func typeChecker() *validatingpolicy.TypeChecker {
	mapper := meta.NewDefaultRESTMapper([]schema.GroupVersion{deploymentGVK.GroupVersion()})
	mapper.Add(deploymentGVK, meta.RESTScopeNamespace)
	return &validatingpolicy.TypeChecker{SchemaResolver: schemas{}, RestMapper: mapper}
}

func policy(name string, generation, observed int64, validations ...admissionregistrationv1.Validation) *admissionregistrationv1.ValidatingAdmissionPolicy {
	return &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name, Generation: generation},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule: admissionregistrationv1.Rule{
						APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"},
					},
				},
			}}},
			Validations: validations,
		},
		Status: admissionregistrationv1.ValidatingAdmissionPolicyStatus{ObservedGeneration: observed},
	}
}

func newTestController(t *testing.T, objs ...*admissionregistrationv1.ValidatingAdmissionPolicy) (*Controller, *fake.Clientset) {
	t.Helper()
	client := fake.NewClientset()
	factory := informers.NewSharedInformerFactory(client, 0)
	inf := factory.Admissionregistration().V1().ValidatingAdmissionPolicies()
	c, err := newController("test", 1, inf, client.AdmissionregistrationV1().ValidatingAdmissionPolicies(), typeChecker())
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if err := inf.Informer().GetIndexer().Add(o); err != nil {
			t.Fatal(err)
		}
		if err := client.Tracker().Add(o); err != nil {
			t.Fatal(err)
		}
	}
	client.ClearActions()
	return c, client
}

func TestSync(t *testing.T) {
	tests := []struct {
		name   string
		policy *admissionregistrationv1.ValidatingAdmissionPolicy
		// want are the expected warnings (fieldRef → substring of the
		// warning); nil wantApply means no write at all.
		wantApply bool
		want      map[string]string
	}{{
		name:      "well-typed expressions",
		policy:    policy("ok", 1, 0, admissionregistrationv1.Validation{Expression: "object.spec.replicas > 1", MessageExpression: "'replicas: ' + string(object.spec.replicas)"}),
		wantApply: true,
		want:      map[string]string{},
	}, {
		name: "type errors in expression and messageExpression",
		policy: policy("bad", 3, 2,
			admissionregistrationv1.Validation{Expression: "true"},
			admissionregistrationv1.Validation{Expression: "object.spec.replicas > '1'", MessageExpression: "'x' + object.spec.nope"}),
		wantApply: true,
		want: map[string]string{
			"spec.validations[1].expression":        "apps/v1, Kind=Deployment: ERROR: <input>:1:22: found no matching overload for '_>_' applied to '(int, string)'",
			"spec.validations[1].messageExpression": "apps/v1, Kind=Deployment: ERROR: <input>:1:18: undefined field 'nope'",
		},
	}, {
		name:   "already observed",
		policy: policy("seen", 2, 2, admissionregistrationv1.Validation{Expression: "object.spec.replicas > '1'"}),
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			c, client := newTestController(t, tc.policy)
			if err := c.sync(ctx, tc.policy.Name); err != nil {
				t.Fatalf("sync: %v", err)
			}
			if !tc.wantApply {
				if a := client.Actions(); len(a) != 0 {
					t.Fatalf("want no API calls, got %v", a)
				}
				return
			}
			for _, a := range client.Actions() {
				if a.GetSubresource() != "status" || a.GetVerb() != "patch" {
					t.Errorf("unexpected action %s %s/%s", a.GetVerb(), a.GetResource().Resource, a.GetSubresource())
				}
			}
			got, err := client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(context.Background(), tc.policy.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got.Status.ObservedGeneration != tc.policy.Generation {
				t.Errorf("observedGeneration = %d, want %d", got.Status.ObservedGeneration, tc.policy.Generation)
			}
			if got.Status.TypeChecking == nil {
				t.Fatal("status.typeChecking not set")
			}
			warnings := got.Status.TypeChecking.ExpressionWarnings
			if len(warnings) != len(tc.want) {
				t.Fatalf("warnings = %+v, want %d", warnings, len(tc.want))
			}
			for _, w := range warnings {
				sub, ok := tc.want[w.FieldRef]
				if !ok || !strings.Contains(w.Warning, sub) {
					t.Errorf("unexpected warning %s: %q", w.FieldRef, w.Warning)
				}
			}
		})
	}
}

func TestSyncMissingPolicy(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	c, client := newTestController(t)
	if err := c.sync(ctx, "gone"); err != nil {
		t.Fatalf("sync: %v", err)
	}
	if a := client.Actions(); len(a) != 0 {
		t.Fatalf("want no API calls, got %v", a)
	}
}

func TestEnqueue(t *testing.T) {
	c, _ := newTestController(t)
	c.enqueue(policy("p", 1, 0))
	c.enqueue("not a policy")
	if n := c.queue.Len(); n != 1 {
		t.Fatalf("queue length = %d, want 1", n)
	}
	if key, _ := c.queue.Get(); key != "p" {
		t.Errorf("key = %q, want p", key)
	}
}
