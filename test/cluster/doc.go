// Package cluster starts a complete local Kubernetes control plane from
// binaries on 127.0.0.1, the way kubeadm lays one out, for `make run`, the
// end-to-end tests, the parity harness and the benchmark.
//
// One Cluster owns a work directory holding its PKI (pki/), kubeconfigs
// (admin.conf, controller-manager.conf, scheduler.conf, kwok.conf), the etcd
// data directory, an audit policy and JSON audit log (audit.log), and one log
// file per process (logs/<component>.log). It runs, in this order:
//
//   - etcd, plain HTTP on 127.0.0.1;
//   - kube-apiserver with the kubeadm flag set (RBAC and Node authorizers,
//     service-account signing keys, front-proxy flags, service CIDR
//     10.96.0.0/16), bound to 127.0.0.1 and advertising an unused private
//     address, auditing every request of user system:kube-controller-manager
//     and of group system:serviceaccounts:kube-system at Metadata level;
//   - kube-scheduler with kubeadm's flags;
//   - kwok, managing only Nodes annotated kwok.x-k8s.io/node=fake with the
//     default stages (see CreateNodes), but for pods with one of
//     UnpullableImages, which stay Pending in ErrImagePull, and Job pods of
//     NeverEndingImages or running `sleep N` (see adjustStages);
//   - kube-controller-manager, from any binary path (ours or upstream's), with
//     exactly kubeadm's command line plus optional extra arguments. It can be
//     stopped, killed and restarted on its own.
//
// Every port is chosen free on 127.0.0.1 below the kernel's ephemeral range,
// so outgoing connections never take a port a restarted process wants back.
// Every child runs in its own process group and gets SIGKILL if the Go
// process that started it dies (Pdeathsig, Linux). Stop stops everything that
// was started, also after a partial start failure.
//
// Typical use:
//
//	c, err := cluster.Start(ctx, cluster.Options{
//		WorkDir:           t.TempDir(),
//		ControllerManager: cluster.ControllerManagerOptions{Binary: cluster.UpstreamControllerManager},
//	})
//	if err != nil { ... }
//	defer c.Stop()
//	nodes, err := c.CreateNodes(ctx, cluster.DefaultNodePrefix, 3)
//	err = c.WaitForNodesReady(ctx, nodes...)
package cluster
