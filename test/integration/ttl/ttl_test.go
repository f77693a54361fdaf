// Package ttl tests the ttl-controller against a real kube-apiserver.
package ttl

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/kcm-dev/kcm/pkg/controller/ttl"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const timeout = 30 * time.Second

func waitForTTL(t *testing.T, client kubernetes.Interface, node, want string) {
	t.Helper()
	framework.Eventually(t, timeout, func() (bool, error) {
		n, err := client.CoreV1().Nodes().Get(context.Background(), node, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return n.Annotations[v1.ObjectTTLAnnotationKey] == want, nil
	})
}

func TestNodesGetTTLAnnotation(t *testing.T) {
	cfg := framework.StartEnv(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	// One node exists before the controller starts, one is added later.
	if _, err := client.CoreV1().Nodes().Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ttl-before"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cc := framework.NewControllerContext(t, cfg)
	c, err := ttl.New(ctx, cc, names.TTL)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if c.Name() != names.TTL {
		t.Errorf("Name() = %q", c.Name())
	}
	framework.StartController(t, cc, c)

	if _, err := client.CoreV1().Nodes().Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ttl-after"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForTTL(t, client, "ttl-before", "0")
	waitForTTL(t, client, "ttl-after", "0")

	// A changed annotation is set back on the node's next update.
	patch := []byte(`{"metadata":{"annotations":{"` + v1.ObjectTTLAnnotationKey + `":"42"}}}`)
	if _, err := client.CoreV1().Nodes().Patch(ctx, "ttl-after", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForTTL(t, client, "ttl-after", "0")
}
