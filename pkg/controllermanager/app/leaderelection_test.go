package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	basecompatibility "k8s.io/component-base/compatibility"
	componentbaseconfig "k8s.io/component-base/config"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/pkg/controllermanager"
	"github.com/kcm-dev/kcm/pkg/features"
)

func gate(t *testing.T, coordinated bool) featuregate.FeatureGate {
	t.Helper()
	fg := featuregate.NewVersionedFeatureGate(features.BinaryVersion())
	if err := features.AddUpstreamGates(fg); err != nil {
		t.Fatal(err)
	}
	if err := fg.SetFromMap(map[string]bool{string(features.CoordinatedLeaderElection): coordinated}); err != nil {
		t.Fatal(err)
	}
	return fg
}

func TestNewCandidacy(t *testing.T) {
	floor := version.MustParse("1.34")
	for _, tc := range []struct {
		name        string
		coordinated bool
		binary      string
		emulated    string // --emulated-version, "" for the default
		want        *Candidacy
	}{
		{name: "gate off", binary: "1.37.1", want: nil},
		{name: "release build", coordinated: true, binary: "1.37.1-kcm",
			want: &Candidacy{BinaryVersion: "1.37.1", EmulationVersion: "1.37.0"}},
		{name: "unstamped build", coordinated: true, binary: "1.37",
			want: &Candidacy{BinaryVersion: "1.37.0", EmulationVersion: "1.37.0"}},
		{name: "emulated 1.36", coordinated: true, binary: "1.37.1", emulated: "1.36",
			want: &Candidacy{BinaryVersion: "1.37.1", EmulationVersion: "1.36.0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := basecompatibility.NewEffectiveVersion(version.MustParse(tc.binary), false, floor, floor)
			if tc.emulated != "" {
				ev.SetEmulationVersion(version.MustParse(tc.emulated))
			}
			got, err := NewCandidacy(gate(t, tc.coordinated), ev)
			if err != nil {
				t.Fatal(err)
			}
			if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
				t.Errorf("NewCandidacy = %+v, want %+v", got, tc.want)
			}
		})
	}
}

const (
	testNamespace = "kube-system"
	testLease     = "kube-controller-manager"
	testID        = "host_1234"
)

// testElection is an election on a fake clientset with short timings.
func testElection(t *testing.T, client kubernetes.Interface, cd *Candidacy, health *controllermanager.HealthHandler) *election {
	t.Helper()
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, testNamespace, testLease,
		client.CoreV1(), client.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: testID})
	if err != nil {
		t.Fatal(err)
	}
	return &election{
		lock: lock,
		config: componentbaseconfig.LeaderElectionConfiguration{
			ResourceNamespace: testNamespace, ResourceName: testLease,
			LeaseDuration: metav1.Duration{Duration: 2 * time.Second},
			RenewDeadline: metav1.Duration{Duration: time.Second},
			RetryPeriod:   metav1.Duration{Duration: 100 * time.Millisecond},
		},
		candidacy: cd,
		client:    client,
		health:    health,
	}
}

// campaign runs e until the test ends or stop is called; run blocks
// until its context ends, and started is closed when it starts.
func campaign(t *testing.T, e *election) (started <-chan struct{}, stop func() error) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	start := make(chan struct{})
	result := make(chan error, 1)
	go func() {
		result <- e.run(ctx, func(ctx context.Context) error {
			close(start)
			<-ctx.Done()
			return ctx.Err()
		})
	}()
	stop = sync.OnceValue(func() error {
		cancel()
		select {
		case err := <-result:
			return err
		case <-time.After(10 * time.Second):
			t.Error("the election did not end within 10s of its context")
			return nil
		}
	})
	t.Cleanup(func() { _ = stop() })
	return start, stop
}

func poll(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 10*time.Second, true,
		func(ctx context.Context) (bool, error) {
			ok, err := cond(ctx)
			if err != nil {
				last = err
			}
			return ok, nil
		})
	if err != nil {
		t.Fatalf("timed out waiting for %s (last error: %v)", what, last)
	}
}

func holderOf(t *testing.T, client kubernetes.Interface) string {
	t.Helper()
	return ptr.Deref(leaseOf(t, client).Spec.HolderIdentity, "")
}

func TestCoordinatedElection(t *testing.T) {
	client := fake.NewClientset()
	health := controllermanager.NewHealthHandler()
	cd := &Candidacy{BinaryVersion: "1.37.1", EmulationVersion: "1.37.0"}
	started, stop := campaign(t, testElection(t, client, cd, health))
	candidates := client.CoordinationV1beta1().LeaseCandidates(testNamespace)

	// The process announces itself for the Lease...
	poll(t, "the LeaseCandidate", func(ctx context.Context) (bool, error) {
		lc, err := candidates.Get(ctx, testID, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		want := "kube-controller-manager 1.37.1 1.37.0 OldestEmulationVersion"
		got := lc.Spec.LeaseName + " " + lc.Spec.BinaryVersion + " " + lc.Spec.EmulationVersion + " " + string(lc.Spec.Strategy)
		if got != want || lc.Spec.RenewTime == nil {
			t.Fatalf("LeaseCandidate spec %q (renewTime %v), want %q and a renewTime", got, lc.Spec.RenewTime, want)
		}
		return true, nil
	})
	rec := httptest.NewRecorder()
	health.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz/informer-sync", nil))
	if rec.Code != http.StatusOK {
		t.Errorf("/healthz/informer-sync: %d %s", rec.Code, rec.Body)
	}

	// ...but never takes the Lease itself.
	select {
	case <-started:
		t.Fatal("the controllers started without a Lease")
	case <-time.After(500 * time.Millisecond): // five retry periods
	}
	if _, err := client.CoordinationV1().Leases(testNamespace).Get(context.Background(), testLease, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a coordinated candidate wrote the Lease (get: %v)", err)
	}

	// The apiserver answers a ping by renewing the candidate.
	lc, err := candidates.Get(context.Background(), testID, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ping := metav1.NowMicro()
	lc.Spec.PingTime = &ping
	if _, err := candidates.Update(context.Background(), lc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, "the ping answered", func(ctx context.Context) (bool, error) {
		lc, err := candidates.Get(ctx, testID, metav1.GetOptions{})
		return err == nil && !lc.Spec.RenewTime.Before(&ping), err
	})

	// It leads once the apiserver made it the holder, and renews.
	now := metav1.NowMicro()
	strategy := coordinationv1.OldestEmulationVersion
	_, err = client.CoordinationV1().Leases(testNamespace).Create(context.Background(), &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: testLease},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(testID), LeaseDurationSeconds: ptr.To[int32](5),
			RenewTime: &now, Strategy: &strategy},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("not leading 10s after the apiserver made it the holder")
	}
	poll(t, "a renewal", func(ctx context.Context) (bool, error) {
		l, err := client.CoordinationV1().Leases(testNamespace).Get(ctx, testLease, metav1.GetOptions{})
		return err == nil && l.Spec.RenewTime.After(now.Time) && ptr.Deref(l.Spec.LeaseDurationSeconds, 0) == 2 &&
			ptr.Deref(l.Spec.Strategy, "") == strategy, err
	})

	// SIGTERM: the controllers stop, the candidate goes, the Lease is
	// released.
	if err := stop(); err != nil {
		t.Fatalf("election ended with %v", err)
	}
	if _, err := candidates.Get(context.Background(), testID, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the LeaseCandidate is still there after a clean stop (get: %v)", err)
	}
	if h := holderOf(t, client); h != "" {
		t.Errorf("the Lease is still held by %q after a clean stop", h)
	}
}

func TestUncoordinatedElectionTakesAFreeLease(t *testing.T) {
	client := fake.NewClientset()
	started, stop := campaign(t, testElection(t, client, nil, controllermanager.NewHealthHandler()))
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("not leading 10s after campaigning for a free Lease")
	}
	if h := holderOf(t, client); h != testID {
		t.Errorf("holder %q, want %q", h, testID)
	}
	lcs, err := client.CoordinationV1beta1().LeaseCandidates("").List(context.Background(), metav1.ListOptions{})
	if err != nil || len(lcs.Items) != 0 {
		t.Errorf("LeaseCandidates without coordination: %v (%v)", lcs, err)
	}
	if err := stop(); err != nil {
		t.Fatalf("election ended with %v", err)
	}
	if h := holderOf(t, client); h != "" {
		t.Errorf("the Lease is still held by %q after a clean stop", h)
	}
}

func TestStandbyStopsWithoutTouchingTheLease(t *testing.T) {
	now := metav1.NowMicro()
	client := fake.NewClientset(&coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: testLease},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("other"), LeaseDurationSeconds: ptr.To[int32](3600),
			RenewTime: &now, AcquireTime: &now},
	})
	started, stop := campaign(t, testElection(t, client, nil, nil))
	poll(t, "an attempt to acquire", func(context.Context) (bool, error) {
		for _, a := range client.Actions() {
			if a.GetResource().Resource == "leases" && a.GetVerb() == "get" {
				return true, nil
			}
		}
		return false, nil
	})
	if err := stop(); err != nil {
		t.Fatalf("election ended with %v", err)
	}
	select {
	case <-started:
		t.Fatal("a standby started the controllers")
	default:
	}
	if h := holderOf(t, client); h != "other" {
		t.Errorf("holder %q after a standby stopped, want other", h)
	}
}
