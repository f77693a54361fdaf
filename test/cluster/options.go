package cluster

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Binary names, as hack/tools/build.sh and `go build` lay them out in the
// binary directory.
const (
	EtcdBinary                = "etcd"
	APIServerBinary           = "kube-apiserver"
	SchedulerBinary           = "kube-scheduler"
	KwokBinary                = "kwok"
	OurControllerManager      = "kube-controller-manager"
	UpstreamControllerManager = "upstream-kube-controller-manager"
	// KwokStagesDir is the directory, inside the binary directory, holding
	// kwok's default stage configurations.
	KwokStagesDir = "kwok-stages"
)

// BinDirEnv names the environment variable that overrides where binaries
// are looked up when Options.BinDir is empty.
const BinDirEnv = "KCM_BIN_DIR"

// modulePath is this repository's Go module, used to find its root.
const modulePath = "github.com/kcm-dev/kcm"

// Defaults used when the matching Options field is zero.
const (
	DefaultClusterName      = "kubernetes"
	DefaultStartTimeout     = 2 * time.Minute
	DefaultStopTimeout      = 20 * time.Second
	DefaultServiceCIDR      = "10.96.0.0/16"
	DefaultClusterCIDR      = "10.244.0.0/16"
	defaultServiceIP        = "10.96.0.1"
	defaultServiceDNSDomain = "cluster.local"
)

// The IPv6 ranges a DualStack cluster adds (ULA prefixes).
const (
	DualStackServiceCIDRv6 = "fd00:10:96::/112"
	DualStackClusterCIDRv6 = "fd00:10:244::/56"
)

// Options configures a Cluster. Only WorkDir is required.
type Options struct {
	// WorkDir holds everything the cluster writes. It is created if missing;
	// what a previous run left in it (PKI, etcd data, logs, audit log) is
	// removed first, anything else is left alone.
	WorkDir string

	// BinDir is where binaries are looked up by name. Empty means $KCM_BIN_DIR,
	// else _output/bin at the root of this repository (found from the current
	// directory upwards).
	BinDir string

	// Per-binary overrides: a bare name is looked up in BinDir, anything with a
	// path separator is used as is. Empty means the default name.
	Etcd, APIServer, Scheduler, Kwok string

	// KwokStages is the directory of kwok stage YAMLs. Empty means
	// BinDir/kwok-stages.
	KwokStages string

	// ControllerManager selects and configures kube-controller-manager.
	ControllerManager ControllerManagerOptions

	// CloudControllerManager, if its Binary is set, runs a
	// cloud-controller-manager after kube-controller-manager.
	CloudControllerManager CloudControllerManagerOptions

	// SkipScheduler and SkipKwok leave those processes out.
	SkipScheduler, SkipKwok bool

	// ClusterName is --cluster-name for the controller manager and the
	// cluster's name in kubeconfigs. Empty means "kubernetes" (kubeadm's).
	ClusterName string

	// AdvertiseAddress is the apiserver's --advertise-address: it must not be
	// a loopback address. Empty means the first of a few private addresses
	// that no local interface carries.
	AdvertiseAddress string

	// DualStack gives the cluster IPv4 and IPv6 Service and pod ranges: the
	// apiserver's --service-cluster-ip-range and the controller manager's
	// --service-cluster-ip-range and --cluster-cidr get an IPv6 range after
	// the IPv4 one, so that nodes get a podCIDR of each family (kwok then
	// gives pods an IP of each) and Services may be dual-stack.
	DualStack bool

	// KwokParallelism, if positive, is how many pod stages, node stages and
	// node leases each kwok works on at once (kwok's default: 4 each). A
	// loaded apiserver answers slowly, and four patches in flight then
	// leave pods Pending for minutes: 2,000 nodes' roll ran at 3 pods/s a
	// kwok.
	KwokParallelism int

	// ExtraAPIServerArgs and ExtraSchedulerArgs and ExtraKwokArgs are appended
	// to the respective command lines (later flags win).
	ExtraAPIServerArgs, ExtraSchedulerArgs, ExtraKwokArgs []string

	// StartTimeout bounds the wait for each process to become ready.
	StartTimeout time.Duration
	// StopTimeout bounds the wait after SIGTERM before SIGKILL.
	StopTimeout time.Duration

	// Logf, if set, receives progress messages (e.g. t.Logf, log.Printf). It is
	// only called from Start, Stop and the other methods, never from a
	// background goroutine.
	Logf func(format string, args ...any)
}

// ControllerManagerOptions selects the kube-controller-manager binary and
// its extra arguments.
type ControllerManagerOptions struct {
	// Binary is a name in BinDir (OurControllerManager, the default, or
	// UpstreamControllerManager) or a path.
	Binary string
	// ExtraArgs are appended to kubeadm's command line.
	ExtraArgs []string
	// Disabled keeps Start from starting it; StartControllerManager still can.
	Disabled bool
}

// withDefaults returns a copy of o with every zero field defaulted and every
// binary resolved to a path.
func (o Options) withDefaults() (Options, error) {
	if o.WorkDir == "" {
		return o, errors.New("cluster: Options.WorkDir is required")
	}
	wd, err := filepath.Abs(o.WorkDir)
	if err != nil {
		return o, fmt.Errorf("cluster: work dir: %w", err)
	}
	o.WorkDir = wd
	if o.BinDir == "" {
		o.BinDir = os.Getenv(BinDirEnv)
	}
	if o.BinDir == "" {
		root, err := RepoRoot()
		if err != nil {
			return o, err
		}
		o.BinDir = filepath.Join(root, "_output", "bin")
	}
	if o.BinDir, err = filepath.Abs(o.BinDir); err != nil {
		return o, fmt.Errorf("cluster: bin dir: %w", err)
	}
	o.Etcd = o.binary(o.Etcd, EtcdBinary)
	o.APIServer = o.binary(o.APIServer, APIServerBinary)
	o.Scheduler = o.binary(o.Scheduler, SchedulerBinary)
	o.Kwok = o.binary(o.Kwok, KwokBinary)
	o.ControllerManager.Binary = o.binary(o.ControllerManager.Binary, OurControllerManager)
	if o.KwokStages == "" {
		o.KwokStages = filepath.Join(o.BinDir, KwokStagesDir)
	}
	if o.ClusterName == "" {
		o.ClusterName = DefaultClusterName
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	if o.StopTimeout <= 0 {
		o.StopTimeout = DefaultStopTimeout
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	return o, nil
}

// binary resolves a binary name or path; def is the name used when v is empty.
func (o Options) binary(v, def string) string {
	if v == "" {
		v = def
	}
	if strings.ContainsRune(v, filepath.Separator) {
		if abs, err := filepath.Abs(v); err == nil {
			return abs
		}
		return v
	}
	return filepath.Join(o.BinDir, v)
}

// RepoRoot finds the root of this repository: the closest directory, from
// the current one upwards, whose go.mod declares module github.com/kcm-dev/kcm.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("cluster: %w", err)
	}
	for {
		if isRepoRoot(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("cluster: no go.mod for module %s above the current directory; set Options.BinDir or $%s", modulePath, BinDirEnv)
		}
		dir = parent
	}
}

func isRepoRoot(goMod string) bool {
	f, err := os.Open(goMod)
	if err != nil {
		return false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if fields := strings.Fields(s.Text()); len(fields) == 2 && fields[0] == "module" {
			return fields[1] == modulePath
		}
	}
	return false
}
