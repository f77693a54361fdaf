package endpointslicemirroring

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	restclient "k8s.io/client-go/rest"
	"k8s.io/controller-manager/pkg/clientbuilder"
	"k8s.io/klog/v2/ktesting"

	"github.com/kcm-dev/kcm/pkg/controllermanager"
	"github.com/kcm-dev/kcm/pkg/controllermanager/config"
)

func TestNew(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	cfg := &config.ComponentConfig{}
	cfg.EndpointSliceMirroringController.MirroringMaxEndpointsPerSubset = 7
	cfg.EndpointSliceMirroringController.MirroringConcurrentServiceEndpointSyncs = 3
	cfg.EndpointSliceMirroringController.MirroringEndpointUpdatesBatchPeriod = metav1.Duration{Duration: time.Second}
	cc := &controllermanager.ControllerContext{
		ClientBuilder:   clientbuilder.SimpleControllerClientBuilder{ClientConfig: &restclient.Config{Host: "https://127.0.0.1:6443"}},
		InformerFactory: informers.NewSharedInformerFactory(fake.NewClientset(), 0),
		Config:          cfg,
	}
	got, err := New(ctx, cc, "endpointslice-mirroring-controller")
	if err != nil {
		t.Fatal(err)
	}
	c := got.(*Controller)
	defer c.queue.ShutDown()
	if c.Name() != "endpointslice-mirroring-controller" {
		t.Errorf("Name() = %q", c.Name())
	}
	if c.cfg != (Config{MaxEndpointsPerSubset: 7, Workers: 3, BatchPeriod: time.Second}) {
		t.Errorf("config %+v", c.cfg)
	}
}

// TestRun drives the controller through informers: slices follow the
// Endpoints' creation, update and deletion, and Run returns after
// cancellation.
func TestRun(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	client := newFakeClient(service("svc", nil))
	factory := informers.NewSharedInformerFactory(client, 0)
	c, err := newController(ctx, "endpointslice-mirroring-controller", client,
		factory.Core().V1().Endpoints(), factory.Discovery().V1().EndpointSlices(), factory.Core().V1().Services(),
		Config{MaxEndpointsPerSubset: 1000, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Run(ctx)
	}()
	factory.Start(ctx.Done())
	defer func() {
		cancel()
		factory.Shutdown()
	}()

	waitFor := func(want string) {
		t.Helper()
		err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
			list, err := client.DiscoveryV1().EndpointSlices(testNS).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err
			}
			got := ""
			for i := range list.Items {
				if list.Items[i].Labels[discovery.LabelManagedBy] == ControllerName {
					got += addressesOf(&list.Items[i])
				}
			}
			return got == want, nil
		})
		if err != nil {
			t.Fatalf("waiting for slices holding %q: %v", want, err)
		}
	}
	ep := endpoints("svc", v1.EndpointSubset{Addresses: addrs("10.0.0.1"), Ports: []v1.EndpointPort{port("http", 80)}})
	if _, err := client.CoreV1().Endpoints(testNS).Create(ctx, ep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("10.0.0.1")
	ep.Subsets[0].Addresses = addrs("10.0.0.2")
	if _, err := client.CoreV1().Endpoints(testNS).Update(ctx, ep, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("10.0.0.2")
	if err := client.CoreV1().Endpoints(testNS).Delete(ctx, "svc", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("")

	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancellation")
	}
}
