package leaderelection

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/pkg/features"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const (
	ns     = "kube-system"
	gateOn = "--feature-gates=CoordinatedLeaderElection=true"
)

// Short leader election timings for the tests (upstream's are 15s, 10s,
// 2s).
var fastElection = []string{
	"--leader-elect-lease-duration=4s", "--leader-elect-renew-deadline=3s", "--leader-elect-retry-period=1s",
}

func holder(ctx context.Context, client kubernetes.Interface, lease string) (*coordinationv1.Lease, string, error) {
	l, err := client.CoordinationV1().Leases(ns).Get(ctx, lease, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	return l, ptr.Deref(l.Spec.HolderIdentity, ""), nil
}

func waitHolder(t *testing.T, client kubernetes.Interface, lease, want string, timeout time.Duration) *coordinationv1.Lease {
	t.Helper()
	var got *coordinationv1.Lease
	framework.Poll(t, timeout, fmt.Sprintf("Lease %s held by %s", lease, want), func(ctx context.Context) (bool, error) {
		l, h, err := holder(ctx, client, lease)
		got = l
		return h == want, err
	})
	return got
}

// candidatesFor lists the LeaseCandidates of lease.
func candidatesFor(ctx context.Context, client kubernetes.Interface, lease string) ([]coordinationv1beta1.LeaseCandidate, error) {
	list, err := client.CoordinationV1beta1().LeaseCandidates(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []coordinationv1beta1.LeaseCandidate
	for _, lc := range list.Items {
		if lc.Spec.LeaseName == lease {
			out = append(out, lc)
		}
	}
	return out, nil
}

// standingCandidate is a LeaseCandidate the test keeps, as an older
// kube-controller-manager (emulating 1.36) would: it answers the
// apiserver's pings, but never renews the Lease.
type standingCandidate struct {
	name   string
	cancel context.CancelFunc
	done   chan struct{}
}

func stand(t *testing.T, client kubernetes.Interface, lease, name string) *standingCandidate {
	t.Helper()
	candidates := client.CoordinationV1beta1().LeaseCandidates(ns)
	now := metav1.NowMicro()
	_, err := candidates.Create(context.Background(), &coordinationv1beta1.LeaseCandidate{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: coordinationv1beta1.LeaseCandidateSpec{
			LeaseName: lease, RenewTime: &now,
			BinaryVersion: strings.TrimPrefix(features.UpstreamKubernetesVersion, "v"), EmulationVersion: "1.36.0",
			Strategy: coordinationv1.OldestEmulationVersion,
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &standingCandidate{name: name, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for ctx.Err() == nil {
			lc, err := candidates.Get(ctx, name, metav1.GetOptions{})
			if err == nil && lc.Spec.PingTime != nil && lc.Spec.RenewTime.Before(lc.Spec.PingTime) {
				lc.Spec.RenewTime = ptr.To(metav1.NowMicro())
				_, _ = candidates.Update(ctx, lc, metav1.UpdateOptions{})
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { s.withdraw(t, client) })
	return s
}

// withdraw stops answering pings and deletes the LeaseCandidate.
func (s *standingCandidate) withdraw(t *testing.T, client kubernetes.Interface) {
	s.cancel()
	<-s.done
	err := client.CoordinationV1beta1().LeaseCandidates(ns).Delete(context.Background(), s.name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Error(err)
	}
}

// identityOf returns the identity p campaigns with, from its log.
func identityOf(t *testing.T, p *framework.Process) string {
	t.Helper()
	var id string
	framework.Poll(t, 30*time.Second, "the campaign's log line", func(context.Context) (bool, error) {
		for _, line := range strings.Split(p.Log(), "\n") {
			if _, rest, ok := strings.Cut(line, "Campaigning for leadership"); ok {
				if _, after, ok := strings.Cut(rest, `identity="`); ok {
					id, _, _ = strings.Cut(after, `"`)
					return true, nil
				}
			}
		}
		return false, nil
	})
	return id
}

// TestCoordinatedLeaderElection: with the gate on, kube-controller-manager
// announces itself in a LeaseCandidate, leads only once the apiserver made
// it the holder, and steps down (exiting 1, as upstream does) when the
// apiserver prefers another candidate.
func TestCoordinatedLeaderElection(t *testing.T) {
	cfg := framework.StartEnv(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	const lease = "kube-controller-manager" // upstream's default name

	// An older candidate stands alone: the apiserver makes it the holder.
	// It never renews the Lease, which expires within 5s.
	older := stand(t, client, lease, "older-kcm")
	waitHolder(t, client, lease, older.name, 30*time.Second)

	p := start(t, kcmBinary, framework.WriteKubeconfig(t, cfg), append([]string{gateOn, "--controllers=serviceaccount"}, fastElection...)...)
	id := identityOf(t, p)
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(id, host+"_") {
		t.Errorf("identity %q, want the host name, an underscore and a UUID", id)
	}

	// Its LeaseCandidate: named after its identity, in the Lease's
	// namespace, with the binary's versions and upstream's strategy.
	bin := features.BinaryVersion()
	framework.Poll(t, 30*time.Second, "kube-controller-manager's LeaseCandidate", func(ctx context.Context) (bool, error) {
		lc, err := client.CoordinationV1beta1().LeaseCandidates(ns).Get(ctx, id, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		got := fmt.Sprintf("%s %s %s %s", lc.Spec.LeaseName, lc.Spec.BinaryVersion, lc.Spec.EmulationVersion, lc.Spec.Strategy)
		want := fmt.Sprintf("%s %s %d.%d.0 OldestEmulationVersion", lease, strings.TrimPrefix(features.UpstreamKubernetesVersion, "v"), bin.Major(), bin.Minor())
		if got != want || lc.Spec.RenewTime == nil {
			t.Fatalf("LeaseCandidate spec %q, renewTime %v; want %q and a renewTime", got, lc.Spec.RenewTime, want)
		}
		return true, nil
	})

	// While the apiserver prefers the older candidate, kube-controller-manager
	// leaves the Lease alone although it has long expired (uncoordinated,
	// it would take it within a retry period).
	deadline := time.Now().Add(8 * time.Second)
	for time.Now().Before(deadline) {
		l, h, err := holder(ctx, client, lease)
		if err != nil {
			t.Fatal(err)
		}
		if h != older.name {
			t.Fatalf("the Lease passed to %q while the apiserver prefers %q", h, older.name)
		}
		if strings.Contains(p.Log(), "Successfully acquired lease") {
			t.Fatal("kube-controller-manager leads while the apiserver prefers another candidate")
		}
		if time.Now().After(deadline.Add(-time.Second)) && l.Spec.RenewTime.Add(time.Duration(*l.Spec.LeaseDurationSeconds)*time.Second).After(time.Now()) {
			t.Fatal("the older candidate's Lease should have expired by now")
		}
		time.Sleep(200 * time.Millisecond)
	}

	// The older candidate goes: the apiserver elects kube-controller-manager,
	// which leads and renews the Lease.
	older.withdraw(t, client)
	l := waitHolder(t, client, lease, id, 30*time.Second)
	if s := ptr.Deref(l.Spec.Strategy, ""); s != coordinationv1.OldestEmulationVersion {
		t.Errorf("Lease strategy %q, want OldestEmulationVersion", s)
	}
	framework.Poll(t, 15*time.Second, "leading and renewing", func(ctx context.Context) (bool, error) {
		l, h, err := holder(ctx, client, lease)
		return h == id && ptr.Deref(l.Spec.LeaseDurationSeconds, 0) == 4 && strings.Contains(p.Log(), "Successfully acquired lease"), err
	})
	waitDefaultServiceAccount(t, client)

	// A preferred candidate comes back: the apiserver names it the
	// preferred holder, kube-controller-manager stops renewing and exits 1
	// within its renew deadline, and the Lease passes on once it expired.
	older = stand(t, client, lease, "older-kcm")
	framework.Poll(t, 30*time.Second, "preferredHolder set", func(ctx context.Context) (bool, error) {
		l, _, err := holder(ctx, client, lease)
		return l != nil && ptr.Deref(l.Spec.PreferredHolder, "") == older.name, err
	})
	if !p.Wait(15 * time.Second) {
		t.Fatal("kube-controller-manager still runs 15s after the apiserver preferred another holder")
	}
	if code := p.ExitCode(); code != 1 {
		t.Errorf("exit code %d after stepping down, want 1", code)
	}
	if !strings.Contains(p.Log(), "Leader election lost") {
		t.Error(`no "Leader election lost" in the log`)
	}
	waitHolder(t, client, lease, older.name, 30*time.Second)
}

// waitDefaultServiceAccount creates a namespace and waits for the
// serviceaccount controller, which runs only while leading, to give it its
// default ServiceAccount.
func waitDefaultServiceAccount(t *testing.T, client kubernetes.Interface) {
	t.Helper()
	namespace, err := client.CoreV1().Namespaces().Create(context.Background(),
		&v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "leaderelection-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client.CoreV1().Namespaces().Delete(context.Background(), namespace.Name, metav1.DeleteOptions{})
	})
	framework.Poll(t, 20*time.Second, "the default ServiceAccount", func(ctx context.Context) (bool, error) {
		_, err := client.CoreV1().ServiceAccounts(namespace.Name).Get(ctx, "default", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
}

// TestCoordinatedFailoverOnSIGTERM: of two coordinated instances the
// apiserver elects one; on SIGTERM it stops its controllers, withdraws its
// LeaseCandidate and releases the Lease, and the apiserver elects the other
// well within a lease duration.
func TestCoordinatedFailoverOnSIGTERM(t *testing.T) {
	cfg := framework.StartEnv(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	kubeconfig := framework.WriteKubeconfig(t, cfg)
	const lease = "kcm-coordinated-failover"
	// Upstream's timings: a successor that waited for expiry would need
	// 15s.
	args := []string{gateOn, "--leader-elect-resource-name=" + lease, "--controllers=serviceaccount"}
	leader := start(t, kcmBinary, kubeconfig, args...)
	first := identityOf(t, leader)
	// Between candidates of the same versions the apiserver prefers the
	// older LeaseCandidate, by creationTimestamp, which has a resolution of
	// a second: two created within the same second tie, and the apiserver's
	// choice between them flips from one reconcile to the next (v1.37.1), so
	// the second instance starts in a later second.
	var created time.Time
	framework.Poll(t, 30*time.Second, "the first LeaseCandidate", func(ctx context.Context) (bool, error) {
		lc, err := client.CoordinationV1beta1().LeaseCandidates(ns).Get(ctx, first, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err == nil {
			created = lc.CreationTimestamp.Time
		}
		return err == nil, err
	})
	framework.Poll(t, 5*time.Second, "a later second", func(context.Context) (bool, error) {
		return time.Now().Truncate(time.Second).After(created), nil
	})
	standby := start(t, kcmBinary, kubeconfig, args...)
	identityOf(t, standby)

	framework.Poll(t, 60*time.Second, "the older candidate to lead", func(ctx context.Context) (bool, error) {
		_, h, err := holder(ctx, client, lease)
		return h == first && strings.Contains(leader.Log(), "Successfully acquired lease"), err
	})
	framework.Poll(t, 30*time.Second, "both LeaseCandidates", func(ctx context.Context) (bool, error) {
		cands, err := candidatesFor(ctx, client, lease)
		return len(cands) == 2, err
	})
	if strings.Contains(standby.Log(), "Successfully acquired lease") {
		t.Fatal("both instances lead")
	}

	stopped := time.Now()
	if !leader.Stop(syscall.SIGTERM, 20*time.Second) {
		t.Fatal("the leader did not exit within 20s of SIGTERM")
	}
	if code := leader.ExitCode(); code != 0 {
		t.Errorf("the leader exited with %d after SIGTERM, want 0", code)
	}
	if _, err := client.CoordinationV1beta1().LeaseCandidates(ns).Get(context.Background(), first, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the old leader's LeaseCandidate is still there after SIGTERM (get: %v)", err)
	}
	framework.Poll(t, 15*time.Second, "the standby to lead", func(ctx context.Context) (bool, error) {
		_, h, err := holder(ctx, client, lease)
		return h != "" && h != first && strings.Contains(standby.Log(), "Successfully acquired lease"), err
	})
	if took := time.Since(stopped); took >= 15*time.Second {
		t.Errorf("takeover took %s, not less than the lease duration", took)
	} else {
		t.Logf("the standby led %s after SIGTERM", took.Round(100*time.Millisecond))
	}
	waitDefaultServiceAccount(t, client)
}

// TestGateOffTakesAFreeLease: without the gate nothing changes, even on an
// apiserver that coordinates: the process takes the free Lease itself and
// announces no LeaseCandidate.
func TestGateOffTakesAFreeLease(t *testing.T) {
	cfg := framework.StartEnv(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	const lease = "kcm-uncoordinated"
	p := start(t, kcmBinary, framework.WriteKubeconfig(t, cfg), append([]string{"--leader-elect-resource-name=" + lease, "--controllers=serviceaccount"}, fastElection...)...)
	id := identityOf(t, p)
	l := waitHolder(t, client, lease, id, 30*time.Second)
	if l.Spec.Strategy != nil {
		t.Errorf("Lease strategy %q, want none (not coordinated)", *l.Spec.Strategy)
	}
	assertNoCandidates(t, client, lease)
	if !p.Stop(syscall.SIGTERM, 20*time.Second) || p.ExitCode() != 0 {
		t.Errorf("exit after SIGTERM: %v", p.ExitCode())
	}
	if _, h, err := holder(context.Background(), client, lease); err != nil || h != "" {
		t.Errorf("Lease held by %q after SIGTERM (%v), want released", h, err)
	}
}

func assertNoCandidates(t *testing.T, client kubernetes.Interface, lease string) {
	t.Helper()
	cands, err := candidatesFor(context.Background(), client, lease)
	if err != nil {
		t.Fatal(err)
	}
	if len(cands) != 0 {
		t.Errorf("%d LeaseCandidates for %s, want none: %+v", len(cands), lease, cands)
	}
}

// TestCloudControllerManagerIgnoresTheGate: upstream's
// cloud-controller-manager accepts the gate (it is one of the apiserver
// library's) but its leader election does not read it; so does kcm's.
func TestCloudControllerManagerIgnoresTheGate(t *testing.T) {
	cfg := framework.StartEnv(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	const lease = "cloud-controller-manager"
	p := start(t, ccmBinary, framework.WriteKubeconfig(t, cfg), append([]string{gateOn, "--cloud-provider=local"}, fastElection...)...)
	id := identityOf(t, p)
	l := waitHolder(t, client, lease, id, 30*time.Second)
	if l.Spec.Strategy != nil {
		t.Errorf("Lease strategy %q, want none (not coordinated)", *l.Spec.Strategy)
	}
	assertNoCandidates(t, client, lease)
}
