package cluster

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
)

// Service-account issuer, kubeadm's.
const serviceAccountIssuer = "https://kubernetes.default.svc." + defaultServiceDNSDomain

// auditPolicy records every request a controller manager makes: as itself
// (system:kube-controller-manager) and as the per-controller service
// accounts it uses with --use-service-account-credentials. Nothing else is
// recorded. Writes of Events are recorded with their bodies (Request level)
// so that the benchmark can tell when the event they record occurred (a
// controller posts its Events asynchronously, often well after the work);
// everything else at Metadata level. RequestReceived is omitted so each
// request yields one event (two for long-running ones such as watches:
// ResponseStarted and ResponseComplete); count distinct auditIDs.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages:
- RequestReceived
rules:
- level: Request
  users: ["system:kube-controller-manager"]
  verbs: ["create", "update", "patch"]
  resources: [{group: "", resources: ["events"]}, {group: "events.k8s.io", resources: ["events"]}]
- level: Request
  userGroups: ["system:serviceaccounts:kube-system"]
  verbs: ["create", "update", "patch"]
  resources: [{group: "", resources: ["events"]}, {group: "events.k8s.io", resources: ["events"]}]
- level: Metadata
  users: ["system:kube-controller-manager"]
- level: Metadata
  userGroups: ["system:serviceaccounts:kube-system"]
- level: None
`

// auditLogMaxSizeMB keeps the apiserver from rotating the audit log (its
// default, through lumberjack, is every 100 MB).
const auditLogMaxSizeMB = 1 << 20

// apiServerArgs is kubeadm's kube-apiserver command line adapted to local
// paths, bound to 127.0.0.1, plus the audit log.
func (c *Cluster) apiServerArgs() []string {
	p := c.PKI
	args := []string{
		"--advertise-address=" + c.AdvertiseAddress,
		"--allow-privileged=true",
		"--authorization-mode=Node,RBAC",
		"--bind-address=127.0.0.1",
		"--cert-dir=" + p.Dir,
		"--client-ca-file=" + p.CACert,
		"--enable-admission-plugins=NodeRestriction",
		"--enable-bootstrap-token-auth=true",
		"--etcd-servers=" + c.etcdURL(),
		"--kubelet-client-certificate=" + p.KubeletClientCert,
		"--kubelet-client-key=" + p.KubeletClientKey,
		"--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname",
		"--proxy-client-cert-file=" + p.FrontProxyClientCert,
		"--proxy-client-key-file=" + p.FrontProxyClientKey,
		"--requestheader-allowed-names=front-proxy-client",
		"--requestheader-client-ca-file=" + p.FrontProxyCACert,
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-username-headers=X-Remote-User",
		"--secure-port=" + strconv.Itoa(c.Ports.APIServer),
		"--service-account-issuer=" + serviceAccountIssuer,
		"--service-account-key-file=" + p.SAPub,
		"--service-account-signing-key-file=" + p.SAKey,
		"--service-cluster-ip-range=" + c.serviceCIDRs(),
		"--tls-cert-file=" + p.APIServerCert,
		"--tls-private-key-file=" + p.APIServerKey,
		"--audit-policy-file=" + c.AuditPolicyPath,
		"--audit-log-path=" + c.AuditLogPath,
		"--audit-log-format=json",
		"--audit-log-mode=blocking",
		"--audit-log-maxsize=" + strconv.Itoa(auditLogMaxSizeMB),
	}
	return append(args, c.opts.ExtraAPIServerArgs...)
}

func writeAuditPolicy(path string) error {
	if err := os.WriteFile(path, []byte(auditPolicy), 0o644); err != nil {
		return fmt.Errorf("cluster: write audit policy: %w", err)
	}
	return nil
}

func (c *Cluster) startAPIServer(ctx context.Context) error {
	p, err := c.start(APIServer, c.opts.APIServer, c.apiServerArgs())
	if err != nil {
		return err
	}
	if err := waitFor(ctx, c.opts.StartTimeout, "kube-apiserver /readyz", p, c.apiServerReady); err != nil {
		return fmt.Errorf("cluster: kube-apiserver not ready: %w", err)
	}
	return nil
}

// apiServerReady asks /readyz as the admin: 200 means every post-start hook
// (RBAC bootstrap roles, system namespaces, priority classes…) has run.
func (c *Cluster) apiServerReady(ctx context.Context) (bool, error) {
	var status int
	res := c.Client.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).StatusCode(&status)
	if err := res.Error(); err != nil {
		return false, err
	}
	return status == http.StatusOK, nil
}

// serviceCIDRs is --service-cluster-ip-range: the IPv4 range, and the IPv6
// one after it for a DualStack cluster.
func (c *Cluster) serviceCIDRs() string {
	if c.opts.DualStack {
		return DefaultServiceCIDR + "," + DualStackServiceCIDRv6
	}
	return DefaultServiceCIDR
}

// clusterCIDRs is the controller manager's --cluster-cidr, likewise.
func (c *Cluster) clusterCIDRs() string {
	if c.opts.DualStack {
		return DefaultClusterCIDR + "," + DualStackClusterCIDRv6
	}
	return DefaultClusterCIDR
}
