//go:build tools

// Package tools pins kwok, the fake-node simulator used by the local cluster.
package tools

import _ "sigs.k8s.io/kwok/cmd/kwok"
