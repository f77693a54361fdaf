package servicecidr

import (
	"testing"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	restclient "k8s.io/client-go/rest"
	"k8s.io/controller-manager/pkg/clientbuilder"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kcm-dev/kcm/pkg/controllermanager"
	"github.com/kcm-dev/kcm/pkg/controllermanager/config"
)

func TestNew(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	clk := testingclock.NewFakeClock(now)
	cc := &controllermanager.ControllerContext{
		ClientBuilder:   clientbuilder.SimpleControllerClientBuilder{ClientConfig: &restclient.Config{Host: "https://127.0.0.1:6443"}},
		InformerFactory: informers.NewSharedInformerFactory(fake.NewClientset(), 0),
		Config:          &config.ComponentConfig{},
		Clock:           clk,
	}
	got, err := New(ctx, cc, "service-cidr-controller")
	if err != nil {
		t.Fatal(err)
	}
	c := got.(*Controller)
	defer c.queue.ShutDown()
	if c.Name() != "service-cidr-controller" || c.clock != clk {
		t.Errorf("Name() = %q, clock %v", c.Name(), c.clock)
	}
}
