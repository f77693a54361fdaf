package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kcm-dev/kcm/test/cluster"
)

// TestClusterWithUpstream starts the whole control plane with upstream's
// kube-controller-manager and checks what only a working controller manager,
// scheduler and kwok together produce, then that Stop leaves nothing behind
// and that the same work dir serves a second run.
func TestClusterWithUpstream(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a whole control plane")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	workDir := t.TempDir()

	c, err := cluster.Start(ctx, cluster.Options{
		WorkDir:           workDir,
		ControllerManager: cluster.ControllerManagerOptions{Binary: cluster.UpstreamControllerManager},
		Logf:              t.Logf,
	})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = c.Stop()
		}
	})

	pids := c.PIDs()
	for _, comp := range []cluster.Component{cluster.Etcd, cluster.APIServer, cluster.Scheduler, cluster.Kwok, cluster.ControllerManager} {
		if pids[comp] == 0 {
			t.Fatalf("no pid for %s: %v", comp, pids)
		}
	}

	t.Run("default ServiceAccount in a new namespace", func(t *testing.T) {
		ns := createNamespace(ctx, t, c, "sa-check")
		waitUntil(ctx, t, "ServiceAccount default in "+ns, func() error {
			_, err := c.Client.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
			return err
		})
	})

	var node string
	t.Run("kwok node Ready and untainted", func(t *testing.T) {
		names, err := c.CreateNodes(ctx, cluster.DefaultNodePrefix, 1)
		if err != nil {
			t.Fatal(err)
		}
		node = names[0]
		if err := c.WaitForNodesReady(ctx, names...); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("bare pod scheduled and Running", func(t *testing.T) {
		if node == "" {
			t.Skip("no ready node")
		}
		ns := createNamespace(ctx, t, c, "pod-check")
		waitUntil(ctx, t, "ServiceAccount default in "+ns, func() error {
			_, err := c.Client.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
			return err
		})
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "bare"},
			Spec: corev1.PodSpec{
				NodeSelector: map[string]string{"kubernetes.io/hostname": node},
				Containers:   []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
			},
		}
		if _, err := c.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitUntil(ctx, t, "pod "+ns+"/bare Running on "+node, func() error {
			p, err := c.Client.CoreV1().Pods(ns).Get(ctx, "bare", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if p.Spec.NodeName != node || p.Status.Phase != corev1.PodRunning {
				return fmt.Errorf("node %q phase %q", p.Spec.NodeName, p.Status.Phase)
			}
			return nil
		})
	})

	t.Run("controller manager restart", func(t *testing.T) {
		if err := c.WaitForControllerManagerLeader(ctx); err != nil {
			t.Fatal(err)
		}
		old := c.PID(cluster.ControllerManager)
		if err := c.RestartControllerManager(ctx); err != nil {
			t.Fatal(err)
		}
		if pid := c.PID(cluster.ControllerManager); pid == 0 || pid == old {
			t.Fatalf("pid after restart %d, before %d", pid, old)
		}
		if err := c.WaitForControllerManagerLeader(ctx); err != nil {
			t.Fatal(err)
		}
	})

	if _, err := os.Stat(c.AuditLogPath); err != nil {
		t.Errorf("audit log: %v", err)
	} else if b, err := os.ReadFile(c.AuditLogPath); err != nil || !strings.Contains(string(b), `"system:kube-controller-manager"`) {
		t.Errorf("audit log has no controller-manager request (err %v)", err)
	}

	stopped = true
	if err := c.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	assertNoChildren(t, c.PIDs(), pids)

	// A second run in the same work dir: fresh PKI and etcd data.
	c2, err := cluster.Start(ctx, cluster.Options{
		WorkDir:           workDir,
		SkipKwok:          true,
		SkipScheduler:     true,
		ControllerManager: cluster.ControllerManagerOptions{Disabled: true},
		Logf:              t.Logf,
	})
	if err != nil {
		t.Fatalf("second Start: %v", err)
	}
	nodes, err := c2.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	stopErr := c2.Stop()
	if err != nil {
		t.Fatalf("second run: list nodes: %v", err)
	}
	if len(nodes.Items) != 0 {
		t.Errorf("second run sees %d nodes from the first", len(nodes.Items))
	}
	if stopErr != nil {
		t.Fatalf("second Stop: %v", stopErr)
	}
	assertNoChildren(t, c2.PIDs(), nil)
}

func createNamespace(ctx context.Context, t *testing.T, c *cluster.Cluster, name string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	return name
}

// waitUntil polls check every 100ms until it returns nil, failing the test
// after a minute.
func waitUntil(ctx context.Context, t *testing.T, what string, check func() error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		err := check()
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v (last: %v)", what, ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// assertNoChildren checks that no process we started is alive and that this
// test process has no child left at all.
func assertNoChildren(t *testing.T, running, started map[cluster.Component]int) {
	t.Helper()
	if len(running) != 0 {
		t.Errorf("still running after Stop: %v", running)
	}
	for comp, pid := range started {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("%s (pid %d) still exists after Stop (kill 0: %v)", comp, pid, err)
		}
	}
	if kids := children(t); len(kids) != 0 {
		t.Errorf("child processes left after Stop: %v", kids)
	}
}

// children lists the pids whose parent is this process, from /proc.
func children(t *testing.T) []string {
	t.Helper()
	self := strconv.Itoa(os.Getpid())
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	var kids []string
	for _, s := range stats {
		b, err := os.ReadFile(s)
		if err != nil {
			continue // exited meanwhile
		}
		// pid (comm) state ppid …; comm may contain spaces and parentheses.
		rest := string(b[strings.LastIndexByte(string(b), ')')+1:])
		fields := strings.Fields(rest)
		if len(fields) >= 2 && fields[1] == self {
			kids = append(kids, filepath.Base(filepath.Dir(s))+" "+string(b[:strings.LastIndexByte(string(b), ')')+1]))
		}
	}
	return kids
}

// TestStartFailureStopsEverything: a controller manager that exits at once
// fails Start with its log's tail, and what had started is stopped again.
func TestStartFailureStopsEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and kube-apiserver")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := cluster.Start(ctx, cluster.Options{
		WorkDir:       t.TempDir(),
		SkipKwok:      true,
		SkipScheduler: true,
		ControllerManager: cluster.ControllerManagerOptions{
			Binary:    cluster.UpstreamControllerManager,
			ExtraArgs: []string{"--no-such-flag=1"},
		},
		Logf: t.Logf,
	})
	if err == nil {
		_ = c.Stop()
		t.Fatal("Start succeeded with a controller manager that cannot start")
	}
	if !strings.Contains(err.Error(), "exited early") || !strings.Contains(err.Error(), "no-such-flag") {
		t.Errorf("error does not explain the exit: %v", err)
	}
	if kids := children(t); len(kids) != 0 {
		t.Errorf("child processes left after a failed Start: %v", kids)
	}
}
