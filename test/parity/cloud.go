package parity

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/kcm-dev/kcm/test/cluster"
	paritycloud "github.com/kcm-dev/kcm/test/parity/cloudprovider"
)

// The cloud-controller-manager binaries of a scenario with cloud: upstream's
// (k8s.io/cloud-provider's command and controllers, hack/tools/ccm) and
// kcm's (cmd/cloud-controller-manager's command, test/parity/cmd/kcm-cloud),
// both with the parity test provider (test/parity/cloudprovider) compiled
// in.
const (
	UpstreamCloudBinary = "upstream-cloud-controller-manager"
	OurCloudBinary      = "kcm-cloud"
)

// Cloud makes a scenario run a cloud-controller-manager beside the
// controller manager, --cloud-provider=parity: upstream's beside upstream
// kube-controller-manager, kcm's beside kcm.
type Cloud struct {
	// Args are appended to both cloud-controller-managers' command lines
	// (cluster.CloudControllerManagerArgs), e.g. --allocate-node-cidrs=true
	// for the node-route-controller, --controllers=… (canonical names).
	Args []string `json:"args,omitempty"`
	// Config is the --cloud-config file's content (the provider's, see
	// test/parity/cloudprovider); empty means none.
	Config string `json:"config,omitempty"`
}

// cloudOptions returns the cloud-controller-manager of a run with binary
// bin, both sides with upstream cloud-controller-manager's command line.
func (s *Scenario) cloudOptions(dir, bin string) (cluster.CloudControllerManagerOptions, error) {
	if s.Cloud == nil {
		return cluster.CloudControllerManagerOptions{}, nil
	}
	args := []string{"--cloud-provider=" + paritycloud.Name}
	if s.Cloud.Config != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return cluster.CloudControllerManagerOptions{}, fmt.Errorf("parity: %w", err)
		}
		path := filepath.Join(dir, "cloud-config.yaml")
		if err := os.WriteFile(path, []byte(s.Cloud.Config), 0o644); err != nil {
			return cluster.CloudControllerManagerOptions{}, fmt.Errorf("parity: %w", err)
		}
		args = append(args, "--cloud-config="+path)
	}
	return cluster.CloudControllerManagerOptions{Binary: bin, ExtraArgs: append(args, s.Cloud.Args...)}, nil
}

// prepareCloud builds the two cloud-controller-manager binaries into the
// binary directory when a scenario needs them: upstream's through
// hack/tools/build.sh (a no-op when current), kcm's with go build.
func prepareCloud(ctx context.Context, scenarios []*Scenario, opts Options) error {
	need := false
	for _, s := range scenarios {
		need = need || s.Cloud != nil
	}
	if !need {
		return nil
	}
	root, err := cluster.RepoRoot()
	if err != nil {
		return err
	}
	binDir := opts.BinDir
	if binDir == "" {
		binDir = os.Getenv(cluster.BinDirEnv)
	}
	if binDir == "" {
		binDir = filepath.Join(root, "_output", "bin")
	}
	if binDir, err = filepath.Abs(binDir); err != nil {
		return err
	}
	for _, cmd := range []*exec.Cmd{
		exec.CommandContext(ctx, filepath.Join(root, "hack", "tools", "build.sh"), UpstreamCloudBinary),
		exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(binDir, OurCloudBinary), "./test/parity/cmd/kcm-cloud"),
	} {
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "OUT="+binDir, "CGO_ENABLED=0")
		opts.Logf("parity: %s", strings.Join(cmd.Args, " "))
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("parity: %s: %w\n%s", strings.Join(cmd.Args, " "), err, out)
		}
	}
	return nil
}

func (r *stepRunner) cloudControllerManager(ctx context.Context, action string) error {
	var err error
	switch action {
	case cmStop:
		err = r.cluster.StopCloudControllerManager()
	case cmStart:
		if err = r.cluster.StartCloudControllerManager(ctx); err == nil {
			err = r.cluster.WaitForCloudControllerManagerLeader(ctx)
		}
	case cmRestart:
		if err = r.cluster.RestartCloudControllerManager(ctx); err == nil {
			err = r.cluster.WaitForCloudControllerManagerLeader(ctx)
		}
	default:
		err = fmt.Errorf("unknown action %q", action)
	}
	if err != nil {
		return fmt.Errorf("%s cloud-controller-manager: %w", action, err)
	}
	return nil
}
