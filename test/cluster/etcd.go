package cluster

import (
	"context"
	"fmt"
	"strconv"
)

// etcdArgs is a single-member etcd on 127.0.0.1 over plain HTTP. fsync is
// off: the data is thrown away with the work dir and a slow disk would
// otherwise dominate apiserver latency.
func (c *Cluster) etcdArgs() []string {
	client := "http://127.0.0.1:" + strconv.Itoa(c.Ports.EtcdClient)
	peer := "http://127.0.0.1:" + strconv.Itoa(c.Ports.EtcdPeer)
	return []string{
		"--name=default",
		"--data-dir=" + c.etcdDataDir,
		"--listen-client-urls=" + client,
		"--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=default=" + peer,
		"--initial-cluster-state=new",
		"--unsafe-no-fsync=true",
		"--snapshot-count=10000",
		"--log-level=warn",
	}
}

func (c *Cluster) etcdURL() string {
	return "http://127.0.0.1:" + strconv.Itoa(c.Ports.EtcdClient)
}

func (c *Cluster) startEtcd(ctx context.Context) error {
	p, err := c.start(Etcd, c.opts.Etcd, c.etcdArgs())
	if err != nil {
		return err
	}
	if err := waitFor(ctx, c.opts.StartTimeout, "etcd /health", p, httpOK(insecureHTTP(), c.etcdURL()+"/health")); err != nil {
		return fmt.Errorf("cluster: etcd not ready: %w", err)
	}
	return nil
}
