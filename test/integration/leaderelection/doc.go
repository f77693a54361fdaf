// Package leaderelection tests coordinated leader election
// (CoordinatedLeaderElection) end to end: the real kube-controller-manager
// and cloud-controller-manager binaries against a real kube-apiserver that
// runs the coordinated-leader-election controller, which picks the holder
// of a Lease among its LeaseCandidates.
package leaderelection
