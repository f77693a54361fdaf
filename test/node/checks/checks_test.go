package checks

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestWebDeployment(t *testing.T) {
	cp := corev1.Toleration{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	e := &Env{Namespace: "kubeadm-e2e", Tolerations: []corev1.Toleration{cp}, Spread: true}
	web := e.webDeployment("web", "main", 3, "")
	spec := web.Spec.Template.Spec
	if web.Namespace != "kubeadm-e2e" || len(spec.Tolerations) != 2 || spec.Tolerations[0] != cp || spec.Tolerations[1].Key != "kubeadm-e2e/evict" {
		t.Errorf("web: namespace %q, tolerations %+v", web.Namespace, spec.Tolerations)
	}
	if c := spec.TopologySpreadConstraints; len(c) != 1 || c[0].TopologyKey != hostnameLabel || c[0].MaxSkew != 1 || c[0].WhenUnsatisfiable != corev1.ScheduleAnyway {
		t.Errorf("web: spread %+v", c)
	}
	if spec.NodeSelector != nil {
		t.Errorf("web: nodeSelector %v", spec.NodeSelector)
	}
	victim := e.webDeployment("web-victim", "victim", 1, "n1").Spec.Template.Spec
	if len(victim.Tolerations) != 1 || victim.Tolerations[0] != cp || victim.NodeSelector[hostnameLabel] != "n1" || victim.TopologySpreadConstraints != nil {
		t.Errorf("victim: tolerations %+v, nodeSelector %v, spread %+v", victim.Tolerations, victim.NodeSelector, victim.TopologySpreadConstraints)
	}
	// e2e-node's: no options, the eviction toleration on web only.
	e = &Env{Namespace: "e2e-node"}
	if spec := e.webDeployment("web", "main", 3, "").Spec.Template.Spec; len(spec.Tolerations) != 1 || spec.Tolerations[0].Key != "e2e-node/evict" || spec.TopologySpreadConstraints != nil {
		t.Errorf("e2e-node web: %+v", spec)
	}
	if spec := e.webDeployment("web-victim", "victim", 1, "").Spec.Template.Spec; spec.Tolerations != nil || spec.NodeSelector != nil {
		t.Errorf("e2e-node victim: %+v", spec)
	}
}

func TestSetTaint(t *testing.T) {
	other := corev1.Taint{Key: "other", Effect: corev1.TaintEffectNoSchedule}
	cs := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Spec: corev1.NodeSpec{Taints: []corev1.Taint{other}}})
	e := &Env{Ctx: context.Background(), Client: cs, Namespace: "e2e-node", TaintNode: "n1"}
	taints := func() []corev1.Taint {
		n, err := cs.CoreV1().Nodes().Get(e.Ctx, "n1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return n.Spec.Taints
	}
	if err := e.setTaint(true); err != nil {
		t.Fatal(err)
	}
	if got := taints(); len(got) != 2 || got[1].Key != "e2e-node/evict" || got[1].Effect != corev1.TaintEffectNoExecute {
		t.Errorf("tainted: %+v", got)
	}
	if err := e.setTaint(false); err != nil {
		t.Fatal(err)
	}
	if got := taints(); len(got) != 1 || got[0] != other {
		t.Errorf("untainted: %+v", got)
	}
}
