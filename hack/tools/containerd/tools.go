//go:build tools

// Package tools pins containerd 2, which make e2e-node's --containerd uses:
// Debian's containerd 1.6 has no CDI, through which DRA drivers hand
// devices to containers.
package tools

import (
	_ "github.com/containerd/containerd/v2/cmd/containerd"
	_ "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2"
)
