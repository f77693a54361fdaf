// Package nodeipam implements the node-ipam-controller with upstream's
// RangeAllocator: with --allocate-node-cidrs, every Node gets spec.podCIDR
// and spec.podCIDRs, one block per --cluster-cidr (one per IP family in a
// dual-stack cluster), carved with the --node-cidr-mask-size* flags and
// never overlapping --service-cluster-ip-range.
//
// The allocation state lives only in memory: a bitmap per cluster CIDR
// (cidrset.go) and a record of what each Node holds (allocator.go). It is
// rebuilt from the Nodes in the informer cache before the first allocation,
// so a restart never hands a block out twice, and a block is released when
// its Node is gone. Blocks are handed out in upstream's order, so a Node
// gets the same podCIDR from kcm as from kube-controller-manager.
//
// validate.go holds the pure checks of the flags, shared with the
// command's startup validation.
//
// # Differences from upstream
//
//   - the occupied blocks are rebuilt from the informer cache in Run; upstream
//     LISTs the Nodes in its constructor;
//   - a garbage podCIDR on an existing Node is logged, not fatal;
//   - a block whose patch failed is never released (the patch may have been
//     written), so nothing is handed out twice;
//   - exhaustion records CIDRNotAvailable and waits for a release instead of
//     retrying in a backoff loop;
//   - the flag checks run at startup, and only where upstream would fail.
package nodeipam
