package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kcm-dev/kcm/test/cluster"
)

// failoverPhase is a failover at the scale scenario's size: a second
// controller manager (the same binary and command line) is started as a
// standby and given time to sync, then the leader is stopped (SIGTERM) or
// killed (SIGKILL) and a Deployment is created at once. Figures, in seconds
// from the leader's end: the successor holding the Lease, its first write
// other than to a Lease (from the audit log), the last of its controllers'
// caches synced (its "Caches are synced" log lines), and the Deployment's
// pod available.
func failoverPhase(kill bool) func(ctx context.Context, env *Env) error {
	return func(ctx context.Context, env *Env) error {
		c := env.Cluster
		watchesBefore, werr := apiserverWatches(ctx, c)
		if _, err := c.StartStandbyControllerManager(ctx); err != nil {
			return err
		}
		nodes, _, _ := env.Params.scaleSizes()
		if err := sleepCtx(ctx, standbyWarmup(nodes)); err != nil {
			return err
		}
		// What the standby costs: its memory, and the apiserver its
		// watches (a cold standby has none but its Lease polls).
		if smp, err := ReadSample("/proc", c.PID(cluster.ControllerManagerStandby), time.Now()); err == nil {
			env.Figure("standby RSS MiB", float64(smp.RSSBytes)/(1<<20))
		}
		if watchesAfter, err := apiserverWatches(ctx, c); err == nil && werr == nil {
			env.Figure("standby watches", watchesAfter-watchesBefore)
		}
		start := time.Now()
		var err error
		if kill {
			err = c.KillControllerManager()
		} else {
			err = c.StopControllerManager()
		}
		if err != nil {
			return err
		}
		name := "failover-term"
		if kill {
			name = "failover-kill"
		}
		if _, err := env.Client.AppsV1().Deployments(env.Namespace).Create(ctx, newDeployment(name, env.Namespace, 1), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create deployment %s: %w", name, err)
		}
		if err := c.PromoteStandby(); err != nil {
			return err
		}
		if err := c.WaitForControllerManagerLeader(ctx); err != nil {
			return err
		}
		env.Figure("failover: Lease taken s", time.Since(start).Seconds())
		err = env.waitFor(ctx, "Deployment "+name+" available", func() (bool, string) {
			d, err := env.Deployments.Deployments(env.Namespace).Get(name)
			if err != nil {
				return false, err.Error()
			}
			return d.Status.AvailableReplicas == 1, fmt.Sprintf("%d available", d.Status.AvailableReplicas)
		})
		if err != nil {
			return err
		}
		env.Figure("failover: new pod available s", time.Since(start).Seconds())
		if t, err := firstWriteAfter(c.AuditLogPath, start); err == nil {
			env.Figure("failover: first write s", t.Sub(start).Seconds())
		} else {
			env.Logf("bench: %s: first write: %v", name, err)
		}
		if t, err := lastCachesSynced(c.LogPath(cluster.ControllerManagerStandby), start); err == nil {
			env.Figure("failover: controllers synced s", t.Sub(start).Seconds())
		} else {
			env.Logf("bench: %s: caches synced: %v", name, err)
		}
		return nil
	}
}

// apiserverWatches is the number of watches the apiserver serves now
// (apiserver_longrunning_requests{verb="WATCH"}, summed).
func apiserverWatches(ctx context.Context, c *cluster.Cluster) (float64, error) {
	body, err := c.Client.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return 0, err
	}
	return sumGauge(body, "apiserver_longrunning_requests", `verb="WATCH"`)
}

// sumGauge sums the series of a family whose labels contain match.
func sumGauge(body []byte, family, match string) (float64, error) {
	var sum float64
	s := bufio.NewScanner(bytes.NewReader(body))
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		line := s.Text()
		if !strings.HasPrefix(line, family+"{") || !strings.Contains(line, match) {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			return 0, err
		}
		sum += v
	}
	return sum, s.Err()
}

// standbyWarmup is how long the standby gets to list what its informers
// watch before the leader goes: half a minute, and ten seconds more per
// thousand nodes.
func standbyWarmup(nodes int) time.Duration {
	return 30*time.Second + time.Duration(nodes/100)*time.Second
}

// firstWriteAfter returns the time of the controller manager's first write
// at or after start that is not to a Lease (leader election), read from the
// audit log, which records only the controller manager's users.
func firstWriteAfter(path string, start time.Time) (time.Time, error) {
	events, err := cluster.ReadAuditEvents(path)
	if err != nil {
		return time.Time{}, err
	}
	var first time.Time
	for _, e := range events {
		switch e.Verb {
		case "create", "update", "patch", "delete", "deletecollection":
		default:
			continue
		}
		if e.ObjectRef != nil && e.ObjectRef.Resource == "leases" {
			continue
		}
		t := e.RequestReceivedTimestamp
		if !t.Before(start) && (first.IsZero() || t.Before(first)) {
			first = t
		}
	}
	if first.IsZero() {
		return first, fmt.Errorf("no write after %s", start.Format(time.RFC3339))
	}
	return first, nil
}

// lastCachesSynced returns the time of the last "Caches are synced" line
// (client-go's WaitForNamedCacheSync, which both binaries' controllers
// call) at or after start in a klog-formatted log.
func lastCachesSynced(path string, start time.Time) (time.Time, error) {
	f, err := os.Open(path)
	if err != nil {
		return time.Time{}, err
	}
	defer f.Close()
	var last time.Time
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		line := s.Text()
		if !strings.Contains(line, "Caches are synced") {
			continue
		}
		t, ok := klogTime(line, start)
		if ok && !t.Before(start) && t.After(last) {
			last = t
		}
	}
	if last.IsZero() {
		return last, fmt.Errorf("no \"Caches are synced\" in %s after %s", path, start.Format(time.RFC3339))
	}
	return last, s.Err()
}

// klogTime reads a klog header ("I1206 03:30:15.985587 ...") in ref's year
// and location.
func klogTime(line string, ref time.Time) (time.Time, bool) {
	if len(line) < 21 {
		return time.Time{}, false
	}
	t, err := time.ParseInLocation("0102 15:04:05.000000", line[1:21], ref.Location())
	if err != nil {
		return time.Time{}, false
	}
	return t.AddDate(ref.Year(), 0, 0), true
}
