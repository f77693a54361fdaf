package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Component names a process of the cluster; it is also its log file's name.
type Component string

// The cluster's processes.
const (
	Etcd              Component = "etcd"
	APIServer         Component = "kube-apiserver"
	Scheduler         Component = "kube-scheduler"
	Kwok              Component = "kwok"
	ControllerManager Component = "kube-controller-manager"
	// CloudControllerManager is in cloudcontrollermanager.go.
)

// stopOrder is the order Stop stops processes in: clients first, storage last.
func stopOrder() []Component {
	return []Component{CloudControllerManager, ControllerManagerStandby, ControllerManager, Kwok, Scheduler, APIServer, Etcd}
}

// Cluster is a running local control plane. Its exported fields are set by
// Start and never change; use the methods for what does (processes).
type Cluster struct {
	// WorkDir holds every file below.
	WorkDir string
	// PKI lists the certificate and key files, kubeadm's layout.
	PKI PKI
	// Kubeconfigs: system:masters admin, system:kube-controller-manager,
	// system:kube-scheduler, and the one kwok uses (a cluster admin).
	AdminKubeconfig, ControllerManagerKubeconfig, SchedulerKubeconfig, KwokKubeconfig string
	// AuditPolicyPath and AuditLogPath: see the audit policy in apiserver.go;
	// the log is JSON lines of audit.k8s.io/v1 Events.
	AuditPolicyPath, AuditLogPath string
	// LogDir holds <component>.log for each process, appended on restarts.
	LogDir string
	// APIServerURL is https://127.0.0.1:<port>.
	APIServerURL string
	// AdvertiseAddress is the apiserver's (unreachable) --advertise-address.
	AdvertiseAddress string
	// Ports are the listening ports, all on 127.0.0.1.
	Ports Ports
	// RESTConfig is the admin's; copy it (rest.CopyConfig) before changing it.
	RESTConfig *rest.Config
	// Client is an admin clientset.
	Client kubernetes.Interface

	opts        Options
	auth        *authority
	etcdDataDir string

	opMu sync.Mutex // serializes Start/Stop and controller-manager operations
	kcm  kcmState   // guarded by opMu
	ccm  kcmState   // guarded by opMu: the cloud-controller-manager's
	// kcmPort is the promoted standby's port (0: Ports.ControllerManager);
	// standbyPort and standbyPrev the running standby's port and the
	// Lease holder it must replace (standby.go). Guarded by opMu.
	kcmPort, standbyPort int
	standbyPrev          string

	mu    sync.Mutex // guards procs
	procs map[Component]*process
}

// Start lays out the work dir, then starts etcd, kube-apiserver,
// kube-scheduler, kwok and kube-controller-manager, each waited for until it
// reports healthy. ctx bounds only the start; the processes run until Stop.
// On error, everything already started is stopped again.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	c, err := newCluster(opts)
	if err != nil {
		return nil, err
	}
	c.opMu.Lock()
	err = c.startAll(ctx)
	c.opMu.Unlock()
	if err != nil {
		if stopErr := c.Stop(); stopErr != nil {
			err = errors.Join(err, stopErr)
		}
		return nil, err
	}
	return c, nil
}

// newCluster checks the binaries and writes every file the processes need.
func newCluster(opts Options) (*Cluster, error) {
	bins := []string{opts.Etcd, opts.APIServer}
	if !opts.SkipScheduler {
		bins = append(bins, opts.Scheduler)
	}
	if !opts.SkipKwok {
		bins = append(bins, opts.Kwok)
	}
	if !opts.ControllerManager.Disabled {
		bins = append(bins, opts.ControllerManager.Binary)
	}
	if opts.CloudControllerManager.Binary != "" {
		bins = append(bins, opts.binary(opts.CloudControllerManager.Binary, ""))
	}
	for _, b := range bins {
		if err := checkExecutable(b); err != nil {
			return nil, err
		}
	}

	wd := opts.WorkDir
	c := &Cluster{
		WorkDir:                     wd,
		PKI:                         newPKI(filepath.Join(wd, "pki")),
		AdminKubeconfig:             filepath.Join(wd, "admin.conf"),
		ControllerManagerKubeconfig: filepath.Join(wd, "controller-manager.conf"),
		SchedulerKubeconfig:         filepath.Join(wd, "scheduler.conf"),
		KwokKubeconfig:              filepath.Join(wd, "kwok.conf"),
		AuditPolicyPath:             filepath.Join(wd, "audit-policy.yaml"),
		AuditLogPath:                filepath.Join(wd, "audit.log"),
		LogDir:                      filepath.Join(wd, "logs"),
		AdvertiseAddress:            opts.AdvertiseAddress,
		opts:                        opts,
		etcdDataDir:                 filepath.Join(wd, "etcd"),
		procs:                       map[Component]*process{},
	}
	if err := c.prepareWorkDir(); err != nil {
		return nil, err
	}
	ports, err := allocatePorts(7)
	if err != nil {
		return nil, err
	}
	c.Ports = Ports{
		EtcdClient: ports[0], EtcdPeer: ports[1], APIServer: ports[2],
		Scheduler: ports[3], ControllerManager: ports[4], Kwok: ports[5],
		CloudControllerManager: ports[6],
	}
	c.APIServerURL = "https://127.0.0.1:" + strconv.Itoa(c.Ports.APIServer)
	if c.AdvertiseAddress == "" {
		if c.AdvertiseAddress, err = pickAdvertiseAddress(); err != nil {
			return nil, err
		}
	}

	opts.Logf("cluster: generating PKI and kubeconfigs in %s", wd)
	if c.auth, err = generatePKI(c.PKI, c.AdvertiseAddress); err != nil {
		return nil, err
	}
	name := opts.ClusterName
	for _, k := range []struct {
		path, user string
		groups     []string
	}{
		{c.AdminKubeconfig, adminUser, []string{adminGroup}},
		{c.ControllerManagerKubeconfig, controllerManagerUser, nil},
		{c.SchedulerKubeconfig, schedulerUser, nil},
		{c.KwokKubeconfig, kwokUser, []string{adminGroup}},
	} {
		if err := writeKubeconfig(k.path, c.APIServerURL, name, c.auth, k.user, k.groups...); err != nil {
			return nil, err
		}
	}
	if err := writeAuditPolicy(c.AuditPolicyPath); err != nil {
		return nil, err
	}

	if c.RESTConfig, err = loadRESTConfig(c.AdminKubeconfig); err != nil {
		return nil, err
	}
	c.RESTConfig.QPS, c.RESTConfig.Burst = adminQPS, adminBurst
	if c.Client, err = kubernetes.NewForConfig(c.RESTConfig); err != nil {
		return nil, fmt.Errorf("cluster: admin client: %w", err)
	}
	return c, nil
}

// workDirEntries are what a previous run left in the work dir; only these
// are removed before a new start.
func workDirEntries() []string {
	return []string{
		"pki", "etcd", "logs", "admin.conf", "controller-manager.conf", "scheduler.conf",
		"kwok.conf", "audit-policy.yaml", "audit.log",
	}
}

func (c *Cluster) prepareWorkDir() error {
	for _, e := range workDirEntries() {
		if err := os.RemoveAll(filepath.Join(c.WorkDir, e)); err != nil {
			return fmt.Errorf("cluster: clean work dir: %w", err)
		}
	}
	for _, d := range []string{c.WorkDir, c.LogDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("cluster: %w", err)
		}
	}
	if err := os.MkdirAll(c.etcdDataDir, 0o700); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	return nil
}

func (c *Cluster) startAll(ctx context.Context) error {
	c.opts.Logf("cluster: starting etcd on 127.0.0.1:%d", c.Ports.EtcdClient)
	if err := c.startEtcd(ctx); err != nil {
		return err
	}
	c.opts.Logf("cluster: starting kube-apiserver on %s", c.APIServerURL)
	if err := c.startAPIServer(ctx); err != nil {
		return err
	}

	// The scheduler and kwok start side by side.
	var sched, kwok *process
	var err error
	if !c.opts.SkipScheduler {
		c.opts.Logf("cluster: starting kube-scheduler on 127.0.0.1:%d", c.Ports.Scheduler)
		if sched, err = c.startScheduler(); err != nil {
			return err
		}
	}
	if !c.opts.SkipKwok {
		c.opts.Logf("cluster: starting kwok on 127.0.0.1:%d", c.Ports.Kwok)
		if kwok, err = c.startKwok(); err != nil {
			return err
		}
	}
	if sched != nil {
		if err := c.waitScheduler(ctx, sched); err != nil {
			return err
		}
	}
	if kwok != nil {
		if err := c.waitKwok(ctx, kwok); err != nil {
			return err
		}
	}

	if !c.opts.ControllerManager.Disabled {
		if err := c.startControllerManager(ctx, c.opts.ControllerManager); err != nil {
			return err
		}
	}
	if c.opts.CloudControllerManager.Binary != "" {
		if err := c.startCloudControllerManager(ctx); err != nil {
			return err
		}
	}
	c.opts.Logf("cluster: ready; export KUBECONFIG=%s", c.AdminKubeconfig)
	return nil
}

// start runs one component, replacing the record of a previous run of it.
func (c *Cluster) start(name Component, bin string, args []string) (*process, error) {
	p, err := startProcess(name, bin, args, c.WorkDir, c.LogPath(name))
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.procs[name] = p
	c.mu.Unlock()
	return p, nil
}

// proc returns the latest process of a component, nil if never started.
func (c *Cluster) proc(name Component) *process {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.procs[name]
}

// BinDir is the directory binaries are looked up in (Options.BinDir
// resolved).
func (c *Cluster) BinDir() string { return c.opts.BinDir }

// Stop stops every process the cluster started, controller manager first and
// etcd last: SIGTERM to its process group, SIGKILL after Options.StopTimeout.
// It is safe to call more than once and after a failed Start. The work dir is
// left in place.
func (c *Cluster) Stop() error {
	c.opMu.Lock()
	defer c.opMu.Unlock()
	var errs []error
	order := stopOrder()
	// Components started on demand (kwok partitions) go first, resumed
	// if paused.
	c.mu.Lock()
	var extra []Component
	for name := range c.procs {
		if !slices.Contains(order, name) {
			extra = append(extra, name)
		}
	}
	c.mu.Unlock()
	slices.Sort(extra)
	for _, name := range extra {
		_ = c.proc(name).signalGroup(syscall.SIGCONT)
	}
	for _, name := range append(extra, order...) {
		p := c.proc(name)
		if p == nil {
			continue
		}
		if !p.exited() {
			c.opts.Logf("cluster: stopping %s (pid %d)", name, p.pid())
		}
		if err := p.stop(c.opts.StopTimeout); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// PID returns the pid of a component's process, 0 if it is not running.
// Each component is exec'd directly, so this is the binary itself (for
// /proc/<pid>/stat and /proc/<pid>/status).
func (c *Cluster) PID(name Component) int {
	p := c.proc(name)
	if p == nil || p.exited() {
		return 0
	}
	return p.pid()
}

// PIDs returns the pids of every running component.
func (c *Cluster) PIDs() map[Component]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := make(map[Component]int, len(c.procs))
	for name, p := range c.procs {
		if !p.exited() {
			m[name] = p.pid()
		}
	}
	return m
}

// LogPath returns the log file of a component.
func (c *Cluster) LogPath(name Component) string {
	return filepath.Join(c.LogDir, string(name)+".log")
}

// Options returns the options the cluster runs with, defaults filled in.
func (c *Cluster) Options() Options { return c.opts }

// checkExecutable fails with a hint when a binary is missing.
func checkExecutable(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("cluster: binary %s: %w (build it: hack/tools/build.sh, or go build -o _output/bin/kube-controller-manager ./cmd/kube-controller-manager)", path, err)
	}
	if st.IsDir() || st.Mode()&0o111 == 0 {
		return fmt.Errorf("cluster: %s is not an executable file", path)
	}
	return nil
}
