// Package validatingadmissionpolicystatus tests the
// validatingadmissionpolicy-status-controller against a real kube-apiserver:
// schemas come from its OpenAPI v3 document, kinds from discovery.
package validatingadmissionpolicystatus

import (
	"context"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/kcm-dev/kcm/pkg/controller/validatingadmissionpolicystatus"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const timeout = 30 * time.Second

func newPolicy(name string, rule admissionregistrationv1.Rule, validations ...admissionregistrationv1.Validation) *admissionregistrationv1.ValidatingAdmissionPolicy {
	return &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
					Rule:       rule,
				},
			}}},
			Validations: validations,
		},
	}
}

// waitForStatus waits until the policy's status observed its generation and
// returns it. status.typeChecking is then set, except when an apply removed
// the last warning: server-side apply prunes the emptied struct.
func waitForStatus(t *testing.T, client kubernetes.Interface, name string) *admissionregistrationv1.ValidatingAdmissionPolicy {
	t.Helper()
	var p *admissionregistrationv1.ValidatingAdmissionPolicy
	framework.Eventually(t, timeout, func() (bool, error) {
		var err error
		p, err = client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return p.Status.ObservedGeneration == p.Generation, nil
	})
	return p
}

func TestTypeChecking(t *testing.T) {
	cfg := framework.StartEnv(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	deployments := admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}}
	policies := client.AdmissionregistrationV1().ValidatingAdmissionPolicies()

	// Created before the controller starts: a well-typed policy.
	good := newPolicy("vap-good", deployments, admissionregistrationv1.Validation{
		Expression:        "object.spec.replicas <= 5",
		MessageExpression: "'replicas: ' + string(object.spec.replicas)",
	})
	if _, err := policies.Create(ctx, good, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	cc := framework.NewControllerContext(t, cfg)
	c, err := validatingadmissionpolicystatus.New(ctx, cc, names.ValidatingAdmissionPolicyStatus)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if c.Name() != names.ValidatingAdmissionPolicyStatus {
		t.Errorf("Name() = %q", c.Name())
	}
	framework.StartController(t, cc, c)

	p := waitForStatus(t, client, "vap-good")
	if p.Status.TypeChecking == nil {
		t.Fatal("vap-good: status.typeChecking not set")
	}
	if w := p.Status.TypeChecking.ExpressionWarnings; len(w) != 0 {
		t.Errorf("vap-good: unexpected warnings %+v", w)
	}
	// The status is written by server-side apply under upstream's manager.
	found := false
	for _, mf := range p.ManagedFields {
		if mf.Manager == validatingadmissionpolicystatus.FieldManager && mf.Subresource == "status" && mf.Operation == metav1.ManagedFieldsOperationApply {
			found = true
		}
	}
	if !found {
		t.Errorf("no status apply by %q in managedFields %+v", validatingadmissionpolicystatus.FieldManager, p.ManagedFields)
	}

	// A type error in the second validation's expression, against the
	// Deployment schema served by the API server.
	bad := newPolicy("vap-bad", deployments,
		admissionregistrationv1.Validation{Expression: "true"},
		admissionregistrationv1.Validation{Expression: "object.spec.replicas > '1'"})
	if _, err := policies.Create(ctx, bad, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p = waitForStatus(t, client, "vap-bad")
	if p.Status.TypeChecking == nil {
		t.Fatal("vap-bad: status.typeChecking not set")
	}
	w := p.Status.TypeChecking.ExpressionWarnings
	if len(w) != 1 || w[0].FieldRef != "spec.validations[1].expression" ||
		!strings.HasPrefix(w[0].Warning, "apps/v1, Kind=Deployment: ERROR: <input>:1:22: found no matching overload for '_>_' applied to '(int, string)'") {
		t.Errorf("vap-bad: warnings = %+v", w)
	}

	// Fixing the spec bumps the generation; the next check clears the warning.
	patch := []byte(`{"spec":{"validations":[{"expression":"true"},{"expression":"object.spec.replicas > 1"}]}}`)
	if _, err := policies.Patch(ctx, "vap-bad", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	p = waitForStatus(t, client, "vap-bad")
	t.Logf("vap-bad after fix: status %+v", p.Status)
	if p.Generation != 2 || (p.Status.TypeChecking != nil && len(p.Status.TypeChecking.ExpressionWarnings) != 0) {
		t.Errorf("vap-bad after fix: generation %d, status %+v", p.Generation, p.Status)
	}

	// A rule naming an unknown resource has nothing to check against.
	unknown := newPolicy("vap-unknown", admissionregistrationv1.Rule{APIGroups: []string{"example.com"}, APIVersions: []string{"v1"}, Resources: []string{"nothings"}},
		admissionregistrationv1.Validation{Expression: "object.whatever > '1'"})
	if _, err := policies.Create(ctx, unknown, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p = waitForStatus(t, client, "vap-unknown")
	if p.Status.TypeChecking == nil || len(p.Status.TypeChecking.ExpressionWarnings) != 0 {
		t.Errorf("vap-unknown: status %+v", p.Status)
	}
}
